//! Every command or flag an error message suggests must exist (issue 19): a "did you mean X" is
//! re-run with X and must get past that error, each `--flag` named in a refusal must be one of the
//! subcommand's own flags (as its `--help` lists them), and each `disktier ...` command quoted in
//! a message (at run time or anywhere in the sources' string literals) must parse: it is run with
//! `--help` appended, which makes clap parse every argument before it and then stop, so nothing
//! runs.

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(args)
        .env("DISKTIER_DB", "/nonexistent/disktier-test.db")
        .env("DISKTIER_TODAY", disktier_testkit::cli::TODAY)
        .output()
        .unwrap()
}

/// The subcommand path of `args`: the leading words that are not options.
fn path_of<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter()
        .take_while(|a| !a.starts_with('-'))
        .copied()
        .take(2)
        .collect()
}

/// The long flags (`--name`) in `text`.
fn flags(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(p) = text[i..].find("--") {
        let start = i + p;
        let before_ok = start == 0 || !b[start - 1].is_ascii_alphanumeric() && b[start - 1] != b'-';
        let mut end = start + 2;
        while end < b.len()
            && (b[end].is_ascii_lowercase() || b[end].is_ascii_digit() || b[end] == b'-')
        {
            end += 1;
        }
        let name = &text[start..end];
        if before_ok && name.len() > 3 && b[start + 2].is_ascii_lowercase() {
            out.push(name.trim_end_matches('-').to_string());
        }
        i = end.max(start + 2);
    }
    out
}

/// The `disktier ...` commands quoted in backticks in `text`.
fn quoted_commands(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("disktier "))
        .map(str::to_string)
        .collect()
}

/// Does `help` (a subcommand's --help) list `flag`?
fn help_lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(i, _)| {
        help[i + flag.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-'))
    })
}

/// Runs the quoted command `cmd` (`disktier a b --c d`) with `--help` appended: clap parses every
/// argument, then prints help and exits 0.
fn assert_parses(cmd: &str, origin: &str) {
    let words: Vec<&str> = cmd
        .split(" > ")
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .collect();
    // `--help` goes before a `--` (after it, it would be passed on and the command would run).
    let cut = words.iter().position(|w| *w == "--").unwrap_or(words.len());
    let mut args = words[..cut].to_vec();
    args.push("--help");
    let out = run(&args);
    assert!(
        out.status.success(),
        "{origin}: the suggested `{cmd}` does not parse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `args`, which must fail, and checks every suggestion in its error.
fn check(args: &[&str], want_suggestion: bool) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_ne!(out.status.code(), Some(0), "{args:?} should fail");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let path = path_of(args);
    let mut help_args = path.clone();
    help_args.push("--help");
    let help = String::from_utf8_lossy(&run(&help_args).stdout).to_string();
    let mut suggested = 0;
    for f in flags(&err) {
        // A refusal may name a flag the user typed (even a hidden one that is only accepted to be
        // refused); every other flag is a suggestion and must be listed.
        if args.contains(&f.as_str()) && !help_lists(&help, &f) {
            continue;
        }
        suggested += 1;
        assert!(
            help_lists(&help, &f),
            "{args:?}: the error suggests {f}, which `disktier {} --help` does not list:\n{err}",
            path.join(" ")
        );
    }
    for c in quoted_commands(&err) {
        suggested += 1;
        assert_parses(&c, &format!("{args:?}"));
    }
    if let Some(rest) = err.split("did you mean ").nth(1) {
        suggested += 1;
        let first = rest
            .split([',', '?', ' '])
            .next()
            .unwrap()
            .trim()
            .to_string();
        let wrong = args
            .iter()
            .find(|a| err.contains(&format!("'{a}'")) || err.contains(&format!("{a}:")))
            .unwrap_or_else(|| panic!("{args:?}: which argument is wrong? {err}"));
        let fixed: Vec<&str> = args
            .iter()
            .map(|a| if a == wrong { first.as_str() } else { a })
            .collect();
        let again = run(&fixed);
        let again_err = String::from_utf8_lossy(&again.stderr);
        assert!(
            !again_err.contains("did you mean"),
            "{args:?}: following 'did you mean {first}' ({fixed:?}) still fails: {again_err}"
        );
    }
    if want_suggestion {
        assert!(suggested > 0, "{args:?}: expected a suggestion in: {err}");
    }
    err
}

/// Issue 19's example: `render bcache` with a kernel name as the fast device.
const BCACHE_ON_SDB: &[&str] = &[
    "render",
    "bcache",
    "--fast",
    "/dev/sdb",
    "--slow",
    "/dev/disk/by-id/nvme-x",
];

#[test]
fn suggestions_in_refusals_name_real_flags_and_commands() {
    let gke = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = [
            &["render"][..],
            disktier_testkit::cli_cases::GKE_C1,
            &["--machine-type", "n1-standard-8"],
        ]
        .concat();
        a.extend_from_slice(extra);
        a
    };
    let cases: Vec<(Vec<&str>, bool)> = vec![
        // Issue 19's example: render bcache used to suggest --model, which it does not have.
        (BCACHE_ON_SDB.to_vec(), false),
        (
            vec![
                "render",
                "lvmcache",
                "--fast",
                "/dev/disk/by-id/a",
                "--slow",
                "/dev/nvme1n1",
            ],
            false,
        ),
        (
            vec![
                "render", "systemd", "--mount", "/data", "--by-id", "/dev/sdb",
            ],
            true,
        ),
        (
            vec![
                "render",
                "cloud-init",
                "--mount",
                "/data",
                "--by-id",
                "/dev/xvdf",
            ],
            true,
        ),
        (
            vec![
                "render",
                "openshift",
                "--mount",
                "/data",
                "--by-id",
                "/dev/sdb",
            ],
            true,
        ),
        (gke(&["--local-ssds", "24"]), true),
        (gke(&["--local-ssds", "2", "--request", "10Ti"]), true),
        (gke(&["--local-ssds", "2", "--local-ssd-count", "2"]), false),
        (
            [
                &["render"][..],
                disktier_testkit::cli_cases::LVMCACHE_A_B,
                &["--sequential-cutoff", "1M"],
            ]
            .concat(),
            false,
        ),
        (vec!["price", "gp3", "--no-save"], true),
        (vec!["price", "gpx", "--size", "100GiB", "--no-save"], true),
        (
            vec![
                "price",
                "gp3",
                "--size",
                "100GiB",
                "--region",
                "eu-nort-1",
                "--no-save",
            ],
            true,
        ),
        (vec!["price", "instance", "m6i.xlarg", "--no-save"], true),
        (
            vec![
                "plan",
                "--capacity",
                "100GiB",
                "--region",
                "us-centrl1",
                "--no-save",
            ],
            true,
        ),
    ];
    for (args, want) in cases {
        check(&args, want);
    }
}

#[test]
fn render_bcache_no_longer_suggests_a_model_flag() {
    let err = check(BCACHE_ON_SDB, false);
    assert!(err.contains("/dev/disk/by-id/"), "{err}");
    assert!(!err.contains("--model"), "{err}");
}

/// Every `disktier ...` command quoted in a string literal of the sources (error messages, notes,
/// rendered comments) parses. Doc comments are skipped; placeholders (`{}`) become `x`; commands
/// that are only shapes (`...`, `|`, upper-case PLACEHOLDERS, internal `__` commands) are skipped.
#[test]
fn every_quoted_command_in_the_sources_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "target" && name != "tests" && !name.starts_with('.') {
                    stack.push(p);
                }
                continue;
            }
            if !name.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for (n, line) in text.lines().enumerate() {
                let t = line.trim_start();
                if t.starts_with("//") || !t.contains('"') && !t.contains("#[error") {
                    continue;
                }
                for c in quoted_commands(line) {
                    let c = replace_placeholders(&c);
                    if c.contains("...")
                        || c.contains('|')
                        || c.contains("__")
                        || c.split_whitespace().any(|w| {
                            w.chars().any(|ch| ch.is_ascii_uppercase())
                                && w.chars()
                                    .all(|ch| ch.is_ascii_uppercase() || "_[]<>.".contains(ch))
                        })
                    {
                        continue;
                    }
                    checked += 1;
                    assert_parses(&c, &format!("{}:{}", p.display(), n + 1));
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} quoted commands found: is the scan broken?"
    );
}

/// `{}` / `{name}` / `{name:?}` placeholders become `x`.
fn replace_placeholders(c: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for ch in c.chars() {
        match ch {
            '{' => {
                if depth == 0 {
                    out.push('x');
                }
                depth += 1;
            }
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}
