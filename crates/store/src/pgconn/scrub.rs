//! Driver and server messages with a location's secrets taken out. A secret is replaced where a
//! location carries it — a URL's `user:PASSWORD@` (or a whole userinfo), a `password=` of a
//! query or `key=value` string (quoted or not, spaces around `=`) — and where a message quotes
//! it whole (`"..."`, `'...'`, `` `...` ``), as the driver and the server quote the names they
//! echo. Only a secret of [`SCRUBBED_ANYWHERE`] characters or more is also replaced wherever
//! else it appears: a short one is a piece of ordinary words (QA: with the password `a`, every
//! `a` of a message became `***`: "f***iled to connect to the server ***t 127.0.0.1:1").

/// The shortest secret replaced wherever it appears in a message, not only where a location
/// carries it or a message quotes it: shorter text is part of ordinary words ("a", "pass",
/// "server"), and a password so short that its every occurrence would be hidden mangles the
/// message that was to name the fix. Eight is the length below which such collisions are
/// common in English text; it is no statement on password strength.
pub(super) const SCRUBBED_ANYWHERE: usize = 8;

/// `msg` with each of `secrets` replaced by `***` where it is a credential (see the module).
pub(super) fn scrub(msg: &str, secrets: &[String]) -> String {
    let mut m = msg.to_string();
    // Longest first: a secret that holds a shorter one (raw and percent-decoded forms) is
    // replaced whole.
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for s in secrets {
        m = scrub_one(&m, s);
    }
    m
}

fn scrub_one(msg: &str, secret: &str) -> String {
    let anywhere = secret.chars().count() >= SCRUBBED_ANYWHERE;
    let mut out = String::with_capacity(msg.len());
    let mut at = 0;
    while let Some(found) = msg[at..].find(secret) {
        let start = at + found;
        let end = start + secret.len();
        out.push_str(&msg[at..start]);
        if anywhere || carried(&msg[..start], &msg[end..]) {
            out.push_str("***");
        } else {
            out.push_str(secret);
        }
        at = end;
    }
    out.push_str(&msg[at..]);
    out
}

/// Whether text between `before` and `after` is where a location carries a credential, or a
/// value quoted whole.
fn carried(before: &str, after: &str) -> bool {
    let next = after.chars().next();
    // postgres://user:SECRET@host, or postgres://SECRET@host for a userinfo hidden whole.
    if next == Some('@') && (before.ends_with(':') || before.ends_with("://")) {
        return true;
    }
    // "SECRET", 'SECRET' (also a quoted key=value password), `SECRET`.
    if let (Some(q @ ('"' | '\'' | '`')), Some(n)) = (before.chars().last(), next) {
        if n == q {
            return true;
        }
    }
    // password=SECRET and password = SECRET (key=value), ?password=SECRET&... (a URL's query).
    let Some(key) = before.trim_end().strip_suffix('=') else {
        return false;
    };
    let key = key.trim_end();
    let start = key
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
        .map_or(0, |i| i + 1);
    is_secret_key(&percent_decode(&key[start..]))
        && next.is_none_or(|c| c.is_whitespace() || matches!(c, '&' | '#' | '"' | ',' | ')'))
}

/// The keys whose values are credentials, in either form.
const SECRET_KEYS: [&str; 2] = ["password", "sslpassword"];

pub(super) fn is_secret_key(k: &str) -> bool {
    SECRET_KEYS.iter().any(|s| k.eq_ignore_ascii_case(s))
}

pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::scrub;

    fn scrubbed(msg: &str, secret: &str) -> String {
        scrub(msg, &[secret.to_string()])
    }

    /// Regression (QA): a one-letter password turned every such letter of a message into the
    /// redaction mark.
    #[test]
    fn a_short_password_is_scrubbed_only_where_it_is_a_credential() {
        let msg = "failed to connect to the server at 127.0.0.1:1: nothing listens there: check the host and port in postgres://u:a@127.0.0.1:1/db";
        assert_eq!(
            scrubbed(msg, "a"),
            "failed to connect to the server at 127.0.0.1:1: nothing listens there: check the host and port in postgres://u:***@127.0.0.1:1/db"
        );
        for (msg, want) in [
            ("host=h password=a dbname=a", "host=h password=*** dbname=a"),
            ("host=h password = 'a' x", "host=h password = '***' x"),
            (
                "postgres://h/a?password=a&x=a",
                "postgres://h/a?password=***&x=a",
            ),
            (
                "postgres://h/a?pass%77ord=a",
                "postgres://h/a?pass%77ord=***",
            ),
            ("role \"a\" is a name", "role \"***\" is a name"),
            ("postgres://a@h/a", "postgres://***@h/a"),
            ("a password=ab b", "a password=ab b"),
            ("ask for a password", "ask for a password"),
        ] {
            assert_eq!(scrubbed(msg, "a"), want, "{msg}");
        }
    }

    #[test]
    fn a_long_password_is_scrubbed_wherever_it_appears() {
        assert_eq!(
            scrubbed("password Hunter#2 refused (Hunter#2x)", "Hunter#2"),
            "password *** refused (***x)"
        );
        // The longer of two forms first: the raw form is not left half shown.
        let secrets = ["p@ss".to_string(), "p%40ss".to_string()];
        assert_eq!(scrub("u:p%40ss@h u:p@ss@h", &secrets), "u:***@h u:***@h");
    }
}
