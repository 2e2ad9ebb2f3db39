//! Text bound for a terminal, and paths bound for JSON.

/// `s` safe for a terminal: control characters (a newline that would break a table, an escape
/// sequence a stored document or a hostile argument could carry) and bidi overrides (which show
/// text reordered) as `\u{..}` escapes ([`disktier_units::unsafe_on_terminal`]).
pub fn printable(s: &str, keep_newlines: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if disktier_units::unsafe_on_terminal(c) && !(keep_newlines && c == '\n') {
            o.extend(c.escape_default());
        } else {
            o.push(c);
        }
    }
    o
}

/// A path as one field of a line of text output: its control characters (a newline too) and
/// bidi overrides escaped, as [`printable`] does (QA: a trace named with a newline split
/// `trace import`'s, `trace stats`'s and `simulate`'s first line in two).
pub fn path(p: &std::path::Path) -> String {
    printable(&p.to_string_lossy(), false)
}

/// `s`, the text of a command's output, safe for a terminal: as [`printable`], but its own line
/// breaks and the tab that separates `render -o`'s columns are kept. Fields that must stay on one
/// line are escaped with [`printable`] where they are laid out.
pub fn printable_output(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| disktier_units::unsafe_on_terminal(c) && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if disktier_units::unsafe_on_terminal(c) && c != '\n' && c != '\t' {
            o.extend(c.escape_default());
        } else {
            o.push(c);
        }
    }
    std::borrow::Cow::Owned(o)
}

/// Longer than this, a word of an error message is cut: a 100 kB argument echoed whole buries
/// the message (QA); no path the kernel takes is this long (PATH_MAX is 4096 bytes, but a real
/// one is rarely past a few hundred).
pub const LONGEST_WORD: usize = 1024;

/// `s` with every run of non-space characters longer than [`LONGEST_WORD`] cut to its first 64
/// characters and "... (N bytes)", as `price` and `plan` quote what they were given.
pub fn shorten_words(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(64 * 1024));
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.len() > LONGEST_WORD {
            out.extend(word.chars().take(64));
            out.push_str(&format!("... ({} bytes)", word.len()));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A path as a JSON string, lossily (U+FFFD for bytes that are not UTF-8), as the result
/// document writes its target: serde refuses such a path, and `json!` panics on it (QA: `report
/// -o`, `trace stats`, `store spool` with a non-UTF-8 path panicked under `--format json`).
pub fn path_json(p: &std::path::Path) -> serde_json::Value {
    serde_json::Value::String(p.to_string_lossy().into_owned())
}

/// [`path_json`] for `#[serde(serialize_with = "...")]`.
pub fn lossy_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// [`lossy_path`] for an optional path.
pub fn lossy_opt_path<S: serde::Serializer>(
    p: &Option<&std::path::Path>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => lossy_path(p, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::{printable, shorten_words};

    #[test]
    fn a_huge_word_is_cut_and_the_rest_kept() {
        let huge = "x".repeat(100_000);
        let msg = format!("error: '{huge}' is not a size\nnext line");
        let short = shorten_words(&msg);
        assert!(short.len() < 200, "{}", short.len());
        assert!(short.starts_with(&format!("error: '{}... (100002 bytes)", "x".repeat(63))));
        assert!(short.ends_with(" is not a size\nnext line"), "{short}");
        let normal = "error: /var/lib/etcd does not exist";
        assert_eq!(shorten_words(normal), normal);
    }

    #[test]
    fn control_characters_are_escaped_and_newlines_kept_when_asked() {
        assert_eq!(printable("a\x1b[31mb", true), "a\\u{1b}[31mb");
        assert_eq!(printable("a\nb", true), "a\nb");
        assert_eq!(printable("a\nb", false), "a\\nb");
        assert_eq!(printable("plain é", false), "plain é");
        assert_eq!(printable("a\u{202e}b", false), "a\\u{202e}b");
    }

    #[test]
    fn output_keeps_its_lines_and_columns_and_escapes_the_rest() {
        use super::printable_output;
        assert_eq!(printable_output("a\tb\n数据 é\n"), "a\tb\n数据 é\n");
        assert_eq!(
            printable_output("x\u{202e}y\r\u{1b}]0;t\u{7}\n"),
            "x\\u{202e}y\\r\\u{1b}]0;t\\u{7}\n"
        );
    }
}

/// The first `k` of `items`, [`printable`], comma separated, and "and N more" past them: a list
/// from outside (a file's labels) in one line of a message, however long it is.
pub fn some_of<'a>(items: impl IntoIterator<Item = &'a String>, k: usize) -> String {
    let all: Vec<&String> = items.into_iter().collect();
    let mut s = all
        .iter()
        .take(k)
        .map(|i| printable(i, false))
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > k {
        s.push_str(&format!(" and {} more", all.len() - k));
    }
    s
}

#[cfg(test)]
mod some_of_tests {
    #[test]
    fn some_of_cuts_the_list_and_escapes_it() {
        let v: Vec<String> = ["/a", "/b\x1b[2J", "/c", "/d"].map(String::from).to_vec();
        assert_eq!(super::some_of(&v[..1], 3), "/a");
        assert_eq!(super::some_of(&v, 3), "/a, /b\\u{1b}[2J, /c and 1 more");
    }
}
