//! The CLI as a whole: every subcommand has help, the man pages and completions are generated
//! from the same definition, and usage errors exit 2.

use disktier_testkit::cli::disktier;

const SUBCOMMANDS: &[&str] = &[
    "assess",
    "bench",
    "check",
    "import",
    "catalog",
    "price",
    "plan",
    "disks",
    "setup",
    "render",
    "history",
    "show",
    "compare",
    "report",
    "store",
    "interfere",
    "fleet",
    "trace",
    "simulate",
    "completions",
    "man",
];

/// A scratch directory holding the man pages `disktier man --out-dir` wrote there.
fn man_pages() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    disktier()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    dir
}

#[test]
fn every_subcommand_has_help() {
    for sub in SUBCOMMANDS {
        let out = disktier().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help failed");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage: disktier"), "{sub}: {text}");
        assert!(
            text.contains("--format"),
            "{sub} lacks the global --format: {text}"
        );
    }
}

#[test]
fn man_pages_cover_every_subcommand() {
    let dir = man_pages();
    let main = std::fs::read_to_string(dir.path().join("disktier.1")).unwrap();
    assert!(main.contains(".TH disktier"), "not a man page: {main}");
    for sub in SUBCOMMANDS {
        let page = dir.path().join(format!("disktier-{sub}.1"));
        assert!(page.exists(), "no man page for {sub}");
    }
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef disktier"),
        ("fish", "complete -c disktier"),
    ] {
        let out = disktier().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(marker), "{shell} completions lack {marker}");
        assert!(
            text.contains("interfere"),
            "{shell} completions lack subcommands"
        );
    }
}

/// `completions` and `man` take `--format json` as every command does: one JSON document with
/// the script or the page as a string, and with `--out-dir` the pages written, each of them
/// there (QA: the bare script or page was printed, and `man --out-dir` printed nothing).
#[test]
fn completions_and_man_print_json_with_format_json() {
    let json = |args: &[&str]| -> serde_json::Value {
        let out = disktier().arg("--format=json").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
    };
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let v = json(&["completions", shell]);
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["shell"], shell);
        let text = disktier().args(["completions", shell]).output().unwrap();
        assert_eq!(
            v["script"].as_str().unwrap().as_bytes(),
            text.stdout,
            "{shell}"
        );
    }
    let v = json(&["man"]);
    assert_eq!(v["page"], "disktier.1");
    assert!(v["content"].as_str().unwrap().contains(".TH disktier"));

    let dir = tempfile::tempdir().unwrap();
    let v = json(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    let pages: Vec<&str> = v["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    let mut listed: Vec<String> = pages.iter().map(|p| p.to_string()).collect();
    listed.sort();
    assert_eq!(listed, written);
    assert!(pages.contains(&"disktier-fleet-run.1"), "{pages:?}");
    assert_eq!(v["out_dir"], dir.path().to_str().unwrap());
}

#[test]
fn usage_errors_exit_2() {
    disktier().arg("no-such-command").assert().code(2);
    disktier().args(["bench"]).assert().code(2);
    disktier()
        .args(["--format", "yaml", "disks"])
        .assert()
        .code(2);
}

/// QA (dt-s23): with DISKTIER_DB or DISKTIER_CATALOG set, as a profile sets them, a usage
/// error's usage line named the option as if the command needed it: `Usage: disktier show --db
/// <DB> <RUN>`.
#[test]
fn a_usage_line_leaves_out_options_set_from_the_environment() {
    for (var, value) in [
        ("DISKTIER_DB", "/nonexistent/results.db"),
        ("DISKTIER_CATALOG", "/nonexistent/catalog.toml"),
    ] {
        let out = disktier().env(var, value).arg("show").output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Usage: disktier show <RUN>"), "{var}: {err}");
        assert!(
            !err.contains("--db") && !err.contains("--catalog"),
            "{var}: {err}"
        );
    }
}

/// QA (dt-s23): `--help` shows `[env: DISKTIER_DB]` and `[env: DISKTIER_CATALOG]`, but no man
/// page named either variable (clap_mangen leaves them out without its `env` feature).
#[test]
fn man_pages_name_the_environment_variables() {
    let dir = man_pages();
    for page in ["disktier.1", "disktier-history.1", "disktier-price.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        for var in ["DISKTIER_DB", "DISKTIER_CATALOG"] {
            assert!(text.contains(var), "{page} does not name {var}");
        }
    }
}

/// QA (dt-s23): `man -o -` wrote every page into a new directory named "-" and said "man pages
/// written to -"; `-` reads as standard output, as `report -o -` takes it.
#[test]
fn man_to_dash_is_refused_not_a_directory_named_dash() {
    let d = tempfile::tempdir().unwrap();
    let out = disktier()
        .current_dir(d.path())
        .args(["man", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("leave -o out to print the main page"), "{err}");
    assert!(!d.path().join("-").exists());
    assert!(out.stdout.is_empty());
}

#[test]
fn broken_pipe_is_not_an_error() {
    // `disktier completions bash | head -1`: the reader goes away early.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} completions bash | head -c 10 >/dev/null; echo ${{PIPESTATUS:-0}}",
            assert_cmd::cargo::cargo_bin("disktier").display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// QA (helper S): DISKTIER_TERMINATION_LOG naming a FIFO nobody reads held the command at its
/// exit for ever (the open for writing waited for a reader); it now fails at once with a note,
/// and the command's own outcome stands.
#[test]
fn a_termination_log_fifo_without_a_reader_does_not_hold_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("termination-log");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // A hang check, not a timing: the command takes milliseconds; it is killed after a minute.
    let out = disktier()
        .env("DISKTIER_TERMINATION_LOG", &fifo)
        .args(["catalog", "show"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "waited for a reader? {:?}: {err}",
        out.status
    );
    assert!(err.contains("could not write the verdict"), "{err}");
}

/// Fleet's Jobs set DISKTIER_TERMINATION_LOG=/dev/termination-log: the node command leaves its
/// short verdict there, one line, for the container's termination message.
#[test]
fn the_termination_log_gets_the_short_verdict_or_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("termination-log");
    // A usage error (exit 2) leaves its first line and tip (QA: an option the node's binary
    // did not know, as from a newer `fleet run`, left the file unwritten), one missing
    // subcommand a line saying so, not the help's first line.
    for (args, want) in [
        (
            &["check", "etcd", "--metricz", "x"][..],
            "error: unexpected argument '--metricz' found (tip: a similar argument exists: '--metrics')",
        ),
        (
            &["check"][..],
            "error: a subcommand or argument is missing: run the command with --help for them",
        ),
    ] {
        let out = disktier()
            .env("DISKTIER_TERMINATION_LOG", &log)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let msg = std::fs::read_to_string(&log).unwrap();
        assert_eq!(msg, want, "{args:?}");
        std::fs::remove_file(&log).unwrap();
    }
    // `--help` is no error and leaves nothing.
    let out = disktier()
        .env("DISKTIER_TERMINATION_LOG", &log)
        .args(["check", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!log.exists());
    // A runtime error (exit 2): the error line.
    let out = disktier()
        .env("DISKTIER_TERMINATION_LOG", &log)
        .args(["--no-save", "check", "etcd"])
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let msg = std::fs::read_to_string(&log).unwrap();
    assert!(msg.starts_with("error: "), "{msg}");
    assert!(!msg.contains('\n'), "{msg:?}");
    // A measured verdict: pass or fail, matching the exit status.
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = disktier()
        .env("DISKTIER_TERMINATION_LOG", &log)
        .args(["--no-save", "--quiet", "check", "etcd"])
        .arg(&data)
        .arg("--quick")
        .output()
        .unwrap();
    let msg = std::fs::read_to_string(&log).unwrap();
    match out.status.code() {
        Some(0) => assert_eq!(msg, "verdict: pass"),
        Some(1) => assert_eq!(msg, "verdict: fail"),
        c => panic!("{c:?}: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// QA: bash, fish and zsh completions offered the internal `__aggressor` subcommand (hidden
/// from help and man) with its options.
#[test]
fn completions_leave_out_the_internal_aggressor() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = disktier().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("aggressor__"), "{shell}");
        assert!(!text.contains("__aggressor"), "{shell}");
        assert!(text.contains("interfere"), "{shell}");
    }
}

/// QA: `disktier render <TAB>` offered `--textfile-dir`, which render refuses: clap_complete
/// offers hidden options. Only the commands that export metrics offer it now.
#[test]
fn completions_offer_textfile_dir_only_where_it_is_taken() {
    let out = disktier().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Each command's case arm is followed by its `opts="..."` line.
    let opts = |arm: &str| {
        let at = text
            .find(&format!("        {arm})\n"))
            .unwrap_or_else(|| panic!("no arm {arm}"));
        let line = text[at..].lines().nth(1).unwrap().to_string();
        assert!(line.trim_start().starts_with("opts="), "{line}");
        line
    };
    for refusing in [
        "render",
        "price",
        "plan",
        "report",
        "fleet",
        "setup",
        "interfere",
    ] {
        let line = opts(&format!("disktier__subcmd__{refusing}"));
        assert!(!line.contains("--textfile-dir"), "{refusing}: {line}");
        assert!(line.contains("--format"), "{refusing}: {line}");
    }
    for taking in [
        "assess",
        "bench",
        "check__subcmd__etcd",
        "fleet__subcmd__run",
    ] {
        let line = opts(&format!("disktier__subcmd__{taking}"));
        assert!(line.contains("--textfile-dir"), "{taking}: {line}");
    }
}

/// QA (dt-s23): `history --kind <TAB>`, `interfere DIR --aggressor <TAB>` and `bench DIR --profile
/// <TAB>` offered file names in bash, zsh and fish, where the options take one of a few words.
#[test]
fn completions_offer_the_words_kind_aggressor_and_profile_take() {
    let dir = tempfile::tempdir().unwrap();
    let out = disktier().args(["completions", "bash"]).output().unwrap();
    std::fs::write(dir.path().join("script.bash"), &out.stdout).unwrap();
    for (words, want) in [
        (
            "disktier history --kind ''",
            "bench check assess import interfere setup unmeasured",
        ),
        (
            "disktier interfere /d --aggressor ''",
            "ostree bulk-seq rand-write",
        ),
        (
            "disktier bench /d --profile ''",
            "etcd etcd-openshift write-iops read-iops write-throughput read-throughput latency small-files",
        ),
    ] {
        assert_eq!(bash_reply(dir.path(), words), want, "{words}");
    }
}

/// What the bash script (`script.bash` in `dir`) offers for the last of `words`.
fn bash_reply(dir: &std::path::Path, words: &str) -> String {
    let shown = std::process::Command::new("bash")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "source ./script.bash; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
             _disktier disktier \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; echo \"${{COMPREPLY[*]}}\""
        ))
        .output()
        .unwrap();
    String::from_utf8_lossy(&shown.stdout).trim().to_string()
}

/// QA (session 24, a left item): `bench /d --rw <TAB>`, `--ioengine <TAB>`, `plan --region
/// <TAB>` and `price <TAB>` offered file names; they now offer the engine's and the embedded
/// catalog's words, and a word typed in part is completed.
#[test]
fn completions_offer_engine_and_catalog_words() {
    let dir = tempfile::tempdir().unwrap();
    let out = disktier().args(["completions", "bash"]).output().unwrap();
    std::fs::write(dir.path().join("script.bash"), &out.stdout).unwrap();
    for (words, want) in [
        (
            "disktier bench /d --rw ''",
            "read write randread randwrite readwrite randrw",
        ),
        (
            "disktier bench /d --ioengine ''",
            "io_uring psync sync libaio",
        ),
        ("disktier plan --region us-east-", "us-east-1"),
        ("disktier price g", "gp2 gp3"),
        ("disktier price instance i4i.x", "i4i.xlarge"),
    ] {
        assert_eq!(bash_reply(dir.path(), words), want, "{words}");
    }
    // render openshift's MachineSet is AWS's: no GCP region is offered.
    let render = bash_reply(dir.path(), "disktier render openshift --region ''");
    assert!(render.split(' ').any(|r| r == "us-east-1"), "{render}");
    assert!(!render.contains("us-central1"), "{render}");
    // fish shows each --format value with its description (text and json had none: '').
    let fish = disktier().args(["completions", "fish"]).output().unwrap();
    let fish = String::from_utf8_lossy(&fish.stdout);
    assert!(fish.contains("text\\t'Text for people"), "{fish}");
    assert!(!fish.contains("json\\t''"), "{fish}");
}

/// `disktier --format <TAB>` in fish listed file names: clap_complete's script gave up when the
/// last word was a root option waiting for its value. It now offers the values, and what comes
/// after a root option's value is still a subcommand.
#[test]
fn fish_completes_a_root_options_values() {
    if !disktier_testkit::require(disktier_testkit::have("fish"), "fish") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = disktier().args(["completions", "fish"]).output().unwrap();
    std::fs::write(dir.path().join("script.fish"), &out.stdout).unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let complete = |line: &str| {
        let out = std::process::Command::new("fish")
            .current_dir(dir.path())
            .args(["--no-config", "-c"])
            .arg(format!("source ./script.fish; complete -C '{line}'"))
            .output()
            .unwrap();
        let words: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect();
        words
    };
    assert_eq!(
        complete("disktier --format "),
        ["json", "prometheus", "text"]
    );
    let after = complete("disktier --format json ");
    assert!(after.iter().any(|w| w == "bench"), "{after:?}");
    assert!(!after.iter().any(|w| w == "a-file"), "{after:?}");
    assert_eq!(complete("disktier --db x.db hist"), ["history"]);
}

/// QA: `man -l disktier-interfere.1` warned "cannot adjust line": clap's one-word
/// `[default: none,ionice-idle,...]` was longer than a terminal's line.
#[test]
fn man_pages_render_at_80_columns_without_warnings() {
    if !disktier_testkit::require(disktier_testkit::have("groff"), "groff") {
        return;
    }
    let dir = man_pages();
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let out = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-rLL=80n", "-ww", "-z"])
            .arg(e.path())
            .output()
            .unwrap();
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            warnings.trim().is_empty(),
            "{}: {warnings}",
            e.path().display()
        );
    }
}

/// The section of a man page (roff source) headed `.SH heading`, up to the next one.
fn man_section<'a>(page: &'a str, heading: &str) -> Option<&'a str> {
    let start = page.find(&format!("\n.SH {heading}\n"))? + 1;
    let end = page[start + 1..]
        .find("\n.SH ")
        .map_or(page.len(), |e| start + 1 + e);
    Some(&page[start..end])
}

/// QA: the exit codes sat in clap_mangen's catch-all EXTRA section, as one line of prose;
/// man-pages(7) gives them their own section, EXIT STATUS: one tagged paragraph per code.
#[test]
fn man_pages_give_the_exit_codes_an_exit_status_section() {
    let dir = man_pages();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let stdout = disktier().arg("man").output().unwrap();
    assert!(stdout.status.success());
    let pages = [
        ("disktier.1", read("disktier.1")),
        ("stdout", String::from_utf8(stdout.stdout).unwrap()),
    ];
    for (name, page) in &pages {
        let status = man_section(page, "\"EXIT STATUS\"")
            .unwrap_or_else(|| panic!("{name}: no EXIT STATUS section: {page}"));
        for (code, meaning) in [
            ("0", "ok"),
            ("1", "a verdict failed"),
            ("2", "usage or runtime error"),
        ] {
            let tagged = format!(".TP\n\\fB{code}\\fR\n{meaning}");
            assert!(status.contains(&tagged), "{name}: no {tagged:?}: {status}");
        }
        // Rendered section by section, the page still defines roff's apostrophe string once.
        assert_eq!(page.matches(".ds Aq").count(), 2, "{name}: {page}");
        assert!(man_section(page, "EXTRA").is_none(), "{name}: {page}");
    }
    // No page keeps the prose anywhere, and every page has the section: a subcommand without
    // codes of its own has its parent's (QA: only 3 of the pages had one).
    let mut n = 0;
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let page = std::fs::read_to_string(e.path()).unwrap();
        assert!(!page.contains("Exit status"), "{}", e.path().display());
        let status = man_section(&page, "\"EXIT STATUS\"")
            .unwrap_or_else(|| panic!("{}: no EXIT STATUS", e.path().display()));
        assert!(status.contains(".TP\n\\fB2\\fR\n"), "{status}");
        n += 1;
    }
    assert!(n > 40, "{n} pages");
    // A command whose 1 is no verdict says what its 1 is (QA: setup's and catalog check's pages
    // said "a verdict failed (e.g. check etcd above threshold)").
    for (page, one) in [
        ("disktier-setup.1", "no eligible disk: nothing was set up"),
        ("disktier-catalog-check.1", "problems found (listed)"),
    ] {
        let page = read(page);
        let status = man_section(&page, "\"EXIT STATUS\"").unwrap();
        let tagged = format!(".TP\n\\fB1\\fR\n{one}");
        assert!(status.contains(&tagged), "no {tagged:?}: {status}");
        assert!(!status.contains("a verdict failed"), "{status}");
    }
    // Exit 1 is on the pages of the commands that can end with a failed verdict (or setup's
    // "no eligible disk") and on theirs only: the others give 0 and 2 (QA: price, history,
    // render, ... inherited disktier's "1 a verdict failed", which they never exit with).
    let mut with_one: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| {
            let page = std::fs::read_to_string(e.path()).unwrap();
            man_section(&page, "\"EXIT STATUS\"")
                .unwrap()
                .contains(".TP\n\\fB1\\fR\n")
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    with_one.sort();
    assert_eq!(
        with_one,
        [
            "disktier-assess.1",
            "disktier-catalog-check.1",
            "disktier-catalog.1",
            "disktier-check-etcd.1",
            "disktier-check.1",
            "disktier-fleet-run.1",
            "disktier-fleet.1",
            "disktier-import-etcd-perf.1",
            "disktier-import-fio-text.1",
            "disktier-import-fio.1",
            "disktier-import.1",
            "disktier-interfere.1",
            "disktier-setup.1",
            "disktier.1",
        ]
    );
    let price = read("disktier-price.1");
    let status = man_section(&price, "\"EXIT STATUS\"").unwrap();
    assert!(status.contains(".TP\n\\fB0\\fR\nok\n"), "{status}");
    // The fleet subcommands under `fleet run`'s parent keep disktier's codes, not fleet run's.
    let fleet = read("disktier-fleet.1");
    let status = man_section(&fleet, "\"EXIT STATUS\"").unwrap();
    assert!(!status.contains("worst node"), "{status}");
    let run = read("disktier-fleet-run.1");
    let extra = man_section(&run, "EXTRA").expect("fleet run's examples");
    assert!(extra.contains("Examples:"), "{extra}");
    let status = man_section(&run, "\"EXIT STATUS\"").expect("fleet run's exit codes");
    assert!(
        status.contains("The worst node\\*(Aqs:\n.TP\n\\fB0\\fR\nevery node passed\n"),
        "{status}"
    );
    // What a reader sees, where man is installed (not required: a container may lack man-db).
    if disktier_testkit::have("man") {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(dir.path().join("disktier.1"))
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let words: Vec<&str> = text.split_whitespace().collect();
        let text = words.join(" ");
        assert!(
            text.contains("EXIT STATUS 0 ok 1 a verdict failed"),
            "man -l: {text}"
        );
    }
}
