//! What the PostgreSQL driver's errors mean to the user: its error chain as one line, and the
//! fix for the failures a team meets when it points disktier at its server (a wrong password,
//! user, database, host or port, a certificate that does not check, missing grants), so that
//! the message says what to change rather than only what the driver saw.

use postgres::config::Host;
use postgres::error::SqlState;

/// The driver's error with its causes, as one line.
pub fn chain(e: &postgres::Error) -> String {
    let mut m = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let t = s.to_string();
        if !m.contains(&t) {
            m.push_str(": ");
            m.push_str(&t);
        }
        src = s.source();
    }
    m
}

/// The error's text with the fix, when there is one, after it, for a connection made with
/// `config` (`verify_full`: sslmode verify-full). Not yet scrubbed of the location's secrets:
/// the caller does that.
pub fn explain(e: &postgres::Error, config: &postgres::Config, verify_full: bool) -> String {
    let text = chain(e);
    match fix(e, &text, config, verify_full) {
        Some(fix) => format!("{text}: {fix}"),
        None => text,
    }
}

/// Why the driver did not take the location (its whole error chain: "invalid connection
/// string" alone named nothing), and what to change.
pub fn unparsed(e: &postgres::Error) -> String {
    format!("{}: correct it in {WHERE}", chain(e))
}

/// Why the driver would misread the URL `s`, if it would: it ends the user and password at
/// the first `@` (as libpq does), so an `@` left unencoded in them makes the rest a host name
/// that is no host ("ter2@db" looked up, or "invalid value for option `port`"). A `/` or
/// `?` after that `@` in the password ends the driver's host before the real one, so the
/// real host follows a later `@` as `HOST/DATABASE` (QA: "p@ss/x@db/team" was looked up as
/// host "ss", "the host name does not resolve"; "p@ss:w/x@db/team" was "invalid value for
/// option `port`"); an `@` in a query value (`application_name=a@b`) or a database name
/// (`/team@x`) has no `/` after it and is left alone.
pub fn misread_url(s: &str) -> Option<String> {
    let (_, rest) = s.split_once("://")?;
    let (_, after_first_at) = rest.split_once('@')?;
    let host = after_first_at.split(['/', '?']).next().unwrap_or("");
    let later_host = after_first_at
        .rsplit_once('@')
        .is_some_and(|(_, last)| last.split('?').next().unwrap_or("").contains('/'));
    (host.contains('@') || later_host).then(|| {
        "the user or password holds an unencoded @: percent-encode their special characters (@ as %40, : as %3A, / as %2F, ? as %3F, # as %23, % as %25)".to_string()
    })
}

/// Where the store location (or its environment variable) is set, for the fixes.
const WHERE: &str = "the store location (--db or DISKTIER_DB)";

fn fix(e: &postgres::Error, text: &str, c: &postgres::Config, verify_full: bool) -> Option<String> {
    let user = c.get_user().unwrap_or("(none given)");
    let db = c.get_dbname().unwrap_or(user);
    let schemas =
        search_path(c).unwrap_or_else(|| "the server's default, \"$user\", public".into());
    if let Some(code) = e.code() {
        let fix = match code {
            c if *c == SqlState::INVALID_PASSWORD => format!(
                "the server refused the password of user {user} (a wrong password, or no such user): correct them in {WHERE}"
            ),
            c if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => format!(
                "the server does not admit user {user} to database {db} from here (no such role, or no pg_hba.conf line for this host, user and database): correct the user in {WHERE}, or have the server's administrator admit it"
            ),
            c if *c == SqlState::INVALID_CATALOG_NAME => format!(
                "correct the database name in {WHERE}, or create the database on the server (createdb {})",
                shell_word(db)
            ),
            c if *c == SqlState::INSUFFICIENT_PRIVILEGE => format!(
                "user {user} lacks a grant: reading needs USAGE on the schema and SELECT on runs and schema_migrations, saving INSERT on runs as well, and creating or migrating the store CREATE on the schema (docs/store.md)"
            ),
            // "no schema has been selected to create in": no schema of the search path exists
            // (a schema named in `options` that was never made, or a dropped `public`), so
            // there is nowhere to create the store. The server's words named neither the
            // schema nor the fix (QA).
            c if *c == SqlState::INVALID_SCHEMA_NAME => format!(
                "no schema of the connection's search_path ({schemas}) exists in database {db}, so there is nowhere to create the store: create the schema on the server (CREATE SCHEMA name, as a role that may), or correct search_path in the options of {WHERE}"
            ),
            c if *c == SqlState::TOO_MANY_CONNECTIONS => {
                "the server has no free connection slot: try again later, or raise its max_connections".into()
            }
            c if *c == SqlState::LOCK_NOT_AVAILABLE => {
                "another session holds a lock on the store's tables for longer than lock_timeout (a stuck transaction, or a migration): try again when it is done (the server's pg_stat_activity shows who holds it)".into()
            }
            c if *c == SqlState::CANNOT_CONNECT_NOW => {
                "the server is starting up or shutting down: try again shortly".into()
            }
            _ => return None,
        };
        return Some(fix);
    }
    let io = io_kind(e);
    if io == Some(std::io::ErrorKind::ConnectionRefused) {
        return Some(format!(
            "nothing accepts connections at {}: check the host and port in {WHERE}, and that PostgreSQL runs and listens there (its listen_addresses and port)",
            servers(c)
        ));
    }
    if io == Some(std::io::ErrorKind::NotFound) {
        if let Some(fix) = missing_socket(c) {
            return Some(fix);
        }
    }
    if io == Some(std::io::ErrorKind::TimedOut) {
        return Some(format!(
            "{} did not answer within the connect timeout: check the host and port in {WHERE}, and that no firewall drops the connection (or give it longer with connect_timeout=SECONDS)",
            servers(c)
        ));
    }
    if text.contains("failed to lookup address information") {
        return Some(format!(
            "the host name does not resolve: correct it in {WHERE}, or give the server's address with hostaddr= (a static disktier cannot look names up through NSS)"
        ));
    }
    if text.contains("password missing") {
        return Some(format!(
            "the server asks for a password and {WHERE} gives none: add it (postgres://USER:PASSWORD@HOST/DB with special characters percent-encoded, or password=... in the key=value form; DISKTIER_DB keeps it off the command line)"
        ));
    }
    if text.contains("server does not support TLS") {
        return Some(
            "the server does not offer TLS: enable ssl on the server, or connect without it with sslmode=prefer (or disable)".into(),
        );
    }
    if text.contains("NotValidForName") || text.contains("certificate not valid for name") {
        return Some(format!(
            "the server's certificate does not hold the host name or address connected to, which sslmode=verify-full requires: connect by a name or address it holds, in {WHERE}"
        ));
    }
    if text.contains("invalid peer certificate") {
        let mode = if verify_full {
            "verify-full"
        } else {
            "verify-ca"
        };
        return Some(format!(
            "the server's certificate does not check against the root certificate (sslmode={mode}): give the CA that signed it with sslrootcert=FILE"
        ));
    }
    None
}

/// The `search_path` the location's `options` set (`-c search_path=team`,
/// `--search_path=team`), as given; `None` when they set none.
fn search_path(c: &postgres::Config) -> Option<String> {
    let options = c.get_options()?;
    let at = options.rfind("search_path=")?;
    // PostgreSQL's options are separated by blanks, a backslash escaping the next character.
    let mut value = String::new();
    let mut chars = options[at + "search_path=".len()..].chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => value.extend(chars.next()),
            ' ' => break,
            ch => value.push(ch),
        }
    }
    Some(value)
}

/// `s` as one word of a POSIX shell command, quoted when it holds anything but plain name
/// characters, so that a command the fix names runs as written when pasted (QA: a database
/// `team db$(id)` was "createdb team db$(id)", which makes the database `team` with a
/// description, after running `id`); `--` before a name that starts with `-`, which createdb
/// would read as an option.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,+@%:=/".contains(c));
    let word = if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    };
    if s.starts_with('-') {
        format!("-- {word}")
    } else {
        word
    }
}

/// What a Unix-socket location lacks when the driver finds no socket ("No such file or
/// directory", which named neither the path nor the fix): the directory, or the server's
/// socket in it (`.s.PGSQL.PORT`, PostgreSQL docs, "Connection Settings",
/// `unix_socket_directories`). `None` when every socket named is there (or none is named).
fn missing_socket(c: &postgres::Config) -> Option<String> {
    let ports = c.get_ports();
    let what = c.get_hosts().iter().enumerate().find_map(|(i, h)| {
        let Host::Unix(dir) = h else { return None };
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        if !dir.is_dir() {
            Some(format!(
                "the socket directory {} does not exist",
                dir.display()
            ))
        } else if !dir.join(format!(".s.PGSQL.{port}")).exists() {
            Some(format!(
                "no PostgreSQL listens on port {port} in {} (it holds no socket .s.PGSQL.{port})",
                dir.display()
            ))
        } else {
            None
        }
    })?;
    Some(format!(
        "{what}: set host= in {WHERE} to the directory the server puts its socket in (its unix_socket_directories: /var/run/postgresql on Debian and Ubuntu, /tmp for a server built from source), or to the server's host name or address to connect over TCP, and check the port"
    ))
}

/// The kind of the I/O error behind `e`, if an I/O error caused it.
fn io_kind(e: &postgres::Error) -> Option<std::io::ErrorKind> {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        src = s.source();
    }
    None
}

/// The servers `c` names, as `host:port` (or the socket directory), for messages.
fn servers(c: &postgres::Config) -> String {
    let ports = c.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let mut names: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| match h {
            Host::Tcp(h) if h.contains(':') => format!("[{h}]:{}", port(i)),
            Host::Tcp(h) => format!("{h}:{}", port(i)),
            Host::Unix(p) => format!("the socket in {}", p.display()),
        })
        .collect();
    if names.is_empty() {
        names = c
            .get_hostaddrs()
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                std::net::IpAddr::V6(a) => format!("[{a}]:{}", port(i)),
                a => format!("{a}:{}", port(i)),
            })
            .collect();
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_database_name_is_one_shell_word() {
        assert_eq!(shell_word("results"), "results");
        assert_eq!(shell_word("team-a_2.x"), "team-a_2.x");
        assert_eq!(shell_word("team db$(id)"), "'team db$(id)'");
        assert_eq!(shell_word("a;rm"), "'a;rm'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("-x"), "-- -x");
        assert_eq!(shell_word(""), "''");
    }
}
