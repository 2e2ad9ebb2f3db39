//! QA: `simulate` drew no progress line: a 20-million-request trace replayed for minutes with
//! nothing on the terminal, while `bench` and `trace record` show one. It now draws "simulate
//! 12s  43 % of the trace  ETA 16s" once a second on a terminal (the bytes read from a FIFO,
//! whose size is unknown) and erases it before the table; never with --quiet or off a terminal.
//! `trace stats` draws the same line.

use disktier_cachesim::trace::{Header, Op, Record, Writer};
use disktier_testkit::cli::on_a_terminal;
use disktier_testkit::{have, require};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A trace of `n` 4 KiB reads over 64 blocks.
fn trace(n: u64) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    for i in 0..n {
        w.write(&Record::new(i, i % 64 * 4096, 4096, Op::Read))
            .unwrap();
    }
    w.finish().unwrap()
}

/// Runs `simulate` (with `extra` options) on a terminal reading a FIFO that sends half the
/// trace, waits 2.5 s, then sends the rest; returns what the terminal showed.
fn slow_simulate(dir: &Path, extra: &str) -> String {
    slow(
        dir,
        extra,
        "simulate --policies lru --cache-sizes 1MiB --no-mrc --trace",
    )
}

/// Runs `disktier [extra] COMMAND FIFO` on a terminal, the FIFO sending half the trace, then the
/// rest 2.5 s later; returns what the terminal showed.
fn slow(dir: &Path, extra: &str, command: &str) -> String {
    let fifo = dir.join("t.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let bytes = trace(1000);
    let feeder = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            f.write_all(&bytes[..bytes.len() / 2]).unwrap();
            f.flush().unwrap();
            std::thread::sleep(Duration::from_millis(2500));
            f.write_all(&bytes[bytes.len() / 2..]).unwrap();
        })
    };
    let cmd = format!(
        "DISKTIER_DB={} {} --no-save {extra} {command} {}",
        dir.join("db").display(),
        assert_cmd::cargo::cargo_bin("disktier").display(),
        fifo.display()
    );
    let shown = on_a_terminal(&cmd);
    feeder.join().unwrap();
    shown
}

#[test]
fn a_slow_simulate_draws_a_progress_line_on_a_terminal_and_erases_it() {
    if !require(have("script"), "script (util-linux) for a pseudo-terminal") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let shown = slow_simulate(d.path(), "");
    assert!(
        shown.contains("\rsimulate 1s  ") && shown.contains(" of the trace\x1b[K"),
        "no progress line: {shown:?}"
    );
    assert!(shown.contains("\x1b[2K"), "not erased: {shown:?}");
    assert!(shown.contains("lru"), "no table: {shown:?}");
    let quiet = slow_simulate(d.path(), "--quiet");
    assert!(
        !quiet.contains("simulate 1s") && !quiet.contains("\x1b[K"),
        "{quiet:?}"
    );
    assert!(quiet.contains("lru"), "{quiet:?}");
}

/// QA (session 27): `trace stats` of a long trace read for minutes with nothing on the
/// terminal, while `simulate` drew its line. It draws the same line now ("trace stats 1s  ...
/// of the trace"), on stderr and erased before the description, also with --format json (whose
/// document is on stdout); never with --quiet.
#[test]
fn a_slow_trace_stats_draws_a_progress_line_on_a_terminal_and_erases_it() {
    if !require(have("script"), "script (util-linux) for a pseudo-terminal") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for format in ["", "--format json"] {
        let shown = slow(d.path(), format, "trace stats");
        assert!(
            shown.contains("\rtrace stats 1s  ") && shown.contains(" of the trace\x1b[K"),
            "{format}: no progress line: {shown:?}"
        );
        assert!(shown.contains("\x1b[2K"), "{format}: not erased: {shown:?}");
        assert!(
            shown.contains("1000"),
            "{format}: no description: {shown:?}"
        );
    }
    let quiet = slow(d.path(), "--quiet", "trace stats");
    assert!(
        !quiet.contains("trace stats 1s") && !quiet.contains("\x1b[K"),
        "{quiet:?}"
    );
    assert!(quiet.contains("1000"), "{quiet:?}");
}
