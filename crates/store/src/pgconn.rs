//! Where a PostgreSQL store is and how to reach it: the connection string (a `postgres://` URL
//! or a libpq `key=value` string), TLS with libpq's `sslmode` semantics, and redaction of every
//! credential form from whatever is shown.
//!
//! `sslmode` follows libpq (PostgreSQL docs, "SSL Support" / "Protection Provided in Different
//! Modes", <https://www.postgresql.org/docs/current/libpq-ssl.html>):
//!
//! | sslmode | TLS | server certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `allow`, `prefer` (the default) | when the server offers it, else plain | not checked |
//! | `require` | always | not checked, unless `sslrootcert` is given: then as `verify-ca` |
//! | `verify-ca` | always | chain checked against `sslrootcert` |
//! | `verify-full` | always | chain and host name (or IP) checked |
//!
//! `sslrootcert` is a PEM file; without it `verify-*` use `~/.postgresql/root.crt` like libpq,
//! and `sslrootcert=system` uses the system's CA bundle. Client certificates (`sslcert`,
//! `sslkey`) are refused with a clear error rather than ignored. `allow` tries TLS first (libpq
//! tries plain first); neither checks the certificate, so they protect only against passive
//! listening.

use crate::error::{Result, StoreError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::RootCertStore;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use verify::ServerCheck;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

/// How long a connection attempt may take when the string sets no `connect_timeout`: a store
/// that does not answer must not hold up the run (its result is spooled instead).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// libpq's `connect_timeout=SECONDS`: a decimal integer; zero or negative waits indefinitely
/// (libpq's documentation, "Parameter Key Words"). The driver would take 0 as unset, and
/// disktier's 10 s default would then replace what the user asked for.
pub fn parse_connect_timeout(v: &str) -> Result<Option<Duration>, String> {
    match v.trim().parse::<i64>() {
        Ok(s) if s <= 0 => Ok(None),
        Ok(s) => Ok(Some(Duration::from_secs(s as u64))),
        Err(_) => Err(format!(
            "connect_timeout {v:?} is not a whole number of seconds (0 waits as long as the server takes): correct it"
        )),
    }
}

/// A parsed PostgreSQL location, ready to connect.
pub struct PgTarget {
    pub config: postgres::Config,
    pub ssl: SslMode,
    pub root_cert: Option<PathBuf>,
    /// How long one operation may take (`query_timeout`, [`crate::pgsession`]); `None`: no limit.
    pub query_timeout: Option<Duration>,
    /// How long connecting to one host may take (`connect_timeout`, [`DEFAULT_CONNECT_TIMEOUT`]
    /// when the location sets none); `None`: no limit (`connect_timeout=0`, as libpq).
    pub connect_timeout: Option<Duration>,
    /// The location as shown in messages: every credential replaced by `***`.
    pub shown: String,
    /// Secrets to scrub from any message that could echo them.
    secrets: Vec<String>,
}

/// Whether `s` names a PostgreSQL store rather than a SQLite file: a `postgres://` or
/// `postgresql://` URL, or a libpq `key=value` string whose first key is a libpq keyword.
pub fn is_postgres(s: &str) -> bool {
    if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        return true;
    }
    let first = s.trim_start();
    let key: String = first
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    !key.is_empty()
        && first[key.len()..].trim_start().starts_with('=')
        && matches!(
            key.as_str(),
            "host"
                | "hostaddr"
                | "port"
                | "dbname"
                | "user"
                | "password"
                | "sslmode"
                | "sslrootcert"
                | "options"
                | "application_name"
                | "connect_timeout"
                | "query_timeout"
        )
}

/// A URL's parts after `scheme://`: the userinfo, which ends at the last `@` (a password may
/// hold `@`, `/`, `?`, `#` and `:` unencoded, and the driver takes such a URL: `?` and `#` in a
/// password must not be read as the start of the query), and the rest, host onwards.
struct UrlParts<'a> {
    userinfo: Option<&'a str>,
    host_on: &'a str,
}

impl<'a> UrlParts<'a> {
    fn of(rest: &'a str) -> UrlParts<'a> {
        match rest.rfind('@') {
            Some(at) => UrlParts {
                userinfo: Some(&rest[..at]),
                host_on: &rest[at + 1..],
            },
            None => UrlParts {
                userinfo: None,
                host_on: rest,
            },
        }
    }

    /// The user and whether a password follows it; `None` when the userinfo is no plain
    /// `user[:password]` (a `/`, `?` or `#` in the user: the `@` belonged to a path or query,
    /// or the URL is malformed), which is then hidden whole.
    fn user(&self) -> Option<(&'a str, bool)> {
        let info = self.userinfo?;
        let (user, pw) = match info.split_once(':') {
            Some((u, _)) => (u, true),
            None => (info, false),
        };
        (!user.contains(['/', '?', '#'])).then_some((user, pw))
    }

    /// The password of the userinfo (everything after the user's `:`).
    fn password(&self) -> Option<&'a str> {
        self.userinfo?.split_once(':').map(|(_, p)| p)
    }

    /// The host, port and database, and the query (from the first `?` or `#` after the host).
    fn query_split(&self) -> (&'a str, Option<&'a str>) {
        match self.host_on.find(['?', '#']) {
            Some(i) => (&self.host_on[..i], Some(&self.host_on[i..])),
            None => (self.host_on, None),
        }
    }
}

/// `s` with every credential replaced by `***`: the password of a URL's `user:password@` (up
/// to the last `@`, whatever `?`, `#`, `/` or `:` the password holds), a
/// `?password=`/`&password=` (and `sslpassword`) query parameter, and a `password=` (quoted or
/// not) of a `key=value` string. What cannot be parsed but mentions a password is hidden whole,
/// as is a userinfo that is no plain `user:password`.
pub fn redact(s: &str) -> String {
    if let Some((scheme, rest)) = s.split_once("://") {
        let url = UrlParts::of(rest);
        let mut out = format!("{scheme}://");
        match (url.userinfo, url.user()) {
            (None, _) => {}
            (Some(_), Some((user, true))) => out.push_str(&format!("{user}:***@")),
            (Some(_), Some((user, false))) => out.push_str(&format!("{user}@")),
            (Some(_), None) => out.push_str("***@"),
        }
        let (base, query) = url.query_split();
        out.push_str(base);
        if let Some(q) = query {
            let (sep, body) = q.split_at(1);
            out.push_str(sep);
            let parts: Vec<String> = body
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if is_secret_key(&percent_decode(k)) => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            out.push_str(&parts.join("&"));
        }
        return out;
    }
    if s.contains('=') {
        return match conninfo_pairs(s) {
            Some(pairs) => pairs
                .iter()
                .map(|(k, v)| {
                    if is_secret_key(k) {
                        format!("{k}=***")
                    } else {
                        format!("{k}={}", quote_conninfo(v))
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            None if s.to_ascii_lowercase().contains("password") => {
                "<a connection string with a password (hidden)>".to_string()
            }
            None => s.to_string(),
        };
    }
    s.to_string()
}

fn quote_conninfo(v: &str) -> String {
    if !v.is_empty() && !v.contains([' ', '\'', '\\', '\t', '\n']) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The pairs of a libpq `key=value` string (values optionally single-quoted, with `\'` and
/// `\\` escapes), or None when it does not parse.
pub fn conninfo_pairs(s: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.peek().is_none() {
            return Some(out);
        }
        let mut key = String::new();
        while let Some(&c) = it.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            it.next();
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if key.is_empty() || it.next() != Some('=') {
            return None;
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        let mut val = String::new();
        if it.peek() == Some(&'\'') {
            it.next();
            loop {
                match it.next()? {
                    '\\' => val.push(it.next()?),
                    '\'' => break,
                    c => val.push(c),
                }
            }
        } else {
            while let Some(&c) = it.peek() {
                if c.is_whitespace() {
                    break;
                }
                if c == '\\' {
                    it.next();
                    val.push(it.next()?);
                } else {
                    val.push(c);
                    it.next();
                }
            }
        }
        out.push((key, val));
    }
}

impl PgTarget {
    /// Parses a URL or `key=value` string, taking out what libpq has and tokio-postgres lacks
    /// (`sslmode` beyond require, `sslrootcert`).
    pub fn parse(s: &str) -> Result<PgTarget> {
        let shown = redact(s);
        let bad = |why: String| StoreError::BadLocation {
            location: shown.clone(),
            why,
        };
        let mut ssl = SslMode::Prefer;
        let mut root_cert = None;
        let mut query_timeout = Some(crate::pgsession::DEFAULT_QUERY_TIMEOUT);
        let mut connect_timeout = Some(DEFAULT_CONNECT_TIMEOUT);
        let mut take = |k: &str, v: &str| -> Result<bool> {
            match k {
                "sslmode" => {
                    ssl = SslMode::parse(v).ok_or_else(|| {
                        bad(format!(
                            "sslmode {v:?} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                        ))
                    })?;
                    Ok(true)
                }
                "sslrootcert" => {
                    root_cert = Some(PathBuf::from(v));
                    Ok(true)
                }
                "query_timeout" => {
                    query_timeout = crate::pgsession::parse_limit(v).map_err(&bad)?;
                    Ok(true)
                }
                "connect_timeout" => {
                    connect_timeout = parse_connect_timeout(v).map_err(&bad)?;
                    Ok(true)
                }
                "sslcert"
                | "sslkey"
                | "sslpassword"
                | "sslcrl"
                | "sslcrldir"
                | "sslsni"
                | "requiressl"
                | "sslcompression"
                | "ssl_min_protocol_version"
                | "ssl_max_protocol_version"
                | "gssencmode"
                | "passfile" => Err(bad(format!(
                    "{k} is not supported by disktier (only sslmode and sslrootcert are): remove it"
                ))),
                _ => Ok(false),
            }
        };
        let rest = if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            // The query starts after the host: a `?` in the password is the password's.
            let (_, rest) = s.split_once("://").unwrap_or_default();
            let host_at = s.len() - UrlParts::of(rest).host_on.len();
            match s[host_at..].split_once('?') {
                None => s.to_string(),
                Some((host_on, q)) => {
                    let base = format!("{}{host_on}", &s[..host_at]);
                    let mut kept = Vec::new();
                    for kv in q.split('&').filter(|kv| !kv.is_empty()) {
                        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                        if !take(&percent_decode(k), &percent_decode(v))? {
                            kept.push(kv);
                        }
                    }
                    if kept.is_empty() {
                        base
                    } else {
                        format!("{base}?{}", kept.join("&"))
                    }
                }
            }
        } else {
            let pairs = conninfo_pairs(s).ok_or_else(|| {
                bad("the key=value string does not parse (an unclosed quote?)".into())
            })?;
            let mut kept = Vec::new();
            for (k, v) in pairs {
                if !take(&k, &v)? {
                    kept.push(format!("{k}={}", quote_conninfo(&v)));
                }
            }
            kept.join(" ")
        };
        let mut secrets = Vec::new();
        // The parser's own messages could echo a piece of the string: scrub its secrets.
        if let Some(why) = crate::pgerror::misread_url(s) {
            return Err(bad(why));
        }
        let mut config = postgres::Config::from_str(&rest)
            .map_err(|e| bad(scrub(&crate::pgerror::unparsed(&e), &secrets_of(s))))?;
        if let Some(p) = config.get_password() {
            let p = String::from_utf8_lossy(p).into_owned();
            secrets.push(p);
        }
        secrets.extend(secrets_of(s));
        if let Some(limit) = connect_timeout {
            config.connect_timeout(limit);
        }
        config.ssl_mode(match ssl {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Allow | SslMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        Ok(PgTarget {
            config,
            ssl,
            root_cert,
            query_timeout,
            connect_timeout,
            shown,
            secrets,
        })
    }

    /// `msg` with this location's secrets replaced by `***`.
    pub fn scrub(&self, msg: &str) -> String {
        scrub(msg, &self.secrets)
    }

    /// The TLS connector for this sslmode.
    pub fn tls(&self) -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verify = match self.ssl {
            SslMode::VerifyCa | SslMode::VerifyFull => true,
            SslMode::Require => self.root_cert.is_some(),
            _ => false,
        };
        let chain = if verify {
            let roots = Arc::new(self.roots()?);
            let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots,
                provider.clone(),
            )
            .build()
            .map_err(|e| StoreError::Tls {
                location: self.shown.clone(),
                why: e.to_string(),
            })?;
            Some(inner)
        } else {
            None
        };
        let verifier = Arc::new(ServerCheck {
            provider: provider.clone(),
            chain,
            check_name: self.ssl == SslMode::VerifyFull,
        });
        let cfg = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| StoreError::Tls {
                location: self.shown.clone(),
                why: e.to_string(),
            })?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(tokio_postgres_rustls::MakeRustlsConnect::new(cfg))
    }

    fn roots(&self) -> Result<RootCertStore> {
        let path = match &self.root_cert {
            Some(p) if p.as_os_str() == "system" => {
                PathBuf::from("/etc/ssl/certs/ca-certificates.crt")
            }
            Some(p) => p.clone(),
            None => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
                .unwrap_or_else(|| PathBuf::from("~/.postgresql/root.crt")),
        };
        let bad = |why: String| StoreError::Tls {
            location: self.shown.clone(),
            why,
        };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&path)
            .map_err(|e| {
                bad(format!(
                    "cannot read the root certificate {} for sslmode verify: {e} (give one with sslrootcert=FILE)",
                    path.display()
                ))
            })?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let mut roots = RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(bad(format!(
                "{} holds no usable PEM certificate",
                path.display()
            )));
        }
        Ok(roots)
    }
}

/// The credential values a string carries in any form (raw and percent-encoded).
fn secrets_of(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |v: &str| {
        out.push(v.to_string());
        out.push(percent_decode(v));
    };
    if let Some((_, rest)) = s.split_once("://") {
        let url = UrlParts::of(rest);
        match (url.user(), url.userinfo) {
            // Not a plain user: the whole userinfo is hidden, so it is scrubbed whole too.
            (None, Some(info)) => push(info),
            _ => {
                if let Some(p) = url.password() {
                    push(p);
                }
            }
        }
        if let (_, Some(q)) = url.query_split() {
            for kv in q[1..].split('&') {
                if let Some((k, v)) = kv.split_once('=') {
                    if is_secret_key(&percent_decode(k)) {
                        push(v);
                    }
                }
            }
        }
    } else if let Some(pairs) = conninfo_pairs(s) {
        for (_, v) in pairs.iter().filter(|(k, _)| is_secret_key(k)) {
            out.push(v.clone());
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

mod scrub;
use scrub::{is_secret_key, percent_decode, scrub};
mod verify;

#[cfg(test)]
mod tests;
