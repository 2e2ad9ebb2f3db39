//! Text bound for a terminal.

/// `s` safe for a terminal: control characters (a newline that would break a table, an escape
/// sequence a stored document or a hostile argument could carry) shown as `\u{..}` escapes.
pub fn printable(s: &str, keep_newlines: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() && !(keep_newlines && c == '\n') {
            o.extend(c.escape_default());
        } else {
            o.push(c);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_escaped_and_newlines_kept_when_asked() {
        assert_eq!(printable("a\x1b[31mb", true), "a\\u{1b}[31mb");
        assert_eq!(printable("a\nb", true), "a\nb");
        assert_eq!(printable("a\nb", false), "a\\nb");
        assert_eq!(printable("plain é", false), "plain é");
    }
}
