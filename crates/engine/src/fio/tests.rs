//! Tests of the fio engine and importer.

use super::*;
use crate::job::IoEngineKind;
use crate::job::{Job, Rw};
use crate::result::TargetInfo;
use disktier_cmd::RecordingRunner;
use std::path::Path;
use std::time::Duration;

const ETCD: &str = include_str!("../../../disktier/tests/fixtures/fio/etcd-3.33.json");
const ETCD_PLUS: &str =
    include_str!("../../../disktier/tests/fixtures/fio/etcd-jsonplus-3.33.json");
const RANDRW: &str = include_str!("../../../disktier/tests/fixtures/fio/randrw-2jobs-3.33.json");

fn etcd_job(dir: &Path) -> Job {
    Job {
        name: "etcd".into(),
        target: dir.into(),
        rw: Rw::Write,
        ioengine: IoEngineKind::Sync,
        fdatasync: 1,
        bs: 2300,
        size: Some(22 << 20),
        ..Job::default()
    }
}

#[test]
fn command_line_is_the_etcd_docs_job() {
    let c = command(&etcd_job(Path::new("/var/lib/etcd")), true);
    let s = c.to_string();
    for want in [
        "--name=etcd",
        "--directory=/var/lib/etcd",
        "--rw=write",
        "--bs=2300",
        "--ioengine=sync",
        "--fdatasync=1",
        "--size=23068672",
        "--direct=0",
        "--output-format=json+",
        "--group_reporting=1",
    ] {
        assert!(c.args.iter().any(|a| a == want), "{want} missing in {s}");
    }
    assert!(!s.contains("--runtime") && !s.contains("--rwmixread"));
    // A device or file gets --filename, a time-based job its runtime.
    let j = Job {
        target: "/dev/loop3".into(),
        rw: Rw::RandRw,
        runtime: Some(Duration::from_millis(1500)),
        time_based: true,
        ramp_time: Duration::from_secs(2),
        iodepth_batch_submit: 64,
        ..Job::default()
    };
    let c = command(&j, false);
    for want in [
        "--filename=/dev/loop3",
        "--runtime=1500ms",
        "--time_based=1",
        "--ramp_time=2s",
        "--rwmixread=50",
        "--iodepth_batch_submit=64",
        "--ioengine=io_uring",
    ] {
        assert!(c.args.iter().any(|a| a == want), "{want} missing in {c}");
    }
}

#[test]
fn reads_fio_3_33_etcd_json() {
    let v = parse(ETCD, "etcd.json").unwrap();
    let d = to_run_doc(&v, 0, "etcd.json", DocContext::default()).unwrap();
    assert_eq!(d.engine, "fio");
    assert_eq!(d.schema_version, 1);
    assert!(d.results.read.is_none());
    let w = d.results.write.as_ref().unwrap();
    let raw = &v["jobs"][0]["write"];
    assert_eq!(w.ios, raw["total_ios"].as_u64().unwrap());
    assert_eq!(w.bytes, raw["io_bytes"].as_u64().unwrap());
    assert_eq!(
        w.lat_ns.p(99.0),
        raw["clat_ns"]["percentile"]["99.000000"].as_u64()
    );
    assert_eq!(w.lat_ns.min, raw["clat_ns"]["min"].as_u64().unwrap());
    assert_eq!(w.lat_ns.percentiles.len(), 17);
    let s = d.results.sync.as_ref().unwrap();
    let rs = &v["jobs"][0]["sync"]["lat_ns"];
    assert_eq!(
        s.ios,
        rs["N"].as_u64().unwrap(),
        "sync count comes from lat_ns.N"
    );
    assert_eq!(s.lat_ns.p(99.0), rs["percentile"]["99.000000"].as_u64());
    // fio's p99.99 (a bin's value, 593920) is above the max it measured (589933): clamped.
    let (p9999, max) = (
        rs["percentile"]["99.990000"].as_u64().unwrap(),
        rs["max"].as_u64().unwrap(),
    );
    assert!(p9999 > max);
    assert_eq!(s.lat_ns.p(99.99), Some(max));
    assert!(s.iops > 0.0);
    // The job is rebuilt from fio's options.
    assert_eq!(d.job["rw"], "write");
    assert_eq!(d.job["bs"], 2300);
    assert_eq!(d.job["ioengine"], "sync");
    assert_eq!(d.job["fdatasync"], 1);
    assert_eq!(d.target.kind, "directory");
    assert!(d.started_at.starts_with("20"), "{}", d.started_at);
}

#[test]
fn json_plus_bins_count_stalls() {
    let block =
        serde_json::json!({"bins": {"1000": 5, "100000000": 2, "100663296": 3, "2013265920": 1}});
    let st = bin_stalls(&block).unwrap();
    assert_eq!((st.over_heartbeat, st.over_election), (4, 1));
    assert_eq!(bin_stalls(&serde_json::json!({"N": 3})), None);
}

#[test]
fn json_plus_bins_become_a_histogram_that_agrees_with_fios_percentiles() {
    let m = import_text(ETCD_PLUS, "etcd+.json", 0, DocContext::default()).unwrap();
    let sync = m.doc.results.sync.as_ref().unwrap();
    let h = m.sync_hist.expect("json+ carries sync bins");
    assert_eq!(h.len(), sync.ios, "every fdatasync is in a bin");
    // fio's p99 is a bin value; the histogram's p99 is the same bin within 0.1 %.
    let fio_p99 = sync.lat_ns.p(99.0).unwrap() as f64;
    let hist_p99 = h.value_at_quantile(0.99) as f64;
    assert!(
        (hist_p99 - fio_p99).abs() / fio_p99 < 0.001,
        "{hist_p99} vs {fio_p99}"
    );
    // Plain json has no bins.
    let plain = import_text(ETCD, "etcd.json", 0, DocContext::default()).unwrap();
    assert!(plain.sync_hist.is_none());
    assert!(histogram(&serde_json::json!({"N": 0})).is_none());
}

#[test]
fn reads_grouped_mixed_json_and_cpu_seconds() {
    let v = parse(RANDRW, "randrw.json").unwrap();
    let d = to_run_doc(&v, 0, "randrw.json", DocContext::default()).unwrap();
    let j = &v["jobs"][0];
    let (r, w) = (d.results.read.unwrap(), d.results.write.unwrap());
    assert!(r.iops > w.iops, "rwmixread=70");
    assert_eq!(r.iops, j["read"]["iops"].as_f64().unwrap());
    assert!(d.results.sync.is_none());
    let want_usr =
        j["usr_cpu"].as_f64().unwrap() / 100.0 * j["job_runtime"].as_f64().unwrap() / 1000.0;
    assert!((d.results.cpu.usr_s - want_usr).abs() < 1e-9);
    assert!(d.results.cpu.sys_s > 0.0);
    assert_eq!(d.job["ioengine"], "io_uring");
    assert_eq!(d.job["direct"], true);
    assert_eq!(d.job["numjobs"], 2);
    assert!((d.duration_s - 1.0).abs() < 0.2, "{}", d.duration_s);
}

#[test]
fn notes_before_the_json_are_skipped_and_garbage_is_refused() {
    let text = format!("note: both iodepth >= 1 and synchronous I/O engine are selected\n{ETCD}");
    assert!(parse(&text, "x").is_ok());
    let e = parse("hello", "x.json").unwrap_err();
    assert!(
        e.to_string().contains("x.json is not fio JSON output"),
        "{e}"
    );
    let e = parse("{\"jobs\": [", "x.json").unwrap_err();
    assert!(matches!(e, FioError::NotJson { .. }), "{e}");
    let e = parse("{\"fio version\": \"3\"}", "x.json").unwrap_err();
    assert!(e.to_string().contains("\"jobs\" list is missing"), "{e}");
    let v = parse(ETCD, "x.json").unwrap();
    let e = to_run_doc(&v, 3, "x.json", DocContext::default()).unwrap_err();
    assert!(e.to_string().contains("job 3 does not exist"), "{e}");
}

#[test]
fn per_second_logs_are_summed_over_jobs() {
    // The shape fio 3.33 writes with --log_avg_msec=1000 (two jobs, randrw).
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("x").display().to_string();
    std::fs::write(
        format!("{prefix}_iops.1.log"),
        "1023, 4895, 0, 0, 0\n1023, 4956, 1, 0, 0\n2023, 7851, 0, 0, 0\n2023, 7790, 1, 0, 0\n",
    )
    .unwrap();
    std::fs::write(format!("{prefix}_iops.2.log"), "1023, 105, 0, 0, 0\n").unwrap();
    std::fs::write(format!("{prefix}_bw.1.log"), "1023, 20, 1, 0, 0\n").unwrap();
    let s = read_series(&prefix, 2);
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].t_s, s[0].read_iops, s[0].write_iops),
        (1.0, 5000.0, 4956.0)
    );
    assert_eq!(s[0].write_bw_bytes, 20.0 * 1024.0);
    assert_eq!((s[1].t_s, s[1].read_iops), (2.0, 7851.0));
    assert!(read_series(&format!("{prefix}-none"), 1).is_empty());
    // No histogram log: no p99.
    assert_eq!(s[0].p99_ns, None);
}

/// fuzz_fio_logs: a time near 2^64 ms overflowed `ms + 500` (a panic with overflow checks), and
/// a value that is no count (`1e400`, `NaN`, `-5`, `1.7e308` in KiB/s) made the second's rate
/// infinite, NaN or negative, which the result's JSON holds as `null` and reads back as no
/// number; such a line is skipped, as a line that does not parse is.
#[test]
fn a_log_line_that_is_no_count_is_skipped_not_summed() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("x").display().to_string();
    std::fs::write(
        format!("{prefix}_iops.1.log"),
        "1023, 1e400, 0, 0, 0\n1023, NaN, 1, 0, 0\n1023, -5, 0, 0, 0\n1023, 10, 0, 0, 0\n18446744073709551615, 5, 0, 0, 0\n",
    )
    .unwrap();
    std::fs::write(format!("{prefix}_bw.1.log"), "1023, 1.7e308, 1, 0, 0\n").unwrap();
    let s = read_series(&prefix, 1);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        (
            s[0].t_s,
            s[0].read_iops,
            s[0].write_iops,
            s[0].write_bw_bytes
        ),
        (1.0, 10.0, 0.0, 0.0)
    );
    assert_eq!(s[1].read_iops, 5.0);
    serde_json::to_string(&s).unwrap();
}

#[test]
fn plat_bins_map_to_fios_values() {
    // The exact range, then the first groups (values from fio's plat_idx_to_val).
    assert_eq!(plat_idx_to_val(0), 0);
    assert_eq!(plat_idx_to_val(127), 127);
    assert_eq!(plat_idx_to_val(128), 129); // 128 + 0.5 * 2
    assert_eq!(plat_idx_to_val(191), 255); // 128 + 63 * 2 + 1
    assert_eq!(plat_idx_to_val(192), 258); // 256 + 0.5 * 4
                                           // Monotonic, and every bin within 1/128 of the previous group's step.
    for i in 1..1856 {
        assert!(plat_idx_to_val(i) > plat_idx_to_val(i - 1), "{i}");
    }
    let mut bins = vec![0u64; 1856];
    bins[10] = 98;
    bins[200] = 1;
    bins[300] = 1;
    assert_eq!(plat_percentile(&bins, 50.0), Some(10));
    assert_eq!(plat_percentile(&bins, 99.0), Some(plat_idx_to_val(200)));
    assert_eq!(plat_percentile(&bins, 99.9), Some(plat_idx_to_val(300)));
    assert_eq!(plat_percentile(&[0, 0], 99.0), None);
}

#[test]
fn per_second_p99_comes_from_the_histogram_log_summed_over_jobs() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("x").display().to_string();
    std::fs::write(format!("{prefix}_iops.1.log"), "1001, 100, 0, 0, 0\n").unwrap();
    let line = |ms: u64, ddir: u8, at: usize, n: u64| {
        let mut bins = vec!["0".to_string(); 1856];
        bins[at] = n.to_string();
        format!("{ms}, {ddir}, 4096, {}\n", bins.join(", "))
    };
    // Job 1: 99 reads fast in second 1; job 2: one slow write in second 1, fast in 2.
    std::fs::write(format!("{prefix}_clat_hist.1.log"), line(1001, 0, 100, 99)).unwrap();
    std::fs::write(
        format!("{prefix}_clat_hist.2.log"),
        line(1002, 1, 1000, 1) + &line(2001, 0, 50, 10),
    )
    .unwrap();
    let s = read_series(&prefix, 2);
    assert_eq!(s.len(), 2);
    // 100 I/Os in second 1: the 99th is still the fast bin; p99 of second 2 is bin 50.
    assert_eq!(s[0].p99_ns, Some(plat_idx_to_val(100)));
    assert_eq!(s[1].p99_ns, Some(50));
    assert_eq!(s[0].read_iops, 100.0);
    assert_eq!(s[0].sync_p99_ns, None);
}

#[test]
fn run_uses_the_runner_and_cleans_created_files() {
    let d = tempfile::tempdir().unwrap();
    let job = etcd_job(d.path());
    let runner = RecordingRunner::new();
    runner.on("fio", &[], 0, ETCD);
    // A file that was there before the run is the user's: it must survive.
    std::fs::write(d.path().join("etcd.0.0"), b"user data").unwrap();
    let target = TargetInfo {
        path: d.path().display().to_string(),
        kind: "directory".into(),
        ..TargetInfo::default()
    };
    let doc = run(&job, &runner, target, &FioOptions::default())
        .unwrap()
        .doc;
    assert_eq!(doc.engine, "fio");
    assert_eq!(doc.job["size"], 22 << 20, "the job as disktier resolved it");
    assert_eq!(runner.commands().len(), 1);
    assert!(runner
        .transcript()
        .starts_with("fio --name=etcd --directory="));
    assert_eq!(
        std::fs::read(d.path().join("etcd.0.0")).unwrap(),
        b"user data"
    );
}

/// QA: a target path with a newline (or another control character) went to fio, which ran
/// the whole job and then wrote the path unescaped into its JSON: "not fio JSON output". Such a
/// path is refused before any command runs, saying why and what to do instead.
#[test]
fn a_path_fio_cannot_carry_is_refused_before_fio_runs() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempfile::tempdir().unwrap();
    assert_eq!(path_problem(&d.path().join("a:b c")), None);
    let bad = [
        (d.path().join("a\nb"), "newline"),
        (d.path().join("a\rb"), "newline"),
        (d.path().join("a\tb"), "control character"),
        (
            d.path().join(std::ffi::OsStr::from_bytes(b"x\xff")),
            "not UTF-8",
        ),
    ];
    for (path, why) in bad {
        let job = Job {
            target: path.clone(),
            ..etcd_job(d.path())
        };
        let runner = RecordingRunner::new();
        runner.on("fio", &[], 0, ETCD);
        let target = TargetInfo {
            path: path.display().to_string(),
            kind: "file".into(),
            ..TargetInfo::default()
        };
        let Err(e) = run(&job, &runner, target, &FioOptions::default()) else {
            panic!("{path:?} was not refused");
        };
        let e = e.to_string();
        assert!(e.contains(why), "{e}");
        assert!(e.contains("--engine native"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(runner.commands().is_empty(), "{path:?}: fio was run");
    }
}

/// QA (session 15): an edited fio JSON with 1e308 IOPS, a negative bandwidth or a p99 of -7 ns
/// was imported and shown (a 300-digit IOPS, "-0.00 MiB/s", a p99 below the p50). Such figures
/// are refused, naming the field; fio's own outputs, group_reporting's added rates included,
/// pass.
#[test]
fn figures_fio_cannot_write_are_refused() {
    let edited = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = parse(ETCD, "etcd.json").unwrap();
        f(&mut v);
        to_run_doc(&v, 0, "e.json", DocContext::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert!(edited(&|_| {}).is_ok());
    /// An edit of fio's JSON, and what the refusal must say.
    type Case<'a> = (&'a dyn Fn(&mut serde_json::Value), &'a str);
    let cases: [Case; 11] = [
        (
            &|v| v["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"] = "NaN".into(),
            "jobs[0].sync.lat_ns.percentile 99 is \"NaN\", not a number of ns",
        ),
        (
            &|v| v["jobs"][0]["write"]["clat_ns"]["max"] = "NaN".into(),
            "jobs[0].write.clat_ns.max is NaN, not a number fio counts",
        ),
        (
            &|v| v["jobs"][0]["write"]["clat_ns"]["mean"] = (-3).into(),
            "jobs[0].write.clat_ns.mean is -3, and fio counts no less than 0",
        ),
        (
            &|v| v["jobs"][0]["write"]["clat_ns"]["min"] = 1e12.into(),
            "jobs[0].write.clat_ns.min is 1000000000000 ns, above its max",
        ),
        (
            &|v| v["jobs"][0]["write"]["iops"] = "NaN".into(),
            "jobs[0].write.iops is NaN, not a number fio counts",
        ),
        (
            &|v| v["jobs"][0]["write"]["iops"] = 1e308.into(),
            "jobs[0].write.iops is 1e308, more than its total_ios",
        ),
        (
            &|v| v["jobs"][0]["write"]["bw_bytes"] = (-1).into(),
            "jobs[0].write.bw_bytes is -1, and fio counts no less than 0",
        ),
        (
            &|v| v["jobs"][0]["write"]["clat_ns"]["percentile"]["99.000000"] = 1.into(),
            "jobs[0].write.clat_ns.percentile 99 is 1 ns, below percentile 95",
        ),
        (
            &|v| v["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"] = (-7).into(),
            "jobs[0].sync.lat_ns.percentile 99 is -7 ns, below 0",
        ),
        (
            &|v| v["jobs"][0]["read"]["total_ios"] = (-3).into(),
            "jobs[0].read.total_ios is -3",
        ),
        // QA (session 29): shown as a write row of 18446744073709551615 I/Os over 2 MiB.
        (
            &|v| v["jobs"][0]["write"]["total_ios"] = u64::MAX.into(),
            "jobs[0].write.total_ios is 1.8446744073709552e19, more than its io_bytes (2095300)",
        ),
    ];
    for (edit, want) in cases {
        let e = edited(edit).unwrap_err();
        assert!(
            e.starts_with("e.json: ") && e.contains(want) && e.contains("edited or damaged"),
            "{e}"
        );
    }
    for fixture in [RANDRW, ETCD_PLUS] {
        let v = parse(fixture, "f.json").unwrap();
        assert!(to_run_doc(&v, 0, "f.json", DocContext::default()).is_ok());
    }
}

/// QA: fio ran `bs=4KiB` as 4,000-byte blocks (its default kb_base=1024 reads the IEC units as
/// powers of 1,000), and the import said 4,096. The job is now read as fio read it.
#[test]
fn an_import_reads_iec_sizes_as_fio_did() {
    let mut v: serde_json::Value = serde_json::from_str(ETCD).unwrap();
    let opts = v["jobs"][0]["job options"].as_object_mut().unwrap();
    opts.insert("bs".into(), "4KiB".into());
    opts.insert("size".into(), "400KiB".into());
    let m = import_text(&v.to_string(), "kib.json", 0, DocContext::default()).unwrap();
    assert_eq!(m.doc.job["bs"], 4000, "{}", m.doc.job);
    assert_eq!(m.doc.job["size"], 400_000);
    // kb_base=1000 turns the units round (review).
    let opts = v["jobs"][0]["job options"].as_object_mut().unwrap();
    opts.insert("kb_base".into(), "1000".into());
    opts.insert("size".into(), "400k".into());
    let m = import_text(&v.to_string(), "kib.json", 0, DocContext::default()).unwrap();
    assert_eq!(m.doc.job["bs"], 4096, "{}", m.doc.job);
    assert_eq!(m.doc.job["size"], 400_000);
}

#[test]
fn a_json_of_more_values_than_the_bound_is_refused_before_parsing() {
    // QA: a 200 MB array of zeros under the 256 MiB text cap aborted the import allocating 4 GiB.
    let many = format!(
        "{{\"fio version\": \"fio-3.35\", \"x\": [{}0], \"jobs\": []}}",
        "0,".repeat(MAX_JSON_VALUES)
    );
    let err = parse(&many, "big.json").unwrap_err().to_string();
    assert!(
        err.contains("JSON values, more than the 8388608 an import reads"),
        "{err}"
    );
    // Commas, brackets and braces inside strings are not values.
    let quoted = format!(
        "{{\"jobs\": [], \"s\": \"{}\"}}",
        ",[{\\\"".repeat(MAX_JSON_VALUES)
    );
    assert!(parse(&quoted, "q.json").is_ok());
}

/// QA: a job fio could not run (`error` set, nothing read, written, synced or trimmed) was
/// imported as a run of nothing with exit 0. One job of it is refused naming fio's error;
/// `--jobs` refuses a file only when no job has figures. Real fio 3.33 output: randtrim on a
/// regular file (`err=25`, one trim issued, none completed).
#[test]
fn a_job_fio_could_not_run_is_no_result() {
    let failed =
        include_str!("../../../disktier/tests/fixtures/fio/failed-trim-normal-json-3.33.out");
    let e = import_text(failed, "e.json", 0, DocContext::default()).unwrap_err();
    assert!(matches!(e, FioError::NoFigures { error: 25, .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("e.json: job 0 (t) has no figures: fio reported error 25"),
        "{msg}"
    );
    let mut v = parse(failed, "e.json").unwrap();
    assert!(check_any_figures(&v, "e.json").is_err());
    let ok = parse(ETCD, "e.json").unwrap()["jobs"][0].clone();
    v["jobs"].as_array_mut().unwrap().push(ok);
    assert!(check_any_figures(&v, "e.json").is_ok());
    assert!(import_text(&v.to_string(), "e.json", 1, DocContext::default()).is_ok());
    assert!(import_text(ETCD, "e.json", 0, DocContext::default()).is_ok());
}

/// QA: `--output-format=normal,json` puts fio's JSON after the text report's head (and the job
/// reports after it): it was refused as a text report.
#[test]
fn json_in_fios_normal_and_json_output_is_read() {
    let head = "etcd: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) 2300B-2300B, ioengine=sync, iodepth=1\nfio-3.33\nStarting 1 process\n";
    let tail = "\netcd: (groupid=0, jobs=1): err= 0: pid=19909: Sat Nov 28 14:34:40 2026\n  write: IOPS=464, BW=1067KiB/s (1092kB/s)(4094KiB/3926msec); 0 zone resets\n";
    let v = parse(&format!("{head}{ETCD}{tail}"), "x").unwrap();
    assert_eq!(v, parse(ETCD, "x").unwrap());
    // The text report alone still points at import fio-text.
    let e = parse(&format!("{head}{tail}"), "x").unwrap_err();
    assert!(e.to_string().contains("import fio-text"), "{e}");
}
