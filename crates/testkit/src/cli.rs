//! Driving disktier's binary from tests: the command, the "it succeeded, show me why not"
//! check on its output, and the outside validators several CLI tests run on what it printed.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The day tests count the price catalog's age to (`DISKTIER_TODAY`): the embedded catalog's
/// date or after it, so no test's output depends on the day it runs, and a catalog dated later
/// is never stale on it (docs/catalog.md, "How old a catalog may be").
pub const TODAY: &str = "2026-11-22";

/// The disktier binary of this build (cargo's target directory), ready for arguments, with its
/// clock for the catalog's age at [`TODAY`].
pub fn disktier() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("disktier").expect("the disktier binary is built");
    c.env("DISKTIER_TODAY", TODAY);
    c
}

/// [`disktier`] with its store at `db` and no `XDG_DATA_HOME` from the environment.
pub fn disktier_at(db: &Path) -> assert_cmd::Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db).env_remove("XDG_DATA_HOME");
    c
}

/// stdout of a run that must have succeeded; a failure shows its stderr and stdout.
pub fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stdout of a run that judged: exit 0 (the verdict passed) or 1 (it failed), not 2 (an
/// error); anything else shows stderr.
pub fn judged(out: &Output) -> String {
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// [`judged`] stdout parsed as JSON.
pub fn judged_json(out: &Output) -> Value {
    let text = judged(out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text}"))
}

/// stdout of a run that must have succeeded, parsed as JSON.
pub fn json_ok(out: &Output) -> Value {
    let text = stdout_ok(out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text}"))
}

/// The verdict named `name` in a result document's `verdicts[]`; a document without it fails
/// the test, showing the verdicts.
pub fn verdict<'a>(doc: &'a Value, name: &str) -> &'a Value {
    item(&doc["verdicts"], "name", name)
}

/// The first object in the array `list` whose `key` is `value`; a list without one fails the
/// test, showing the list.
pub fn item<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .and_then(|items| items.iter().find(|i| i[key] == value))
        .unwrap_or_else(|| panic!("no {key} {value:?} in {list}"))
}

/// The string `key` of every object in the array `list`, in order (the kinds of a document's
/// `objects[]`, the names of its `verdicts[]`); anything else fails the test.
pub fn each_str<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|o| {
            o[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string {key} in {o}"))
        })
        .collect()
}

/// Runs a command that must succeed and reads its stdout: `disktier().args(..).stdout_ok()`.
pub trait Succeeds {
    /// Runs the command to completion.
    fn run_output(&mut self) -> Output;
    /// stdout as text ([`stdout_ok`]).
    fn stdout_ok(&mut self) -> String {
        stdout_ok(&self.run_output())
    }
    /// stdout as JSON ([`json_ok`]).
    fn json_ok(&mut self) -> Value {
        json_ok(&self.run_output())
    }
    /// stderr of a run that must exit with `code` (a refusal: 1 or 2).
    fn stderr_of_exit(&mut self, code: i32) -> String {
        stderr_of_exit(&self.run_output(), "", code)
    }
    /// stderr of a run that must exit with `code` and name every one of `needles` there; a
    /// failure names `case` (one row of a table of refusals).
    fn stderr_of_exit_naming(&mut self, case: &str, code: i32, needles: &[&str]) -> String {
        let err = stderr_of_exit(&self.run_output(), case, code);
        assert_contains_all(case, &err, needles);
        err
    }
}

fn stderr_of_exit(out: &Output, case: &str, code: i32) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{case}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that `text` holds every one of `needles`; a failure names `case`, the missing
/// needle and the whole text.
pub fn assert_contains_all(case: &str, text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{case}: lacks {n:?} in:\n{text}");
    }
}

impl Succeeds for assert_cmd::Command {
    fn run_output(&mut self) -> Output {
        self.output().expect("run the command")
    }
}

impl Succeeds for Command {
    fn run_output(&mut self) -> Output {
        self.output().expect("run the command")
    }
}

/// A result document from the store crate's fixtures (`crates/store/tests/fixtures/NAME.json`).
pub fn store_fixture(name: &str) -> Value {
    let p = format!(
        "{}/../store/tests/fixtures/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A node's sysfs tree from the disks crate's fixtures (`crates/disks/tests/fixtures/sysfs`).
pub fn sysfs_fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../disks/tests/fixtures/sysfs"
    ))
    .join(name)
}

/// Runs `cmd` with `input` on its stdin and waits for it, stdout and stderr captured.
pub fn output_with_stdin(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .expect("write its stdin");
    child.wait_with_output().expect("wait for the command")
}

/// Starts `cmd` (stdout and stderr captured), sends it SIGINT (Ctrl-C) after `after`, and
/// waits for it.
pub fn interrupted_after(cmd: &mut Command, after: std::time::Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    std::thread::sleep(after);
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(st.success(), "kill -INT {}", child.id());
    child.wait_with_output().expect("wait for the command")
}

/// Runs `cmdline` under `script`, which gives it a pseudo-terminal, and returns what it drew
/// (the run must succeed).
pub fn on_a_terminal(cmdline: &str) -> String {
    let out = Command::new("script")
        .args(["-qfec", cmdline, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    stdout_ok(&out)
}

/// kubernetes-validate --strict on YAML for a Kubernetes version (offline schemas): whether it
/// passed and what it said; `None` when the tool is not installed (scripts/test.sh installs it
/// with pip; under CI its absence fails the test).
pub fn kubernetes_validate(yaml: &str, version: &str) -> Option<(bool, String)> {
    let found = Command::new("kubernetes-validate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !crate::strict(),
            "kubernetes-validate is missing under CI: scripts/test.sh installs it with pip"
        );
        eprintln!(
            "skipped: kubernetes-validate is not installed (pip install kubernetes-validate)"
        );
        return None;
    }
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(yaml.as_bytes()).unwrap();
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "-k", version])
        .arg(f.path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), text))
}

/// A command line as a user types it, split at spaces, with each word `{}` replaced by `path`
/// (whole, so a path with a space stays one argument).
pub fn argv<'a>(line: &'a str, path: &'a str) -> Vec<&'a str> {
    line.split_whitespace()
        .map(|w| if w == "{}" { path } else { w })
        .collect()
}

/// A command line as a user types it, split at spaces.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Asserts that one of `list` (notes, requests, lines) starts with `prefix`; a failure prints
/// them all.
pub fn assert_any_starts_with(list: &[String], prefix: &str) {
    assert!(
        list.iter().any(|s| s.starts_with(prefix)),
        "none starts with {prefix:?}: {list:#?}"
    );
}
