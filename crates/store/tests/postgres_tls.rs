//! TLS to the team store, against the real PostgreSQL server scripts/test.sh starts with
//! `ssl=on` and a certificate signed by a throwaway CA (`DISKTIER_TEST_PG_CA`; an unrelated CA
//! is `DISKTIER_TEST_PG_WRONG_CA`). Each sslmode is checked on the server's side
//! (`pg_stat_ssl`), and credentials never reach an error message in any form.

use disktier_store::pgconn::PgTarget;
use disktier_store::Store;

struct Pg {
    /// host:port
    addr: String,
    ca: String,
    wrong_ca: String,
}

fn pg() -> Option<Pg> {
    let vars = [
        "DISKTIER_TEST_PG",
        "DISKTIER_TEST_PG_CA",
        "DISKTIER_TEST_PG_WRONG_CA",
    ];
    if !disktier_testkit::require(
        vars.iter().all(|v| std::env::var(v).is_ok()),
        "a PostgreSQL server with TLS (DISKTIER_TEST_PG, DISKTIER_TEST_PG_CA, DISKTIER_TEST_PG_WRONG_CA; scripts/test.sh starts one)",
    ) {
        return None;
    }
    let url = std::env::var(vars[0]).unwrap();
    let addr = url
        .split_once('@')
        .map(|(_, r)| r.split('/').next().unwrap().to_string())
        .unwrap();
    Some(Pg {
        addr,
        ca: std::env::var(vars[1]).unwrap(),
        wrong_ca: std::env::var(vars[2]).unwrap(),
    })
}

/// Whether the server sees this connection as TLS.
fn server_says_tls(location: &str) -> Result<bool, String> {
    let t = PgTarget::parse(location).map_err(|e| e.to_string())?;
    let tls = t.tls().map_err(|e| e.to_string())?;
    let mut c = t
        .config
        .connect(tls)
        .map_err(|e| t.scrub(&format!("{e:?}")))?;
    let row = c
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

#[test]
fn each_sslmode_does_what_libpq_does() {
    let Some(pg) = pg() else { return };
    let a = &pg.addr;
    assert!(
        !server_says_tls(&format!("postgres://postgres@{a}/postgres?sslmode=disable")).unwrap()
    );
    // The default is libpq's: prefer, which takes TLS when the server offers it.
    assert!(server_says_tls(&format!("postgres://postgres@{a}/postgres")).unwrap());
    assert!(server_says_tls(&format!("postgres://postgres@{a}/postgres?sslmode=require")).unwrap());
    let full = format!(
        "postgres://postgres@{a}/postgres?sslmode=verify-full&sslrootcert={}",
        pg.ca
    );
    assert!(server_says_tls(&full).unwrap());
    // The same through the store, in the key=value form too.
    let (host, port) = a.split_once(':').unwrap();
    Store::open(Some(&full)).unwrap();
    Store::open(Some(&format!(
        "host={host} port={port} user=postgres dbname=postgres sslmode=verify-full sslrootcert='{}'",
        pg.ca
    )))
    .unwrap();
    // A certificate from another CA: verify-full and verify-ca refuse, naming the cause.
    for mode in ["verify-full", "verify-ca"] {
        let wrong = format!(
            "postgres://postgres:s3cret@{a}/postgres?sslmode={mode}&sslrootcert={}",
            pg.wrong_ca
        );
        let e = Store::open(Some(&wrong)).err().unwrap().to_string();
        assert!(e.to_lowercase().contains("certificate"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        // require with a root certificate checks the chain, as libpq does.
        let e = Store::open(Some(&format!(
            "postgres://postgres@{a}/postgres?sslmode=require&sslrootcert={}",
            pg.wrong_ca
        )))
        .err()
        .unwrap()
        .to_string();
        assert!(e.to_lowercase().contains("certificate"), "{e}");
    }
    // A host name the certificate does not carry: verify-ca accepts, verify-full refuses.
    let named = |mode: &str| {
        format!(
            "host=not-in-the-cert hostaddr={host} port={port} user=postgres dbname=postgres sslmode={mode} sslrootcert={}",
            pg.ca
        )
    };
    assert!(server_says_tls(&named("verify-ca")).unwrap());
    let e = server_says_tls(&named("verify-full")).unwrap_err();
    assert!(
        e.to_lowercase().contains("name") || e.contains("NotValidForName"),
        "{e}"
    );
    // verify-* without a readable root certificate is an error naming sslrootcert.
    let e = Store::open(Some(&format!(
        "postgres://postgres@{a}/postgres?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
    )))
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("/nonexistent/ca.pem") && e.contains("sslrootcert"),
        "{e}"
    );
}

#[test]
fn no_credential_form_reaches_an_error() {
    let Some(pg) = pg() else { return };
    let a = &pg.addr;
    let (host, port) = a.split_once(':').unwrap();
    let secret = "Hunter2Zq";
    // Each form, against a database that does not exist (the server answers with an error)
    // and against a port nobody listens on (the connection fails).
    let dead = "127.0.0.1:1";
    for addr in [a.as_str(), dead] {
        let (h, p) = addr.split_once(':').unwrap();
        let forms = [
            format!("postgres://postgres:{secret}@{addr}/nope_db"),
            format!("postgresql://postgres@{addr}/nope_db?password={secret}"),
            format!("postgres://postgres@{addr}/nope_db?sslmode=disable&password={secret}&application_name=x"),
            format!("host={h} port={p} user=postgres password={secret} dbname=nope_db"),
            format!("host={h} port={p} user=postgres password='{secret} x' dbname=nope_db"),
            // QA: `#` and `?` unencoded in the password (the driver takes them) were shown.
            format!("postgres://postgres:Qx7#{secret}@{addr}/nope_db"),
            format!("postgres://postgres:Qx7?{secret}@{addr}/nope_db?sslmode=disable"),
            format!("postgres://postgres:Qx7@{secret}/:#@{addr}/nope_db"),
        ];
        for f in forms {
            let e = Store::open(Some(&f)).err().unwrap();
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains(secret), "{f}: {shown}");
            assert!(!shown.contains("Qx7"), "{f}: {shown}");
            assert!(shown.contains("***"), "{f}: {shown}");
        }
    }
    let _ = (host, port);
}
