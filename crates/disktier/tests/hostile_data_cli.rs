//! (bench, catalog, import, trace: the data side of the hostile-input sweep; setup, render and disks are in hostile_cli.rs.)
//! A hostile-input sweep over bench, import, catalog, price, plan, trace and simulate (#13):
//! truncated and binary files, huge sizes, NaN, an existing file, a catalog overlay that divides
//! by zero, a file that changes between two reads. Each gets one clear error and exit status 2:
//! never a panic (101), a hang or a change to what was not asked for.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_disktier"))
}

/// Runs disktier with `args` in `dir`, with a private store and no catalog from the
/// environment, killed after a minute (a hang fails the test).
fn run(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(bin())
        .current_dir(dir)
        .env("DISKTIER_DB", dir.join("db.sqlite"))
        .env_remove("DISKTIER_CATALOG")
        .env("DISKTIER_TODAY", disktier_testkit::cli::TODAY)
        .env("NO_COLOR", "1")
        .arg("--no-save")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("disktier {args:?} hung");
}

/// Exit 2 with one error line that contains every one of `want`.
fn refused(dir: &Path, args: &[&str], want: &[&str]) -> String {
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{args:?}: no error line in {err}"));
    for w in want {
        assert!(line.contains(w), "{args:?}: {line:?} lacks {w:?}");
    }
    line.to_string()
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").unwrap()
}

/// Regression: `bench FILE --rw write` overwrote an existing regular file.
#[test]
fn bench_refuses_to_write_an_existing_file_unless_destructive() {
    let d = scratch();
    let f = d.path().join("notes.txt");
    std::fs::write(&f, b"my data\n").unwrap();
    let fs = f.to_str().unwrap();
    for engine in ["native", "fio"] {
        if engine == "fio" && !disktier_testkit::have("fio") {
            continue;
        }
        refused(
            d.path(),
            &[
                "bench", fs, "--rw", "write", "--size", "64k", "--engine", engine,
            ],
            &["already exists", "--destructive"],
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"my data\n", "{engine}");
    }
    let out = run(
        d.path(),
        &[
            "bench",
            fs,
            "--rw",
            "write",
            "--size",
            "64k",
            "--destructive",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(std::fs::read(&f).unwrap(), b"my data\n");
}

/// Regression: an overlay with unit_gib = 0 made price and plan divide by zero, and
/// `catalog check` called it fine.
#[test]
fn a_catalog_overlay_with_bad_numbers_is_refused_everywhere() {
    let d = scratch();
    std::fs::write(
        d.path().join("zero.toml"),
        r#"
[[volume_type]]
name = "local-ssd"
cloud = "gcp"
min_gib = 375
max_gib = 9000
unit_gib = 0
source = "test"
date = "2026-01"
iops = { model = "unknown" }
throughput = { model = "unknown" }

[[volume_price]]
region = "us-east-1"
type = "gp3"
storage_gb_month = nan
source = "test"
date = "2026-01"
"#,
    )
    .unwrap();
    for args in [
        &[
            "--catalog",
            "zero.toml",
            "price",
            "local-ssd",
            "--size",
            "750GiB",
            "--region",
            "us-central1",
        ][..],
        &[
            "--catalog",
            "zero.toml",
            "plan",
            "--capacity",
            "1TiB",
            "--region",
            "us-central1",
        ],
        &["--catalog", "zero.toml", "catalog", "check"],
        &["--catalog", "zero.toml", "price", "gp3", "--size", "100GiB"],
    ] {
        refused(
            d.path(),
            args,
            &[
                "zero.toml",
                "unit_gib = 0",
                "storage_gb_month = NaN",
                "write a",
            ],
        );
    }
}

#[test]
fn binary_truncated_and_huge_inputs_are_clear_errors() {
    let d = scratch();
    let junk: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(d.path().join("junk.bin"), &junk).unwrap();
    std::fs::write(
        d.path().join("cut.json"),
        br#"{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "read": {"#,
    )
    .unwrap();
    let msr = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cachesim/tests/fixtures/msr.csv");
    let out = run(
        d.path(),
        &[
            "trace",
            "import",
            "msr",
            msr.to_str().unwrap(),
            "-o",
            "good.dt",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let good = std::fs::read(d.path().join("good.dt")).unwrap();
    std::fs::write(d.path().join("cut.dt"), &good[..good.len() / 2]).unwrap();

    refused(
        d.path(),
        &["--catalog", "junk.bin", "price", "gp3", "--size", "10GiB"],
        &["junk.bin"],
    );
    refused(
        d.path(),
        &["import", "fio", "junk.bin"],
        &["junk.bin", "not fio JSON"],
    );
    refused(d.path(), &["import", "fio", "cut.json"], &["cut.json"]);
    refused(
        d.path(),
        &["trace", "stats", "junk.bin"],
        &["not a disktier trace"],
    );
    refused(
        d.path(),
        &["simulate", "--trace", "junk.bin", "--cache-sizes", "1GiB"],
        &["junk.bin"],
    );
    refused(
        d.path(),
        &["trace", "import", "blkparse", "junk.bin", "-o", "x.dt"],
        &["no valid blkparse records"],
    );
    assert!(!d.path().join("x.dt").exists(), "no half-written trace");
    refused(
        d.path(),
        &["simulate", "--trace", "good.dt", "--cache-sizes", "1PiB"],
        &["--sample"],
    );
    refused(
        d.path(),
        &[
            "simulate",
            "--trace",
            "good.dt",
            "--cache-sizes",
            "1GiB",
            "--sample",
            "nan",
        ],
        &["--sample"],
    );
    refused(
        d.path(),
        &["price", "gp3", "--size", "99999999999TiB"],
        &["--size"],
    );
    refused(
        d.path(),
        &[
            "plan",
            "--capacity",
            "5TiB",
            "--hit-ratio",
            "nan",
            "--allow-hybrid",
        ],
        &["hit ratio"],
    );
    refused(
        d.path(),
        &["bench", "new.dat", "--rw", "read", "--size", "16EiB"],
        &[],
    );
    // A truncated trace: the complete records are used and the cut is reported, or refused.
    let out = run(d.path(), &["trace", "stats", "cut.dt"]);
    assert!(matches!(out.status.code(), Some(0) | Some(2)), "{out:?}");
}

/// A catalog file that changes between two runs is read whole each time; one that grows past
/// the cap is refused without reading it all.
#[test]
fn a_catalog_file_past_its_size_cap_is_refused() {
    let d = scratch();
    let mut big = String::from("# padding\n");
    while big.len() < (17 << 20) {
        big.push_str("# ................................................................\n");
    }
    std::fs::write(d.path().join("big.toml"), big).unwrap();
    refused(
        d.path(),
        &["--catalog", "big.toml", "catalog", "check"],
        &["big.toml"],
    );
}

/// Fault (#13): the filesystem holding the trace fills up during `trace record`: exit 2, an
/// error that says the filesystem is full, and neither the partial trace nor the job's file is
/// left. A real 32 KiB tmpfs, mounted and unmounted here.
#[test]
fn trace_record_on_a_full_filesystem_removes_the_partial_trace() {
    if !disktier_testkit::require(disktier_testkit::is_root(), "root (mount a tmpfs)") {
        return;
    }
    let d = scratch();
    let m = disktier_testkit::Mount::tmpfs(32 * 1024);
    let out = m.dir.join("t.dtt");
    let target = d.path().join("data");
    refused(
        d.path(),
        &[
            "trace",
            "record",
            target.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--size",
            "32m",
            "--ioengine",
            "psync",
        ],
        &["filesystem is full", "removed"],
    );
    assert!(!out.exists(), "partial trace removed");
    assert!(!target.exists(), "the job's file removed");
}

/// QA #2: two `[[volume_price]]` rows of one region and type were merged last-wins and
/// `catalog check` said ok; the same for every table of an overlay.
#[test]
fn an_overlay_listing_a_key_twice_is_refused_naming_both_entries() {
    let d = scratch();
    let row = |table: &str, body: &str| {
        format!("[[{table}]]\n{body}source = \"x\"\ndate = \"2026-10\"\n\n")
    };
    let price = "region = \"us-east-1\"\ntype = \"gp3\"\nstorage_gb_month = 0.07\n";
    let inst = "name = \"m6i.large\"\ncloud = \"aws\"\n";
    std::fs::write(
        d.path().join("dup.toml"),
        row("volume_price", price) + &row("volume_price", price),
    )
    .unwrap();
    std::fs::write(
        d.path().join("dupi.toml"),
        row("instance", inst) + &row("volume_price", price) + &row("instance", inst),
    )
    .unwrap();
    for args in [
        &["--catalog", "dup.toml", "catalog", "check"][..],
        &["--catalog", "dup.toml", "price", "gp3", "--size", "10GiB"],
        &["--catalog", "dup.toml", "plan", "--capacity", "10GiB"],
    ] {
        refused(
            d.path(),
            args,
            &["dup.toml lists the same entry twice: [[volume_price]] us-east-1 gp3 is entry 1 (line 1) and entry 2 (line 8): keep one"],
        );
    }
    refused(
        d.path(),
        &["--catalog", "dupi.toml", "catalog", "check"],
        &["[[instance]] m6i.large is entry 1 (line 1) and entry 2 (line 14)"],
    );
}

/// QA #3: control characters of an overlay's strings reached the terminal raw through price,
/// catalog show and catalog check.
#[test]
fn control_characters_in_an_overlay_are_refused_and_never_printed() {
    let d = scratch();
    std::fs::write(
        d.path().join("ctl.toml"),
        "[[volume_price]]\nregion = \"us-east-1\"\ntype = \"gp3\"\nstorage_gb_month = 0.07\nsource = \"line1\\nline2\\u001b[31mRED\\u0007\"\ndate = \"2026-10\"\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("name.toml"),
        "[[region]]\nname = \"mars\\u001b]0;x\\u0007\"\ncloud = \"aws\"\n",
    )
    .unwrap();
    for (file, want) in [
        (
            "ctl.toml",
            "volume_price us-east-1 gp3: source has a control character (U+000A at character 6)",
        ),
        (
            "name.toml",
            "region mars\\u{1b}]0;x\\u{7}: name has a control character (U+001B at character 5)",
        ),
    ] {
        for args in [
            &["--catalog", file, "price", "gp3", "--size", "10GiB"][..],
            &["--catalog", file, "catalog", "show"],
            &["--catalog", file, "catalog", "check"],
        ] {
            refused(d.path(), args, &[want]);
            let out = run(d.path(), args);
            let all = [out.stdout, out.stderr].concat();
            assert!(
                !all.iter().any(|b| *b == 0x1b || *b == 0x07),
                "{args:?}: {}",
                String::from_utf8_lossy(&all)
            );
        }
    }
}

/// QA #8: `--catalog FIFO` waited forever for a writer.
#[test]
fn a_fifo_or_a_directory_as_catalog_is_refused_not_waited_on() {
    let d = scratch();
    let st = Command::new("mkfifo")
        .arg(d.path().join("f"))
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::create_dir(d.path().join("dir")).unwrap();
    refused(
        d.path(),
        &["--catalog", "f", "price", "gp3", "--size", "10GiB"],
        &["catalog f is a FIFO (named pipe), not a regular file: pass the path of a catalog TOML file"],
    );
    refused(
        d.path(),
        &["--catalog", "dir", "catalog", "check"],
        &["catalog dir is a directory, not a regular file"],
    );
}

/// QA #7: `DISKTIER_CATALOG= disktier price ...` failed with "a value is required".
#[test]
fn an_empty_disktier_catalog_is_no_overlay() {
    let d = scratch();
    let out = Command::new(bin())
        .current_dir(d.path())
        .env("DISKTIER_DB", d.path().join("db.sqlite"))
        .env("DISKTIER_CATALOG", "")
        .args(["--no-save", "price", "gp3", "--size", "10GiB"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 10 x $0.08 = $0.80.
    assert!(String::from_utf8_lossy(&out.stdout).contains("$0.80/month"));
}
