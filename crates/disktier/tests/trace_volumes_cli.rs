//! QA: the volumes of a multi-volume trace shared one address space. Alibaba's and Tencent's
//! public traces hold many volumes in one file (the stream is the device or volume id), and
//! `trace stats`, `simulate` and `plan --trace` keyed blocks by offset alone: a read of byte 0
//! on volume 2 was a hit on volume 1's byte 0 (two volumes read once each: 50 % "reuse", a
//! footprint of one block). Each volume now has its own address space; a blkparse trace's
//! streams (processes on one device) still share theirs.

use disktier_testkit::cli::{disktier, Succeeds};
use serde_json::Value;
use std::path::Path;

fn run(db: &Path, args: &[&str], trace: &Path) -> Value {
    disktier()
        .env("DISKTIER_DB", db)
        .args(["--format", "json", "--no-save"])
        .args(args)
        .arg(trace)
        .json_ok()
}

/// Imports `text` as `format` and returns (stats, LRU row of a 1 MiB simulate).
fn stats_and_lru(dir: &Path, format: &str, text: &str) -> (Value, Value) {
    let input = dir.join(format!("{format}.txt"));
    std::fs::write(&input, text).unwrap();
    let trace = dir.join(format!("{format}.dtt"));
    disktier()
        .args(["--no-save", "-q", "trace", "import", format])
        .arg(&input)
        .arg("-o")
        .arg(&trace)
        .assert()
        .success();
    let db = dir.join("db");
    let stats = run(&db, &["trace", "stats"], &trace);
    let sim = run(
        &db,
        &[
            "simulate",
            "--policies",
            "lru",
            "--cache-sizes",
            "1MiB",
            "--trace",
        ],
        &trace,
    );
    (stats, sim["results"][0].clone())
}

#[test]
fn equal_offsets_on_different_volumes_are_different_blocks() {
    let dir = tempfile::tempdir().unwrap();
    // Byte 0 of volume 1, byte 0 of volume 2, then volume 1's again: one hit, not two.
    for (format, text) in [
        (
            "alibaba",
            "1,R,0,4096,1000\n2,R,0,4096,2000\n1,R,0,4096,3000\n",
        ),
        // Tencent: seconds, 512-byte sectors, 0 = read, volume id last.
        (
            "tencent",
            "1538323200,0,8,0,1063\n1538323201,0,8,0,2048\n1538323202,0,8,0,1063\n",
        ),
    ] {
        let (stats, lru) = stats_and_lru(dir.path(), format, text);
        assert_eq!(stats["streams"], 2, "{format}: {stats}");
        assert_eq!(stats["footprint_bytes"], 8192, "{format}: {stats}");
        assert_eq!(stats["max_hit_ratio"], 1.0 / 3.0, "{format}: {stats}");
        assert_eq!(lru["read_blocks"], 3, "{format}: {lru}");
        assert_eq!(lru["read_hits"], 1, "{format}: {lru}");
        assert_eq!(lru["backing_read_bytes"], 8192, "{format}: {lru}");
    }
    // blkparse: two processes reading one device's sector 0 share it, as before.
    let blk = "  8,0 0 1 0.000000000 100 Q R 0 + 8 [a]\n  8,0 0 2 0.000001000 200 Q R 0 + 8 [b]\n";
    let (stats, lru) = stats_and_lru(dir.path(), "blkparse", blk);
    assert_eq!(stats["streams"], 2, "{stats}");
    assert_eq!(stats["footprint_bytes"], 4096, "{stats}");
    assert_eq!(lru["read_hits"], 1, "{lru}");
}

#[test]
fn a_volume_past_its_address_space_is_refused_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("far.csv");
    // Volume 2 reads at 2^48 + 4096 bytes, past the 256 TiB each volume is given.
    std::fs::write(&input, "1,R,0,4096,1\n2,R,281474976714752,4096,2\n").unwrap();
    let trace = dir.path().join("far.dtt");
    disktier()
        .args(["--no-save", "-q", "trace", "import", "alibaba"])
        .arg(&input)
        .arg("-o")
        .arg(&trace)
        .assert()
        .success();
    for args in [
        &["trace", "stats"][..],
        &["simulate", "--cache-sizes", "4MiB", "--trace"][..],
    ] {
        let out = disktier()
            .env("DISKTIER_DB", dir.path().join("db"))
            .arg("--no-save")
            .args(args)
            .arg(&trace)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            err.contains("volume 2 reaches byte 281474976718848")
                && err.contains("import that volume's lines alone"),
            "{args:?}: {err}"
        );
    }
}
