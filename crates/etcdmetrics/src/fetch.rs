//! Fetching `/metrics` from an etcd member over plain HTTP or TLS, with the options etcdctl
//! uses (`--cacert`, `--cert`, `--key`): a blocking client (ureq on rustls) with a connect and an
//! overall timeout, a body cap of [`crate::expo::MAX_BODY_BYTES`], and no redirects.

use crate::error::Error;
use crate::expo::MAX_BODY_BYTES;
use std::path::{Path, PathBuf};
use std::time::Duration;
use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

/// How to reach the members.
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    /// CA bundle that signed the members' server certificates (etcdctl `--cacert`).
    pub cacert: Option<PathBuf>,
    /// Client certificate and key (etcdctl `--cert`, `--key`), when the member requires them.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// A reusable client (a clone shares its connections).
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
}

/// Connect timeout, and the limit for a whole request (etcd answers /metrics in milliseconds).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The most of a `--cacert`, `--cert` or `--key` file read: a PEM bundle of every CA a
/// distribution trusts is about 220 KiB (Debian's /etc/ssl/certs/ca-certificates.crt); past
/// this it is no certificate file (QA: `--cacert /dev/zero` read until memory ran out, 900 MiB
/// in 5 s). A pipe (`--cacert <(kubectl ...)`) is still read, up to this.
pub const MAX_PEM_BYTES: u64 = 4 << 20;

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PEM_BYTES + 1).read_to_end(&mut buf))
        .map_err(|source| Error::ReadFile {
            path: path.display().to_string(),
            source,
        })?;
    if buf.len() as u64 > MAX_PEM_BYTES {
        return Err(Error::PemTooLarge {
            path: path.display().to_string(),
            max_mib: MAX_PEM_BYTES >> 20,
        });
    }
    Ok(buf)
}

fn certs(path: &Path) -> Result<Vec<Certificate<'static>>, Error> {
    let pem = read(path)?;
    let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(&pem)
        .filter_map(|i| match i {
            Ok(PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(Error::Pem {
            path: path.display().to_string(),
            what: "certificate",
        });
    }
    Ok(certs)
}

fn key(path: &Path) -> Result<PrivateKey<'static>, Error> {
    let pem = read(path)?;
    let key = ureq::tls::parse_pem(&pem).find_map(|i| match i {
        Ok(PemItem::PrivateKey(k)) => Some(k),
        _ => None,
    });
    key.ok_or(Error::Pem {
        path: path.display().to_string(),
        what: "private key",
    })
}

impl Client {
    pub fn new(tls: &TlsFiles) -> Result<Client, Error> {
        let mut b = TlsConfig::builder();
        if let Some(ca) = &tls.cacert {
            b = b.root_certs(RootCerts::new_with_certs(&certs(ca)?));
        }
        match (&tls.cert, &tls.key) {
            (Some(c), Some(k)) => {
                b = b.client_cert(Some(ClientCert::new_with_certs(&certs(c)?, key(k)?)));
            }
            (None, None) => {}
            _ => return Err(Error::CertWithoutKey),
        }
        let agent = ureq::Agent::config_builder()
            .tls_config(b.build())
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_global(Some(REQUEST_TIMEOUT))
            .max_redirects(0)
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Client { agent })
    }

    /// GETs `url` and returns its body (at most [`MAX_BODY_BYTES`]). A URL with no path (a
    /// member's client URL as etcdctl takes it) is read at `/metrics`, where etcd serves them.
    pub fn get(&self, url: &str) -> Result<String, Error> {
        let Some(url) = with_lowercase_scheme(url) else {
            return Err(Error::BadUrl(redacted(url)));
        };
        let target = metrics_url(&url);
        // The password of a URL's user information (sent as Basic authentication) is not
        // repeated in errors: they reach terminals, logs and fleet's termination messages.
        let shown = redacted(&target);
        let url = shown.as_str();
        let http = |source: ureq::Error| Error::Http {
            url: url.to_string(),
            hint: hint(&source),
            source: Box::new(source),
        };
        let mut resp = self.agent.get(&target).call().map_err(http)?;
        let status = resp.status().as_u16();
        // QA: a redirect (a proxy's http -> https, a path moved) said only "answered HTTP 301".
        if let Some(location) = resp
            .status()
            .is_redirection()
            .then(|| resp.headers().get("location"))
            .flatten()
        {
            return Err(Error::Redirect {
                url: url.to_string(),
                status,
                location: String::from_utf8_lossy(location.as_bytes())
                    .chars()
                    .take(200)
                    .collect(),
            });
        }
        if status != 200 {
            return Err(Error::Status {
                url: url.to_string(),
                status,
            });
        }
        resp.body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES as u64)
            .read_to_string()
            .map_err(http)
    }
}

/// What a failed request most likely means, with what to check: the client's own words
/// ("timeout: global", "Connection refused") name neither the cause nor the fix.
pub fn hint(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind;
    use ureq::Timeout;
    match e {
        ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => {
            "no connection within 5 s: is the address reachable from this node, and is this the member's metrics or client URL?"
        }
        ureq::Error::Timeout(_) => {
            "no complete answer within 20 s (etcd serves /metrics in milliseconds): is this an etcd member's /metrics, and is the member overloaded or stopped?"
        }
        ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
            "cannot connect: is etcd running there, and is this its --listen-metrics-urls (e.g. http://127.0.0.1:2381/metrics) or client URL?"
        }
        ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
            "nothing listens there: is etcd running, and is this its --listen-metrics-urls (e.g. http://127.0.0.1:2381/metrics) or client URL?"
        }
        ureq::Error::Io(io) if io.kind() == ErrorKind::InvalidData => {
            "the answer is not text: is this an etcd member's /metrics?"
        }
        ureq::Error::BodyExceedsLimit(_) => {
            "the answer is over 16 MiB (an etcd member's /metrics is 100-300 KiB): is this an etcd member's /metrics?"
        }
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => {
            "the TLS handshake failed: give the CA that signed the member's certificate with --cacert, and a client certificate with --cert and --key if the member requires one"
        }
        _ => "could not be read",
    }
}

/// The `--metrics` list checked before anything is read: each URL without the blanks around it
/// (QA: "URL1, URL2" said " URL2 is not an http:// or https:// URL"), no empty entry (a doubled
/// or trailing comma said " is not an http:// ... URL"), each an http:// or https:// URL, and no
/// member twice (its verdicts would be counted twice).
pub fn member_urls(list: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for (i, raw) in list.iter().enumerate() {
        let url = raw.trim();
        if url.is_empty() {
            return Err(Error::EmptyUrl { position: i + 1 });
        }
        let Some(url) = with_lowercase_scheme(url) else {
            return Err(Error::BadUrl(redacted(url)));
        };
        if out.iter().any(|u| metrics_url(u) == metrics_url(&url)) {
            return Err(Error::DuplicateUrl(redacted(&url)));
        }
        out.push(url);
    }
    Ok(out)
}

/// `url` with its scheme in lower case, when it is http or https in any case (RFC 3986 3.1:
/// "schemes are case-insensitive"; QA: `HTTP://host:2381/metrics` was refused as "not an
/// http:// or https:// URL"); `None` for any other scheme.
fn with_lowercase_scheme(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    (scheme == "http" || scheme == "https").then(|| format!("{scheme}://{rest}"))
}

/// `url` as it is shown: the password of its user information (`http://user:PASSWORD@host/`,
/// which the client sends as Basic authentication) replaced by `xxxxx`, as Go's
/// `url.URL.Redacted` shows it (QA: `--metrics http://user:s3cret@host:2381/metrics` printed the
/// password in every verdict line, in errors and in the JSON document).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:xxxxx@{host}{tail}"),
        None => url.to_string(),
    }
}

/// `http://host:port` and `http://host:port/` become `.../metrics`; a URL with a path is kept.
pub fn metrics_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        None => format!("{url}/metrics"),
        Some(i) if rest[i..] == *"/" => format!("{url}metrics"),
        Some(_) => url.to_string(),
    }
}

#[cfg(test)]
mod url_tests {
    use super::metrics_url;

    #[test]
    fn a_url_nothing_listens_on_says_what_to_check() {
        // The error used to be "http://127.0.0.1:N/metrics: io: Connection refused": no fix.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/metrics");
        let e = super::Client::new(&Default::default())
            .unwrap()
            .get(&url)
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with(&url), "{msg}");
        assert!(msg.contains("is etcd running"), "{msg}");
        assert!(msg.contains("--listen-metrics-urls"), "{msg}");
    }

    /// QA: "URL1, URL2" (a space after the comma) was refused as " URL2 is not an http:// or
    /// https:// URL", and "URL," as " is not ...", naming nothing.
    #[test]
    fn the_url_list_is_trimmed_and_empty_or_repeated_urls_are_named() {
        use super::member_urls;
        let list = |s: &str| s.split(',').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            member_urls(&list("http://a:2381/metrics, https://b:2379 ")).unwrap(),
            ["http://a:2381/metrics", "https://b:2379"]
        );
        let e = member_urls(&list("http://a:2381/metrics,"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("URL 2 of --metrics is empty"), "{e}");
        let e = member_urls(&list("http://a:2379,http://a:2379/metrics")).unwrap_err();
        assert!(
            e.to_string()
                .contains("http://a:2379/metrics is given twice"),
            "{e}"
        );
        let e = member_urls(&list("a:2379")).unwrap_err().to_string();
        assert_eq!(e, "\"a:2379\" is not an http:// or https:// URL");
        // Schemes are case-insensitive (QA: HTTP:// was refused); one member in two cases is
        // one member.
        assert_eq!(
            member_urls(&list("HTTP://a:2381/metrics,Https://b:2379")).unwrap(),
            ["http://a:2381/metrics", "https://b:2379"]
        );
        let e = member_urls(&list("http://a:2379,HTTP://a:2379")).unwrap_err();
        assert!(e.to_string().contains("given twice"), "{e}");
        let e = member_urls(&list("ftp://a:2379")).unwrap_err().to_string();
        assert_eq!(e, "\"ftp://a:2379\" is not an http:// or https:// URL");
    }

    /// QA: a member behind a redirect (a proxy's http -> https) said "answered HTTP 301: give
    /// the member's metrics URL", not where it was sent; the redirect is still not followed.
    #[test]
    fn a_redirect_names_where_it_points() {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/metrics", l.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(
                b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://10.0.0.5:2379/metrics\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        });
        let e = super::Client::new(&Default::default())
            .unwrap()
            .get(&url)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "{url} answered HTTP 301, a redirect to \"https://10.0.0.5:2379/metrics\", which is not followed"
            )),
            "{e}"
        );
    }

    /// QA on dt-s24: `check etcd --metrics https://... --cacert /dev/zero` read until memory ran
    /// out (900 MiB in 5 s); a file past the cap is now refused, naming it and the cap.
    #[test]
    fn a_certificate_file_past_the_cap_is_refused_not_read_whole() {
        let d = tempfile::tempdir().unwrap();
        let big = d.path().join("ca.pem");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(super::MAX_PEM_BYTES + 1).unwrap();
        for path in [big, "/dev/zero".into()] {
            let tls = super::TlsFiles {
                cacert: Some(path.clone()),
                ..Default::default()
            };
            let Err(e) = super::Client::new(&tls) else {
                panic!("{} was taken as a CA bundle", path.display());
            };
            assert_eq!(
                e.to_string(),
                format!(
                    "{} is larger than 4 MiB, which no PEM certificate or key file is: pass the file etcdctl takes as --cacert, --cert or --key",
                    path.display()
                )
            );
        }
    }

    /// QA: the password of `http://user:s3cret@host/metrics` (which ureq sends as Basic
    /// authentication) was printed in every line, error and JSON document naming the member.
    #[test]
    fn a_urls_password_is_not_shown() {
        use super::redacted;
        assert_eq!(
            redacted("http://user:s3cret@127.0.0.1:2381/metrics"),
            "http://user:xxxxx@127.0.0.1:2381/metrics"
        );
        assert_eq!(
            redacted("https://u:p@ss:w@rd@h:2379?q=a:b@c"),
            "https://u:xxxxx@h:2379?q=a:b@c"
        );
        for kept in [
            "http://user@h/metrics",
            "http://h:2381/a@b:c",
            "http://[::1]:2381/metrics",
            "not a url",
        ] {
            assert_eq!(redacted(kept), kept);
        }
        // An error names the member without it, and the password is still sent.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let e = super::Client::new(&Default::default())
            .unwrap()
            .get(&format!("http://user:s3cret@127.0.0.1:{port}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("http://user:xxxxx@127.0.0.1:{port}/metrics: ")),
            "{e}"
        );
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn a_client_url_is_read_at_metrics() {
        assert_eq!(
            metrics_url("http://127.0.0.1:2379"),
            "http://127.0.0.1:2379/metrics"
        );
        assert_eq!(
            metrics_url("https://10.0.0.1:2379/"),
            "https://10.0.0.1:2379/metrics"
        );
        assert_eq!(
            metrics_url("http://127.0.0.1:2381/metrics"),
            "http://127.0.0.1:2381/metrics"
        );
        assert_eq!(metrics_url("http://h/custom/path"), "http://h/custom/path");
    }
}
