//! Unit tests of `pgconn.rs`.

use super::*;

#[test]
fn every_credential_form_is_redacted() {
    let cases = [
        (
            "postgres://app:hunter2@db:5432/x",
            "postgres://app:***@db:5432/x",
        ),
        ("postgres://app@db/x", "postgres://app@db/x"),
        (
            "postgresql://a:p%40ss@db/x?sslmode=require",
            "postgresql://a:***@db/x?sslmode=require",
        ),
        (
            "postgres://app@db/x?password=hunter2",
            "postgres://app@db/x?password=***",
        ),
        (
            "postgres://db/x?sslmode=require&password=hunter2&application_name=d",
            "postgres://db/x?sslmode=require&password=***&application_name=d",
        ),
        (
            "postgres://db/x?pass%77ord=hunter2",
            "postgres://db/x?pass%77ord=***",
        ),
        (
            "host=db user=app password=hunter2 dbname=x",
            "host=db user=app password=*** dbname=x",
        ),
        (
            "host=db password = 'hun ter\\'2' dbname=x",
            "host=db password=*** dbname=x",
        ),
        ("host=db PASSWORD=hunter2", "host=db PASSWORD=***"),
        (
            "host=db password='hunter2",
            "<a connection string with a password (hidden)>",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
        assert!(!redact(input).contains("hunter2"), "{input}");
    }
}

/// Regression (QA): a password holding `#` or `?` unencoded (which the driver takes) was
/// shown in clear, the URL cut at the `#`/`?` before its `@` was looked for; one holding `@`,
/// `/` and `:` too left 11 of its 13 characters shown.
#[test]
fn a_password_with_url_delimiters_is_redacted_whole() {
    let cases = [
        (
            "postgres://qb:Hunter#2@127.0.0.1:55439/qa2",
            "postgres://qb:***@127.0.0.1:55439/qa2",
            "Hunter#2",
        ),
        (
            "postgres://qa:Hunter#2secret@127.0.0.1:55439/qa",
            "postgres://qa:***@127.0.0.1:55439/qa",
            "Hunter#2secret",
        ),
        (
            "postgres://qa:Hunter?2secret@127.0.0.1:55439/qa",
            "postgres://qa:***@127.0.0.1:55439/qa",
            "Hunter?2secret",
        ),
        (
            "postgres://qa:p@ss:w/rd?&=#@127.0.0.1:55439/qa",
            "postgres://qa:***@127.0.0.1:55439/qa",
            "p@ss:w/rd?&=#",
        ),
        (
            "postgresql://qa:pa?ss@h/db?sslmode=require&password=other#x",
            "postgresql://qa:***@h/db?sslmode=require&password=***",
            "pa?ss",
        ),
    ];
    for (input, want, pw) in cases {
        let shown = redact(input);
        assert_eq!(shown, want, "{input}");
        // No piece of the password longer than two characters survives.
        for piece in pw.split(|c: char| !c.is_ascii_alphanumeric()) {
            assert!(
                piece.len() < 3 || !shown.contains(piece),
                "{input} -> {shown}"
            );
        }
        assert!(secrets_of(input).iter().any(|s| s == pw), "{input}");
    }
    // An `@` in the query, or a userinfo that is no `user:password`: hidden whole rather than
    // read as a user and shown.
    assert_eq!(
        redact("postgres://h/db?password=hunter2&x=a@b"),
        "postgres://***@b"
    );
    assert!(!PgTarget::parse("postgres://h/db?password=hunter2&x=a@b")
        .map(|t| t.scrub("user h/db?password=hunter2&x=a"))
        .unwrap_or_default()
        .contains("hunter2"));
}

/// The query is read after the host, so `sslmode` is taken from it whatever `?` the password
/// holds (cut at the password's `?`, the query's first parameter was read as one named
/// `ss@127.0.0.1/db?sslmode`, and the sslmode was not disktier's).
#[test]
fn the_query_starts_after_the_host() {
    let t = PgTarget::parse("postgres://u:pa?ss@127.0.0.1/db?sslmode=verify-full").unwrap();
    assert_eq!(t.ssl, SslMode::VerifyFull);
    assert_eq!(t.config.get_password(), Some(&b"pa?ss"[..]));
    assert_eq!(t.config.get_dbname(), Some("db"));
    let t = PgTarget::parse("postgres://qb:Hunter#2@127.0.0.1:55439/qa2").unwrap();
    assert_eq!(t.config.get_password(), Some(&b"Hunter#2"[..]));
    assert_eq!(t.shown, "postgres://qb:***@127.0.0.1:55439/qa2");
    assert_eq!(t.scrub("password Hunter#2 refused"), "password *** refused");
}

#[test]
fn sslmode_and_rootcert_are_taken_out_and_understood() {
    let t = PgTarget::parse(
        "postgres://u:secret@127.0.0.1:5/db?sslmode=verify-full&sslrootcert=/x/ca.pem",
    )
    .unwrap();
    assert_eq!(t.ssl, SslMode::VerifyFull);
    assert_eq!(
        t.root_cert.as_deref(),
        Some(std::path::Path::new("/x/ca.pem"))
    );
    assert_eq!(t.config.get_password(), Some(&b"secret"[..]));
    let t = PgTarget::parse("host=127.0.0.1 sslmode=verify-ca password='a b'").unwrap();
    assert_eq!(t.ssl, SslMode::VerifyCa);
    assert_eq!(t.config.get_password(), Some(&b"a b"[..]));
    assert_eq!(
        PgTarget::parse("postgres://h/db").unwrap().ssl,
        SslMode::Prefer
    );
    let e = PgTarget::parse("postgres://u:secret@h/db?sslmode=bogus")
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("bogus") && !e.to_string().contains("secret"),
        "{e}"
    );
    let e = PgTarget::parse("postgres://h/db?sslcert=/c.pem")
        .err()
        .unwrap();
    assert!(e.to_string().contains("sslcert"), "{e}");
    // tokio-postgres's own parse errors never show the password.
    let e = PgTarget::parse("postgres://u:secret@h:notaport/db")
        .err()
        .unwrap();
    assert!(!e.to_string().contains("secret"), "{e}");
    let e = PgTarget::parse("host=h password=secret port=x")
        .err()
        .unwrap();
    assert!(!e.to_string().contains("secret"), "{e}");
}

#[test]
fn conninfo_is_told_from_a_path() {
    assert!(is_postgres("postgres://h/db"));
    assert!(is_postgres("host=h dbname=x"));
    assert!(is_postgres(" dbname = x"));
    assert!(!is_postgres("/var/lib/x=y.db"));
    assert!(!is_postgres("results.db"));
    assert!(!is_postgres("foo=bar"));
}

/// libpq's `connect_timeout=0` waits indefinitely. The driver reads 0 as "not set", and
/// disktier's 10 s default then replaced what the user asked for (session 21's left item).
#[test]
fn connect_timeout_zero_waits_as_libpq_does() {
    for s in [
        "postgres://u@127.0.0.1/db?connect_timeout=0",
        "host=127.0.0.1 connect_timeout=0",
        "host=127.0.0.1 connect_timeout=-5",
    ] {
        let t = PgTarget::parse(s).unwrap();
        assert_eq!(t.connect_timeout, None, "{s}");
        assert_eq!(t.config.get_connect_timeout(), None, "{s}");
    }
    let t = PgTarget::parse("postgres://u@127.0.0.1/db?connect_timeout=3").unwrap();
    assert_eq!(t.connect_timeout, Some(Duration::from_secs(3)));
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(3))
    );
    let t = PgTarget::parse("postgres://u@127.0.0.1/db").unwrap();
    assert_eq!(t.connect_timeout, Some(DEFAULT_CONNECT_TIMEOUT));
    let e = PgTarget::parse("host=127.0.0.1 connect_timeout=soon")
        .err()
        .unwrap();
    assert!(e.to_string().contains("connect_timeout \"soon\""), "{e}");
}
