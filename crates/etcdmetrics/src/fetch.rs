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

/// A reusable client.
pub struct Client {
    agent: ureq::Agent,
}

/// Connect timeout, and the limit for a whole request (etcd answers /metrics in milliseconds).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::ReadFile {
        path: path.display().to_string(),
        source,
    })
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
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::BadUrl(url.to_string()));
        }
        let url = metrics_url(url);
        let url = url.as_str();
        let http = |source: ureq::Error| Error::Http {
            url: url.to_string(),
            source: Box::new(source),
        };
        let mut resp = self.agent.get(url).call().map_err(http)?;
        let status = resp.status().as_u16();
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
