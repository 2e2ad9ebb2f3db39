//! `disktier trace` and `disktier simulate` driven through the real binary: importers on
//! hand-written fixtures in each public format (plain, gzip, zstd), malformed-line reporting
//! and `--strict`, stats and simulation JSON, and a trace recorded from the real engine that
//! replays to the engine's own counts.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::Succeeds;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cachesim/tests/fixtures")
        .join(name)
}

fn bin(db: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db);
    c
}

/// Imports `fixture` and returns the import report.
fn import(dir: &Path, format: &str, name: &str) -> (Value, PathBuf) {
    let out = dir.join(format!("{name}.dtt"));
    (
        bin(&dir.join("db"))
            .args(["--format", "json", "trace", "import", format])
            .arg(fixture(name))
            .arg("-o")
            .arg(&out)
            .json_ok(),
        out,
    )
}

/// A scratch directory holding the trace [`import`] made of `fixture`, and that trace.
fn imported(format: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (_, trace) = import(dir.path(), format, name);
    (dir, trace)
}

/// `simulate --format json` of `trace` with `args`.
fn simulate(dir: &Path, trace: &Path, args: &[&str]) -> Value {
    bin(&dir.join("db"))
        .args(["--format", "json", "simulate"])
        .args(args)
        .arg("--trace")
        .arg(trace)
        .json_ok()
}

fn stats(dir: &Path, trace: &Path) -> Value {
    bin(&dir.join("db"))
        .args(["--format", "json", "trace", "stats"])
        .arg(trace)
        .json_ok()
}

#[test]
fn every_importer_reads_its_fixture_and_counts_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    // (format, fixture, records, malformed, first malformed line, [reads, writes, syncs, discards])
    type Case = (&'static str, &'static str, u64, u64, Option<u64>, [u64; 4]);
    let cases: &[Case] = &[
        // Q events only: WS, R, WS, FWS 0+0 (a flush), D, RA; one garbage line (13); the
        // summary at the end is skipped.
        ("blkparse", "blkparse.txt", 6, 1, Some(13), [2, 2, 1, 1]),
        // "Sideways" (line 5) and a non-numeric offset (line 7) are malformed.
        ("msr", "msr.csv", 5, 2, Some(5), [3, 2, 0, 0]),
        ("msr", "msr.csv.gz", 5, 2, Some(5), [3, 2, 0, 0]),
        // opcode X on line 5
        ("alibaba", "alibaba.csv", 5, 1, Some(5), [2, 3, 0, 0]),
        ("alibaba", "alibaba.csv.zst", 5, 1, Some(5), [2, 3, 0, 0]),
        // IO type 7 on line 5
        ("tencent", "tencent.csv", 5, 1, Some(5), [3, 2, 0, 0]),
        // write, write, (wait), read, datasync, trim; "read 0" without a length on line 10
        ("fio-iolog", "fio-v2.log", 5, 1, Some(10), [1, 2, 1, 1]),
        ("fio-iolog", "fio-v3.log", 7, 0, None, [5, 1, 1, 0]),
    ];
    for &(format, name, records, malformed, first, [reads, writes, syncs, discards]) in cases {
        let (rep, out) = import(dir.path(), format, name);
        assert_eq!(rep["schema_version"], 1);
        assert_eq!(rep["records"], records, "{name}: {rep}");
        assert_eq!(rep["malformed"], malformed, "{name}: {rep}");
        assert_eq!(
            rep["first_malformed"].get(0).and_then(Value::as_u64),
            first,
            "{name}"
        );
        let want_compression = if name.ends_with(".gz") {
            "gzip"
        } else if name.ends_with(".zst") {
            "zstd"
        } else {
            "none"
        };
        assert_eq!(rep["compression"], want_compression);
        let s = stats(dir.path(), &out);
        assert_eq!(s["schema_version"], 1);
        assert_eq!(
            (
                s["reads"].as_u64(),
                s["writes"].as_u64(),
                s["syncs"].as_u64(),
                s["discards"].as_u64()
            ),
            (Some(reads), Some(writes), Some(syncs), Some(discards)),
            "{name}: {s}"
        );
    }
}

#[test]
fn importer_details_survive_the_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    // MSR: 32 KiB reads at 383496192 twice, 383528960 once; 4 KiB writes; the first read and
    // the last are 0.0239381 s apart (239381 filetime ticks of 100 ns).
    let (_, out) = import(dir.path(), "msr", "msr.csv");
    let s = stats(dir.path(), &out);
    assert_eq!(s["read_bytes"], 3 * 32768);
    assert_eq!(s["write_bytes"], 2 * 4096);
    assert!(
        (s["seconds"].as_f64().unwrap() - 0.0239381).abs() < 1e-9,
        "{s}"
    );
    // disks 0 and 1
    assert_eq!(s["streams"], 2);
    // footprint: 16 blocks of reads (two 32 KiB extents) + 2 written blocks
    assert_eq!(s["footprint_bytes"], 18 * 4096);
    // blkparse: sectors are 512 bytes; the 256-sector reads are 128 KiB
    let (_, out) = import(dir.path(), "blkparse", "blkparse.txt");
    let s = stats(dir.path(), &out);
    assert_eq!(s["read_bytes"], 2 * 131072);
    assert_eq!(s["discard_bytes"], 2048 * 512);
    // "RA 409856" continues "R 409600 + 256" of the same pid: one sequential request, and the
    // second WS continues the first WS of pid 4162: two of four data requests
    assert_eq!(s["sequential_fraction"], 0.5);
}

#[test]
fn strict_stops_at_the_first_malformed_line_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.dtt");
    bin(&dir.path().join("db"))
        .args(["trace", "import", "msr", "--strict"])
        .arg(fixture("msr.csv"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("msr.csv:5: malformed msr line"));
    assert!(!out.exists());
    // without --strict the count and the line numbers are reported on stderr
    bin(&dir.path().join("db"))
        .args(["trace", "import", "msr"])
        .arg(fixture("msr.csv"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "2 malformed line(s) skipped, first at line(s) 5, 7",
        ));
    // an unknown format and a file that is not a trace are one-line errors naming the fix
    bin(&dir.path().join("db"))
        .args(["trace", "import", "csv"])
        .arg(fixture("msr.csv"))
        .args(["-o", "/dev/null"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "blkparse, msr, alibaba, tencent, fio-iolog",
        ));
    bin(&dir.path().join("db"))
        .args(["trace", "stats"])
        .arg(fixture("msr.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("trace import"));
}

#[test]
fn simulate_json_has_the_documented_shape_and_hand_computed_hits() {
    let (dir, trace) = imported("msr", "msr.csv");
    // Block accesses at 4 KiB: read 8 blocks (A), write 1, write 1, read 8 (B), read A again.
    // 26 accesses; in a 2 MiB cache nothing is evicted, so only the 8 re-reads of A hit:
    // hit ratio 8/26, reads 8/24, writes 0/2 — for every policy (bcache's sequential cutoff
    // is far away: the longest run is 64 KiB).
    let v = simulate(
        dir.path(),
        &trace,
        &[
            "--cache-sizes",
            "2MiB,4MiB",
            "--policies",
            "lru,arc,s3fifo,bcache",
        ],
    );
    assert_eq!(v["schema_version"], 1);
    for k in [
        "requests",
        "seconds",
        "requests_per_second",
        "results",
        "mrc",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    // 2 sizes x 4 policies, each replaying the 5 requests
    assert_eq!(v["requests"], 40);
    for r in results {
        assert!(r["policy"].is_string() && r["cache_bytes"].is_u64());
        assert!(
            (r["hit_ratio"].as_f64().unwrap() - 8.0 / 26.0).abs() < 1e-12,
            "{r}"
        );
        assert!(
            (r["read_hit_ratio"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12,
            "{r}"
        );
        assert_eq!(r["write_hit_ratio"].as_f64().unwrap(), 0.0);
        // the 16 missed read blocks come from the backing device
        assert_eq!(r["backing_read_bytes"], 16 * 4096, "{r}");
    }
    let mrc = &v["mrc"]["points"];
    assert!((mrc[0]["miss_ratio"].as_f64().unwrap() - 18.0 / 26.0).abs() < 1e-12);
}

#[test]
fn simulate_rejects_bad_options_with_the_fix() {
    let (dir, trace) = imported("msr", "msr.csv");
    for (args, msg) in [
        (
            vec!["--cache-sizes", "1GiB", "--policies", "lru,mru"],
            "unknown cache policy",
        ),
        (vec!["--cache-sizes", "8GiB..1GiB"], "--cache-sizes"),
        (
            vec!["--cache-sizes", "1MiB", "--policies", "bcache"],
            "fewer than 4 bcache buckets",
        ),
        (vec!["--cache-sizes", "1GiB", "--sample", "2"], "--sample"),
        (vec!["--cache-sizes", "1GiB", "--block", "3000"], "--block"),
        // Regression (QA): every figure 100 % hits or 16384.00 PiB.
        (
            vec!["--cache-sizes", "16MiB,256MiB", "--sample", "1e-30"],
            "invalid --sample: 0.000000000000000000000000000001 is below 1/2^24",
        ),
        // Regression (QA): bcache hit 20.9 % where the exact replay hit 0.19 %.
        (
            vec![
                "--cache-sizes",
                "16MiB,256MiB",
                "--sample",
                "0.01",
                "--policies",
                "lru,bcache",
            ],
            "at --sample 0.01 the 16 MiB cache is simulated as 163.84 KiB, fewer than 4 bcache buckets",
        ),
        // Regression (QA): the message named --bcache-writeback-percent, which does not exist.
        (
            vec!["--cache-sizes", "1GiB", "--writeback-percent", "101"],
            "invalid --writeback-percent: 101 is over 100",
        ),
        // Regression (QA): "1 GiB is out of range".
        (
            vec![
                "--cache-sizes",
                "1GiB",
                "--cache-volume",
                "gp3:10GiB",
                "--backing-volume",
                "st1:0",
            ],
            "--backing-volume \"st1:0\": the size is 0",
        ),
    ] {
        bin(&dir.path().join("db"))
            .arg("simulate")
            .args(&args)
            .arg("--trace")
            .arg(&trace)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
}

#[test]
fn simulate_predicts_with_catalog_volumes() {
    let (dir, trace) = imported("alibaba", "alibaba.csv");
    let v = simulate(
        dir.path(),
        &trace,
        &"--cache-sizes 4MiB --policies bcache --bcache-mode writeback \
          --cache-volume gp3:32GiB:16000:1000 --backing-volume st1:1TiB"
            .split_whitespace()
            .collect::<Vec<_>>(),
    );
    let p = &v["results"][0]["prediction"];
    assert!(p["max_iops_sustained"].as_f64().unwrap() > 0.0, "{v}");
    assert!(p["p99_latency_s"].as_f64().unwrap() > 0.0);
    // st1's burst bucket is in the model
    assert!(v["backing_device"]["burst"].is_object(), "{v}");
}

#[test]
fn a_recorded_trace_replays_to_the_engines_own_counts() {
    // A small psync randrw job with an fsync every 8 writes on a file in a temp dir; the
    // trace's statistics must match what the engine counted (ios and bytes per direction).
    let dir = tempfile::Builder::new()
        .prefix("disktier-trace")
        .tempdir_in("/var/tmp")
        .unwrap();
    let target = dir.path().join("data");
    let out = dir.path().join("t.dtt");
    let rec = bin(&dir.path().join("db"))
        .args(["--format", "json", "--no-save", "trace", "record"])
        .arg(&target)
        .arg("-o")
        .arg(&out)
        .args(
            "--rw randrw --bs 4k --size 2m --ioengine psync --fsync 8 --direct=false"
                .split_whitespace(),
        )
        .json_ok();
    let e = &rec["engine"];
    assert!(
        e["read_ios"].as_u64().unwrap() > 0 && e["write_ios"].as_u64().unwrap() > 0,
        "{rec}"
    );
    let s = stats(dir.path(), &out);
    assert_eq!(s["truncated"], false);
    assert_eq!(s["reads"], e["read_ios"], "{s} vs {rec}");
    assert_eq!(s["writes"], e["write_ios"]);
    assert_eq!(s["read_bytes"], e["read_bytes"]);
    assert_eq!(s["write_bytes"], e["write_bytes"]);
    assert_eq!(s["syncs"], e["sync_ios"]);
    assert_eq!(s["requests"], rec["records"]);
    // 2 MiB in 4 KiB blocks: the footprint cannot exceed the file
    assert!(s["footprint_bytes"].as_u64().unwrap() <= 2 << 20);
}

/// QA: the cache sizes `trace record` suggests were bounded by the bytes the run moved, which a
/// time-based run moves many times over its region: a 2 s randread of a 16 MiB device that
/// moved 872 MiB was offered `--cache-sizes 64MiB..1GiB`, every size past its 16 MiB
/// footprint. They are bounded by the range the I/Os spanned too.
#[test]
fn a_time_based_record_suggests_sizes_within_its_region() {
    let dir = tempfile::Builder::new()
        .prefix("disktier-trace")
        .tempdir_in("/var/tmp")
        .unwrap();
    let out = dir.path().join("t.dtt");
    bin(&dir.path().join("db"))
        .args(["--no-save", "trace", "record"])
        .arg(dir.path().join("data"))
        .arg("-o")
        .arg(&out)
        .args(
            "--rw randread --bs 4k --size 1m --ioengine psync --direct=false --time-based --runtime 1s"
                .split_whitespace(),
        )
        .assert()
        .success()
        .stderr(predicate::str::contains("--cache-sizes 64KiB..1MiB"));
}

/// QA: `trace record --numjobs 2` on a directory wrote both jobs' files as stream 0, so the
/// two 1 MiB files read as one 1 MiB footprint; jobs on one file share it.
#[test]
fn recorded_jobs_keep_their_own_files_apart() {
    let dir = tempfile::Builder::new()
        .prefix("disktier-trace")
        .tempdir_in("/var/tmp")
        .unwrap();
    let record = |target: &Path, out: &Path| {
        bin(&dir.path().join("db"))
            .args(["--format", "json", "--no-save", "trace", "record"])
            .arg(target)
            .arg("-o")
            .arg(out)
            .args("--rw read --bs 4k --size 1m --numjobs 2 --ioengine psync".split_whitespace())
            .json_ok()
    };
    let jobs_dir = dir.path().join("jobs");
    std::fs::create_dir(&jobs_dir).unwrap();
    let own = dir.path().join("own.dtt");
    record(&jobs_dir, &own);
    let s = stats(dir.path(), &own);
    assert_eq!(s["streams"], 2, "{s}");
    assert_eq!(s["read_bytes"], 2 << 20, "{s}");
    assert_eq!(s["footprint_bytes"], 2 << 20, "{s}");
    let shared = dir.path().join("shared.dtt");
    record(&dir.path().join("one-file"), &shared);
    let s = stats(dir.path(), &shared);
    assert_eq!(s["streams"], 1, "{s}");
    assert_eq!(s["read_bytes"], 2 << 20, "{s}");
    assert_eq!(s["footprint_bytes"], 1 << 20, "{s}");
}

#[test]
fn bench_trace_is_finished_when_the_run_ends() {
    // `bench --trace` hands the log to the engine and drops it: the trailer must be written.
    let dir = tempfile::Builder::new()
        .prefix("disktier-trace")
        .tempdir_in("/var/tmp")
        .unwrap();
    let out = dir.path().join("b.dtt");
    let doc = bin(&dir.path().join("db"))
        .args(["--format", "json", "--no-save", "bench"])
        .arg(dir.path().join("data"))
        .args(
            "--rw randread --bs 4k --size 1m --ioengine psync --direct=false --trace"
                .split_whitespace(),
        )
        .arg(&out)
        .json_ok();
    let s = stats(dir.path(), &out);
    assert_eq!(s["truncated"], false, "{s}");
    assert_eq!(s["reads"], doc["results"]["read"]["ios"]);
    assert_eq!(s["read_bytes"], doc["results"]["read"]["bytes"]);
}

/// QA: `bench --trace` wrote over any file (the store, a user's file) and dropped the trace's
/// write errors (a full disk cut it short, exit 0). A file that is not a trace is refused
/// before the run and left as it was; a trace that cannot be written fails the command (exit
/// 2) after the run is saved and printed.
#[test]
fn bench_trace_refuses_other_files_and_reports_write_errors() {
    let dir = tempfile::Builder::new()
        .prefix("disktier-trace")
        .tempdir_in("/var/tmp")
        .unwrap();
    let db = dir.path().join("db");
    let job = "--rw write --bs 4k --size 256k --ioengine psync --direct=false --trace";
    std::fs::write(&db, "SQLite format 3\0").unwrap();
    bin(&db)
        .args(["--no-save", "bench"])
        .arg(dir.path().join("data"))
        .args(job.split_whitespace())
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a disktier trace"));
    assert_eq!(std::fs::read(&db).unwrap(), b"SQLite format 3\0");
    std::fs::remove_file(&db).unwrap();
    if !disktier_testkit::require(disktier_testkit::is_root(), "root (a tmpfs mount)") {
        return;
    }
    // A full filesystem: a 64 KiB tmpfs with 60 KiB taken.
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&small)
        .status()
        .unwrap();
    assert!(mounted.success());
    std::fs::write(small.join("filler"), vec![1u8; 60 << 10]).ok();
    let out = bin(&db)
        .args(["bench"])
        .arg(dir.path().join("data"))
        .args(
            "--rw write --bs 4k --size 8m --ioengine psync --direct=false --trace"
                .split_whitespace(),
        )
        .arg(small.join("t.dtt"))
        .output()
        .unwrap();
    let exists = small.join("t.dtt").exists();
    let _ = std::process::Command::new("umount").arg(&small).status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("write"));
    assert!(
        err.contains("saved as run") && err.contains("No space left"),
        "{err}"
    );
    assert!(err.contains("the partial trace was removed"), "{err}");
    assert!(!exists, "the partial trace is removed");
}

#[test]
fn plan_budget_keeps_options_within_it_best_first() {
    // `plan --budget` (wired by this area into the planner's command): options within the
    // monthly budget, best predicted IOPS first; over-budget ones are listed as rejected.
    let (dir, trace) = imported("msr", "msr.csv");
    let v = bin(&dir.path().join("db"))
        .args("--format json plan --capacity 1TiB --budget 100 --trace".split_whitespace())
        .arg(&trace)
        .json_ok();
    let opts = v["options"].as_array().unwrap();
    assert!(!opts.is_empty(), "{v}");
    let iops: Vec<f64> = opts
        .iter()
        .map(|o| {
            assert!(o["monthly_cost_usd"].as_f64().unwrap() <= 100.0, "{o}");
            o["performance"]["iops"].as_f64().unwrap_or(0.0)
        })
        .collect();
    assert!(iops.windows(2).all(|w| w[0] >= w[1]), "{iops:?}");
    assert!(v["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["reason"].as_str().unwrap().starts_with("over the budget")));
    bin(&dir.path().join("db"))
        .args(["plan", "--capacity", "1TiB", "--budget", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("raise --budget"));
}

/// `simulate` reads the trace once, in chunks shared by every replay (cachesim's stream): on a
/// trace of several chunks its rows equal the library's in-memory replay of the same records;
/// a trace cut short (no trailer) is simulated up to the cut with a warning; and a trace
/// corrupted far past the first chunk is an error naming the trace, with no rows printed.
#[test]
fn simulate_streams_long_cut_and_corrupt_traces() {
    use disktier_cachesim::policy::{bcache::BcacheConfig, smq::SmqConfig, PolicyKind};
    use disktier_cachesim::sim::{self, SimConfig};
    use disktier_cachesim::trace::{Header, Op, Record, Writer};
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.dtt");
    let recs: Vec<Record> = (0..70_000u64)
        .map(|i| {
            let op = if i % 4 == 0 { Op::Write } else { Op::Read };
            // A hot set of 50 blocks and a loop over 800 more: a cache of 1,000 blocks holds
            // both, one of 100 only the hot set.
            let block = if i % 3 == 0 {
                i % 50
            } else {
                50 + i * 7_919 % 800
            };
            Record::new(i * 1_000, block * 4096, 4096, op)
        })
        .collect();
    let mut w = Writer::create(&long, &Header::new("test", 0, 0)).unwrap();
    for r in &recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
    let cfg = SimConfig {
        block: 4096,
        policies: vec![PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3fifo],
        sizes: vec![4096 * 100, 4096 * 1_000],
        sample: None,
        bcache: BcacheConfig::default(),
        smq: SmqConfig::default(),
    };
    let want = sim::simulate(&cfg, &recs).unwrap();
    let args = [
        "--policies",
        "lru,arc,s3fifo",
        "--cache-sizes",
        "409600,4096000",
        "--no-mrc",
    ];
    let got = simulate(dir.path(), &long, &args);
    assert_eq!(got["trace_requests"], 70_000);
    let rows = got["results"].as_array().unwrap();
    assert_eq!(rows.len(), want.results.len());
    for (g, w) in rows.iter().zip(&want.results) {
        assert_eq!(g["policy"], w.policy_name());
        assert_eq!(g["read_hits"], w.counters.read_hits, "{g}");
        assert_eq!(g["write_hits"], w.counters.write_hits, "{g}");
        assert_eq!(g["backing_write_bytes"], w.counters.backing_write_bytes);
    }
    // The sizes and policies differ, so a row in the wrong place would fail above.
    assert_ne!(rows[0]["read_hits"], rows[1]["read_hits"]);

    // A writer that never finished (the recorder killed): whole records, no trailer (its tag
    // byte and the count 40,000 as a 3-byte varint).
    let cut = dir.path().join("cut.dtt");
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    for r in &recs[..40_000] {
        w.write(r).unwrap();
    }
    let whole = w.finish().unwrap();
    std::fs::write(&cut, &whole[..whole.len() - 4]).unwrap();
    let out = bin(&dir.path().join("db"))
        .args(["--format", "json", "simulate"])
        .args(args)
        .arg("--trace")
        .arg(&cut)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["trace_requests"], 40_000);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no trailer"));

    // Cut inside a record, and overwritten with garbage, both past the first chunks: errors.
    let bytes = std::fs::read(&long).unwrap();
    let half = dir.path().join("half.dtt");
    std::fs::write(&half, &bytes[..bytes.len() / 2 + 1]).unwrap();
    let bad = dir.path().join("bad.dtt");
    let mut b = bytes.clone();
    let at = b.len() * 3 / 4;
    b[at..at + 64].fill(0xff);
    std::fs::File::create(&bad).unwrap().write_all(&b).unwrap();
    bin(&dir.path().join("db"))
        .args(["--format", "json", "simulate"])
        .args(args)
        .arg("--trace")
        .arg(&bad)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains("cannot read the trace")
                .and(predicate::str::contains("bad.dtt")),
        );
}

/// Every command that reads a trace names a missing one exactly once in its error.
#[test]
fn a_missing_trace_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.dtt");
    let m = missing.to_str().unwrap();
    for line in [
        "trace stats {}",
        "simulate --trace {} --cache-sizes 1GiB",
        "plan --region us-east-1 --capacity 100GiB --iops 3000 --trace {}",
    ] {
        let args = disktier_testkit::cli::argv(line, m);
        let out = bin(&dir.path().join("db")).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot read the trace"), "{args:?}: {err}");
        assert_eq!(err.matches("missing.dtt").count(), 1, "{args:?}: {err}");
    }
}

/// Writes `recs` as a DTTRACE file at `path`.
fn write_trace(path: &Path, recs: &[disktier_cachesim::trace::Record]) {
    use disktier_cachesim::trace::{Header, Writer};
    use std::io::Write as _;
    let mut w = Writer::create(path, &Header::new("test", 0, 0)).unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
}

/// Regression (QA): a trace of only syncs simulated to "miss 100 %", IOPS 0/0 and a p99 of
/// 124 ms; it has no data accesses, and simulate says so. So does a trace of reads and writes
/// of 0 bytes (an Alibaba line of length 0), which printed a table of 100 % misses.
#[test]
fn a_trace_without_data_accesses_is_named() {
    use disktier_cachesim::trace::{Op, Record};
    let dir = tempfile::tempdir().unwrap();
    for (name, op) in [
        ("syncs", Op::Sync),
        ("empty-reads", Op::Read),
        ("empty-writes", Op::Write),
    ] {
        let t = dir.path().join(format!("{name}.dtt"));
        write_trace(&t, &[Record::new(0, 0, 0, op), Record::new(9, 4096, 0, op)]);
        // simulate, and plan --trace, which planned a hit ratio of 0 from such a trace (QA).
        let simulate =
            "simulate --cache-sizes 1GiB --cache-volume gp3:32GiB --backing-volume st1:1TiB";
        for args in [simulate, "--no-save plan --capacity 100GiB"] {
            bin(&dir.path().join("db"))
                .args(args.split_whitespace())
                .arg("--trace")
                .arg(&t)
                .assert()
                .code(2)
                .stdout(predicate::str::is_empty())
                .stderr(predicate::str::contains(
                    "has no data accesses: its 2 requests move no data",
                ));
        }
    }
}

/// The largest resident set of `disktier simulate ARGS --trace TRACE`, in KiB (wait4's own
/// rusage of that child, so tests running beside it do not count).
// The child is reaped by wait4(2), which std's `Child::wait` cannot give the rusage of.
#[allow(clippy::zombie_processes)]
fn simulate_rss_kib(dir: &Path, trace: &Path, args: &[&str]) -> i64 {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("disktier"))
        .env("DISKTIER_DB", dir.join("db"))
        .args(["--format", "json", "simulate"])
        .args(args)
        .arg("--trace")
        .arg(trace)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // # Safety: an all-zero rusage is a valid value to fill in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // # Safety: wait4(2) on the pid of the child spawned above, with valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}: {status}"
    );
    ru.ru_maxrss
}

/// Regression (QA): simulate's memory grew with the trace's time span, not its size: two
/// requests a week apart took 1.67 GB (30 days: 2.2 GB) with `--cache-sizes 1GiB..64GiB` and
/// five policies, from a per-second traffic series per replay. The series is kept only for
/// predictions and only for seconds with traffic: a month-long trace of two requests costs
/// what an hour-long one does, with and without predictions.
#[test]
fn simulate_memory_does_not_grow_with_the_trace_span() {
    use disktier_cachesim::trace::{Op, Record};
    let dir = tempfile::tempdir().unwrap();
    let two = |span_s: u64, name: &str| {
        let p = dir.path().join(name);
        write_trace(
            &p,
            &[
                Record::new(0, 0, 4096, Op::Read),
                Record::new(span_s * 1_000_000_000, 4096, 4096, Op::Write),
            ],
        );
        p
    };
    let hour = two(3_600, "hour.dtt");
    let month = two(30 * 86_400, "month.dtt");
    let args = ["--cache-sizes", "4MiB..32MiB", "--no-mrc"];
    let volumes = [
        "--cache-sizes",
        "4MiB..32MiB",
        "--no-mrc",
        "--cache-volume",
        "gp3:32GiB",
        "--backing-volume",
        "st1:1TiB",
    ];
    for a in [&args[..], &volumes[..]] {
        let (h, m) = (
            simulate_rss_kib(dir.path(), &hour, a),
            simulate_rss_kib(dir.path(), &month, a),
        );
        // 20 replays; before, the month took 55 MB of windows each (capped at 10 days).
        assert!(m < h + 16 * 1024, "{a:?}: an hour {h} KiB, a month {m} KiB");
    }
    // The month's prediction still sees both requests.
    let v = simulate(dir.path(), &month, &volumes);
    assert_eq!(v["trace_requests"], 2);
    assert!(
        v["results"][0]["prediction"]["p99_latency_s"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{v}"
    );
}

/// QA (re-test): a trace with 600,000 busy seconds was coarsened into 2 s windows (the bound
/// was 2^19), which averaged its bursts away: p99 429 ms where per-second queueing gives 6.4 s.
/// Up to 2^20 busy seconds are queued second by second, and the width is said.
#[test]
fn a_week_of_busy_seconds_is_predicted_second_by_second() {
    use disktier_cachesim::trace::{Op, Record};
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("week.dtt");
    let recs: Vec<Record> = (0..600_000u64)
        .map(|s| Record::new(s * 1_000_000_000, (s % 1024) * 4096, 4096, Op::Read))
        .collect();
    write_trace(&t, &recs);
    let volumes = [
        "--cache-sizes",
        "4MiB",
        "--policies",
        "lru",
        "--no-mrc",
        "--cache-volume",
        "gp3:32GiB",
        "--backing-volume",
        "st1:1TiB",
    ];
    let v = simulate(dir.path(), &t, &volumes);
    assert_eq!(v["results"][0]["prediction"]["window_s"], 1, "{v}");
}

/// QA found lvmcache hitting 99.1 % where `trace stats` called 86.1 % the best any cache can
/// hit: lvmcache caches whole chunks, so a first access near cached data hits, while the reuse
/// figure counts revisits of one block. Both outputs say what they count.
#[test]
fn lvmcache_and_trace_stats_say_what_they_count() {
    use disktier_cachesim::trace::{Op, Record};
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("seq.dtt");
    // Every 4 KiB block read once, in order: no block is revisited, yet lvmcache copies each
    // 64 KiB chunk on its first miss and hits the other 15 blocks in it.
    let recs: Vec<Record> = (0..4096u64)
        .map(|i| Record::new(i * 1000, i * 4096, 4096, Op::Read))
        .collect();
    write_trace(&t, &recs);
    let v = simulate(
        dir.path(),
        &t,
        &[
            "--cache-sizes",
            "64MiB",
            "--policies",
            "lru,lvmcache",
            "--no-mrc",
        ],
    );
    assert_eq!(v["results"][0]["hit_ratio"], 0.0, "{v}");
    assert!(
        (v["results"][1]["hit_ratio"].as_f64().unwrap() - 15.0 / 16.0).abs() < 1e-9,
        "{v}"
    );
    assert_eq!(stats(dir.path(), &t)["reuse_fraction"], 0.0);
    let text = bin(&dir.path().join("db"))
        .args("simulate --cache-sizes 64MiB --policies lru,lvmcache --no-mrc".split_whitespace())
        .arg("--trace")
        .arg(&t)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("lvmcache promotes whole 64 KiB chunks: a first access to a block whose chunk is cached counts as a hit"),
        "{text}"
    );
    let out = bin(&dir.path().join("db"))
        .args(["trace", "stats"])
        .arg(&t)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("(the best a cache of 4 KiB blocks can hit; one that fills larger units, as lvmcache's chunks, also hits first accesses near cached data)"),
        "{text}"
    );
}
