//! The etcd-perf output parser's unit tests.

use super::*;

const SEED: &str = "99th percentile of fsync is 4046848 ns\n99th percentile of the fsync is within the recommended threshold - 10 ms, the disk can be used to host etcd\n";

#[test]
fn seed_lines() {
    let e = parse(SEED, "t").unwrap();
    assert_eq!(e.p99_ns, 4_046_848);
    assert_eq!(e.image_pass, Some(true));
    assert!(e.pass());
    let d = e.to_run_doc("t", "2026-01-01T00:00:00Z".into());
    assert_eq!(
        d.results.sync.as_ref().unwrap().lat_ns.p(99.0),
        Some(4_046_848)
    );
    assert!(d.verdicts[0].pass);
}

#[test]
fn disagreeing_image_verdict_is_shown() {
    let t = "99th percentile of fsync is 12000000 ns\n99th percentile of the fsync is within the recommended threshold of 10 ms, the disk can be used to host etcd\n";
    let e = parse(t, "t").unwrap();
    assert!(!e.pass());
    let d = e.to_run_doc("t", String::new());
    assert!(!d.verdicts[0].pass);
    assert!(d.verdicts[1].pass);
    assert!(
        d.warnings.iter().any(|w| w.contains("disagrees")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn warn_line_and_fio_report() {
    let t = "etcd_perf: (g=0): rw=write, bs=(R) 8000B-8000B, (W) 8000B-8000B, (T) 8000B-8000B, ioengine=sync, iodepth=1\n  issued rwts: total=0,12000,0,0 short=0,0,0,0 dropped=0,0,0,0\n  WRITE: bw=1562KiB/s (1600kB/s), 1562KiB/s-1562KiB/s (1600kB/s-1600kB/s), io=91.6MiB (96.0MB), run=60000-60000msec\n99th percentile of fsync is 15007744 ns\nWARN: 99th percentile of the fsync is greater than the recommended value which is 10 ms, faster disks are recommended to host etcd for better performance\n";
    let e = parse(t, "t").unwrap();
    assert_eq!(e.image_pass, Some(false));
    assert_eq!(e.bs, Some(8000));
    assert_eq!(e.writes, Some(12000));
    assert_eq!(e.runtime_ms, Some(60000));
    assert_eq!(e.image_job, Some(ImageJob::Current));
    let d = e.to_run_doc("t", String::new());
    assert!((d.results.sync.unwrap().iops - 200.0).abs() < 1e-9);
    assert!(!d.warnings.iter().any(|w| w.contains("disagrees")));
}

/// The OSTree-vs-etcd recipe's baseline report (fio 3.19, `--size=30m --bs=2300`) with the
/// image's two lines: QA found the size taken as the image's 22 MiB and min, max and mean
/// of 0 beside the p99.
const SEED_004: &str = "etcd: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) 2300B-2300B, ioengine=sync, iodepth=1
fio-3.19
Starting 1 process
etcd: Laying out IO file (1 file / 30MiB)
etcd: (groupid=0, jobs=1): err= 0: pid=408906: Wed Jul 15 02:14:39 2020
  write: IOPS=858, BW=1928KiB/s (1974kB/s)(29.0MiB/15937msec); 0 zone resets
clat (nsec): min=1024, max=14349k, avg=103520.77, stdev=145454.55
 lat (nsec): min=1082, max=14350k, avg=104346.19, stdev=145488.30
clat percentiles (usec):
 |  1.00th=[    5],  5.00th=[    7], 10.00th=[   14], 20.00th=[   25],
  fsync/fdatasync/sync_file_range:
sync (usec): min=732, max=4286, avg=1052.51, stdev=278.42
sync percentiles (usec):
 | 99.00th=[ 1434], 99.50th=[ 3884], 99.90th=[ 4113], 99.95th=[ 4178],
 issued rwts: total=0,13677,0,0 short=13677,0,0,0 dropped=0,0,0,0
Run status group 0 (all jobs):
  WRITE: bw=1928KiB/s (1974kB/s), 1928KiB/s-1928KiB/s (1974kB/s-1974kB/s), io=29.0MiB (31.5MB), run=15937-15937msec
99th percentile of fsync is 1433600 ns
99th percentile of the fsync is within the recommended threshold - 10 ms, the disk can be used to host etcd
";

#[test]
fn size_and_latencies_come_from_fios_report() {
    let e = parse(SEED_004, "t").unwrap();
    assert_eq!(e.file_bytes, Some(30 << 20));
    let d = e.to_run_doc("t", String::new());
    assert_eq!(d.job["size"], 30 << 20);
    let w = d.results.write.as_ref().unwrap();
    assert_eq!((w.ios, w.bytes), (13677, 31_457_100));
    let s = d.results.sync.as_ref().unwrap();
    assert_eq!((s.lat_ns.min, s.lat_ns.max), (732_000, 4_286_000));
    assert!((s.lat_ns.mean - 1_052_510.0).abs() < 1e-6);
    assert_eq!(s.lat_ns.p(99.0), Some(1_433_600));
    assert_eq!((w.lat_ns.min, w.lat_ns.max), (1_024, 14_349_000));
    // Without the layout line, the classic job's size is what its writes covered.
    let no_layout = SEED_004.replace("etcd: Laying out IO file (1 file / 30MiB)\n", "");
    let d = parse(&no_layout, "t")
        .unwrap()
        .to_run_doc("t", String::new());
    assert_eq!(d.job["size"], 31_457_100);
}

#[test]
fn what_the_output_does_not_say_is_null() {
    let d = parse(SEED, "t").unwrap().to_run_doc("t", String::new());
    let v = serde_json::to_value(&d).unwrap();
    let lat = &v["results"]["sync"]["lat_ns"];
    for k in ["min", "max", "mean", "stdev"] {
        assert!(lat[k].is_null(), "{k}: {lat}");
    }
    assert_eq!(lat["percentiles"]["99"], 4_046_848);
    assert!(v["job"].get("size").is_none(), "{}", v["job"]);
    // And it reads back as unknown.
    let back: RunDoc = serde_json::from_value(v).unwrap();
    assert!(back.results.sync.unwrap().lat_ns.max_ns().is_none());
}

#[test]
fn refusals() {
    assert!(matches!(
        parse("hello\n", "t"),
        Err(EtcdPerfError::NoP99 { .. })
    ));
    let two = format!("{SEED}{SEED}");
    assert!(matches!(
        parse(&two, "t"),
        Err(EtcdPerfError::Several { count: 2, .. })
    ));
    let big = "x".repeat(MAX_BYTES + 1);
    assert!(matches!(
        parse(&big, "t"),
        Err(EtcdPerfError::TooLarge { .. })
    ));
    // A file past the cap is named with its own size, a stream as longer than the cap.
    let d = tempfile::tempdir().unwrap();
    let huge = d.path().join("out.txt");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let e = parse_file(&huge).unwrap_err().to_string();
    assert!(e.ends_with("out.txt is 10737418240 bytes, and an etcd-perf output is at most 4194304 bytes: pass the file the image printed (`podman run ... > FILE`)"), "{e}");
    let e = parse_file(Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(
        e.starts_with("/dev/zero is more than 4194304 bytes, and"),
        "{e}"
    );
    let long = format!("{}\n{SEED}", "y".repeat(MAX_LINE + 1));
    assert_eq!(parse(&long, "t").unwrap().long_lines, 1);
}
