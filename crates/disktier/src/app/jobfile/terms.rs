//! An engine error about a job of a job file, in the file's own words. The engine's messages
//! name the command line's job options (`pass --size (e.g. --size 1G)`, `pass --direct=false`),
//! which a job file spells `size=1G` and `direct=0` (QA: a job file whose target had too little
//! room was told to pass "a smaller --size"). Options of the command itself (`--destructive`,
//! `--engine`) keep their names: they are given on the command line with a job file too.

use super::options::job_option_names;

/// `e` with every job option it names written as the job file writes it; `e` itself, typed,
/// when it names none.
pub fn in_file_terms(e: disktier_engine::EngineError) -> anyhow::Error {
    let text = e.to_string();
    let names = job_option_names();
    let rewritten = rewrite(&text, &names);
    if rewritten == text {
        e.into()
    } else {
        anyhow::anyhow!(rewritten)
    }
}

/// `text` with `--NAME` (NAME one of `names`) written `NAME=` ("pass" before it "set"), `--NAME VALUE` (a value starting
/// with a digit) `NAME=VALUE`, `--NAME=false`/`true` `NAME=0`/`1`; fio's names use `_` where the
/// command line has `-` (`--ramp-time`, `ramp_time=`).
fn rewrite(text: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(after.len());
        let name = &after[..len];
        if len == 0 || !names.iter().any(|n| n == name) {
            out.push_str("--");
            rest = after;
            continue;
        }
        // "pass --size" is a command line's; a file's option is set.
        for lead in ["pass ", "pass a smaller ", "pass a larger "] {
            if out.ends_with(lead) {
                out.truncate(out.len() - lead.len());
                out.push_str(&lead.replacen("pass", "set", 1));
                break;
            }
        }
        out.push_str(&name.replace('-', "_"));
        out.push('=');
        let mut tail = &after[len..];
        if let Some(v) = tail.strip_prefix('=') {
            tail = v;
            for (word, digit) in [("false", "0"), ("true", "1")] {
                if let Some(t) = tail.strip_prefix(word) {
                    out.push_str(digit);
                    tail = t;
                    break;
                }
            }
        } else if let Some(v) = tail.strip_prefix(' ') {
            if v.starts_with(|c: char| c.is_ascii_digit()) {
                tail = v;
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    fn names() -> Vec<String> {
        super::job_option_names()
    }

    #[test]
    fn job_options_are_written_as_the_file_writes_them() {
        let n = names();
        assert_eq!(
            super::rewrite(
                "x needs 5 bytes but only 1 free: pass a smaller --size or pick another target",
                &n
            ),
            "x needs 5 bytes but only 1 free: set a smaller size= or pick another target"
        );
        assert_eq!(
            super::rewrite("no size was given: pass --size (e.g. --size 1G)", &n),
            "no size was given: set size= (e.g. size=1G)"
        );
        assert_eq!(
            super::rewrite("tmpfs has no O_DIRECT: pass --direct=false", &n),
            "tmpfs has no O_DIRECT: set direct=0"
        );
        assert_eq!(super::rewrite("drop --ramp-time", &n), "drop ramp_time=");
    }

    #[test]
    fn the_commands_own_options_and_other_text_are_kept() {
        let n = names();
        for t in [
            "pick an empty device or pass --destructive",
            "run it through fio with --engine fio",
            "a -- b --, --9 and --Size",
            "ends with --",
        ] {
            assert_eq!(super::rewrite(t, &n), t);
        }
    }
}
