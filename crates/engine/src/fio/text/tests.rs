use super::*;
use crate::fio::{import_text as import_json, DocContext};

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../tests/fixtures/fio-text/", $name))
    };
}

const RANDREAD: (&str, &str) = (
    fixture!("randread-3.33.txt"),
    fixture!("randread-3.33.json"),
);
const RANDWRITE: (&str, &str) = (
    fixture!("randwrite-fdatasync-3.33.txt"),
    fixture!("randwrite-fdatasync-3.33.json"),
);
const ETCD: (&str, &str) = (
    fixture!("etcd-2300-3.33.txt"),
    fixture!("etcd-2300-3.33.json"),
);
const TWO: (&str, &str) = (
    fixture!("randrw-2jobs-3.33.txt"),
    fixture!("randrw-2jobs-3.33.json"),
);
const LAT_PCT: (&str, &str) = (
    fixture!("randread-lat-percentiles-3.33.txt"),
    fixture!("randread-lat-percentiles-3.33.json"),
);
/// fio 3.33 on a loop device (trim needs a block device: on a file fio fails with "Inappropriate
/// ioctl for device"), one run of `jobfile-trim-3.33.fio`: `rd` and `wr` together in group 0,
/// `tr` (randtrim) in group 1, `mix` (numjobs=2, group_reporting) in group 2.
const JOBFILE: (&str, &str) = (
    fixture!("jobfile-trim-3.33.txt"),
    fixture!("jobfile-trim-3.33.json"),
);
const OSTREE: &str = fixture!("ostree-baseline-fio-3.19.txt");
const OSTREE_BUSY: &str = fixture!("ostree-concurrent-fio-3.19.txt");
const GKE: &str = fixture!("gke-write-throughput-fio-3.33.txt");

fn text_doc(text: &str, index: usize) -> RunDoc {
    import_text(text, "t", index, TextContext::default())
        .unwrap()
        .doc
}

/// The unit fio printed a latency in, told from its size (the text's rounding step).
fn close_lat(name: &str, t: &LatStats, j: &LatStats, unit: f64) {
    let near = |a: f64, b: f64, what: &str| {
        // fio prints large values with a k/M suffix and 5 significant digits (6016.5k).
        let step = unit.max(b.abs() * 1e-4);
        assert!(
            (a - b).abs() <= step,
            "{name} {what}: text {a} json {b} (unit {unit})"
        )
    };
    near(t.min as f64, j.min as f64, "min");
    near(t.max as f64, j.max as f64, "max");
    near(t.mean, j.mean, "mean");
    near(t.stdev, j.stdev, "stdev");
    assert_eq!(
        t.percentiles.keys().collect::<Vec<_>>(),
        j.percentiles.keys().collect::<Vec<_>>(),
        "{name}"
    );
    for (k, v) in &t.percentiles {
        near(*v as f64, j.percentiles[k] as f64, &format!("p{k}"));
    }
}

/// The JSON and the text of the same fio 3.33 run give the same figures: counts, bytes, IOPS
/// and bandwidth exactly, latencies within the unit fio printed them in.
fn same_run(text: &str, json: &str, index: usize, unit: f64) {
    let t = text_doc(text, index);
    let j = import_json(json, "j", index, DocContext::default())
        .unwrap()
        .doc;
    assert_eq!(t.engine, j.engine);
    assert_eq!(t.duration_s, j.duration_s);
    for (name, td, jd) in [
        ("read", &t.results.read, &j.results.read),
        ("write", &t.results.write, &j.results.write),
    ] {
        assert_eq!(td.is_some(), jd.is_some(), "{name}");
        let (Some(td), Some(jd)) = (td, jd) else {
            continue;
        };
        assert_eq!(td.ios, jd.ios, "{name}");
        assert_eq!(td.bytes, jd.bytes, "{name}");
        assert!(
            (td.iops - jd.iops).abs() < 1e-6,
            "{name} iops {} {}",
            td.iops,
            jd.iops
        );
        assert_eq!(td.bw_bytes, jd.bw_bytes, "{name} bw");
        close_lat(name, &td.lat_ns, &jd.lat_ns, unit);
    }
    assert_eq!(t.results.sync.is_some(), j.results.sync.is_some());
    if let (Some(ts), Some(js)) = (&t.results.sync, &j.results.sync) {
        close_lat("sync", &ts.lat_ns, &js.lat_ns, 1000.0);
        // The count is not in the text: unknown, not guessed.
        assert_eq!(ts.ios, 0);
        assert!(js.ios > 0);
    }
    // cpu: percentages of 2 decimals of the run time (fio's JSON uses job_runtime, 1 ms less).
    assert!((t.results.cpu.sys_s - j.results.cpu.sys_s).abs() < 0.001 * t.duration_s + 1e-3);
    assert_eq!(t.job["rw"], j.job["rw"]);
    assert_eq!(t.job["bs"], j.job["bs"]);
    assert_eq!(t.job["ioengine"], j.job["ioengine"]);
    // Started within a second of the JSON's (the text's date has seconds; this host is UTC).
    assert!(!t.started_at.is_empty(), "{:?}", t.warnings);
    let ts = time::OffsetDateTime::parse(
        &t.started_at,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let js = time::OffsetDateTime::parse(
        &j.started_at,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!((ts - js).abs() <= time::Duration::seconds(1), "{ts} {js}");
}

#[test]
fn randread_text_and_json_of_one_run_agree() {
    same_run(RANDREAD.0, RANDREAD.1, 0, 1000.0);
}

/// fio run with clat_percentiles=0, lat_percentiles=1: both imports take `lat`, stats and
/// percentiles, as the only percentiles there are.
#[test]
fn lat_percentiles_alone_are_taken_from_lat_as_in_json() {
    same_run(LAT_PCT.0, LAT_PCT.1, 0, 1000.0);
    let d = text_doc(LAT_PCT.0, 0);
    let r = d.results.read.unwrap();
    assert_eq!(r.lat_ns.min, 34_000, "lat's min, not clat's 33 us");
    assert_eq!(r.lat_ns.p(99.0), Some(149_000));
}

#[test]
fn randwrite_fdatasync_text_and_json_of_one_run_agree() {
    same_run(RANDWRITE.0, RANDWRITE.1, 0, 1000.0);
    let d = text_doc(RANDWRITE.0, 0);
    let s = d.results.sync.unwrap();
    assert_eq!(s.lat_ns.p(99.0), Some(7_963_000));
    assert_eq!(s.lat_ns.max, 14_175_000);
    // p99.9's 14222 us lies above the max fio measured: clamped as the JSON import does.
    assert_eq!(s.lat_ns.p(99.9), Some(14_175_000));
    assert!(
        d.warnings.iter().any(|w| w.contains("the sync count")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn etcd_job_text_and_json_of_one_run_agree() {
    same_run(ETCD.0, ETCD.1, 0, 1000.0);
    let d = text_doc(ETCD.0, 0);
    assert_eq!(d.job["bs"], 2300);
    assert_eq!(d.job["ioengine"], "sync");
    assert_eq!(d.target.device.as_deref(), Some("vda"));
}

#[test]
fn both_jobs_of_a_two_job_run_agree_with_the_json() {
    for i in [0, 1] {
        same_run(TWO.0, TWO.1, i, 1.0);
        let d = text_doc(TWO.0, i);
        assert!(
            d.warnings[0].contains("holds 2 job reports"),
            "{:?}",
            d.warnings
        );
    }
    assert!(text_doc(TWO.0, 0).warnings[0].contains("--group_reporting"));
    // Two reporting groups (stonewall): fio never combines them.
    let groups = TWO
        .0
        .replacen("(groupid=0, jobs=1)", "(groupid=1, jobs=1)", 1);
    assert!(text_doc(&groups, 1).warnings[0].contains("different reporting groups"));
    let e = import_text(TWO.0, "t", 2, TextContext::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t has 2 job report(s), so job 2 does not exist: pass --job 0 to 1"
    );
}

#[test]
fn the_ostree_issue_reports_read_as_printed() {
    let d = text_doc(OSTREE, 0);
    let w = d.results.write.as_ref().unwrap();
    assert_eq!(w.ios, 13677);
    assert_eq!(w.bytes, 13677 * 2300);
    assert_eq!(d.duration_s, 15.937);
    assert_eq!(w.lat_ns.min, 1024);
    assert_eq!(w.lat_ns.max, 14_349_000);
    assert_eq!(w.lat_ns.p(99.0), Some(217_000));
    let s = d.results.sync.as_ref().unwrap();
    assert_eq!(s.lat_ns.p(99.0), Some(1_434_000));
    assert_eq!(s.lat_ns.mean, 1_052_510.0);
    assert_eq!(d.job["rw"], "write");
    assert_eq!(d.target.device.as_deref(), Some("nvme1n1"));
    assert!(
        d.started_at.starts_with("2020-07-15T02:14:23"),
        "{}",
        d.started_at
    );

    let busy = text_doc(OSTREE_BUSY, 0);
    let s = busy.results.sync.unwrap();
    assert_eq!(s.lat_ns.p(99.0), Some(6_194_000));
    assert_eq!(s.lat_ns.max, 1_935_700_000);
    assert_eq!(s.lat_ns.p(99.99), Some(843_056_000));
}

#[test]
fn the_gke_post_reads_in_msec_without_indentation() {
    let d = text_doc(GKE, 0);
    let w = d.results.write.as_ref().unwrap();
    assert_eq!(w.ios, 23973);
    // fio's bytes (24.4GiB) hold the I/Os in flight when ramp_time ended; its count does
    // not: the printed bytes are kept, and said so.
    assert_eq!(w.bytes, (24.4 * (1u64 << 30) as f64).round() as u64);
    assert!(
        d.warnings.iter().any(|w| w.contains("not its count")),
        "{:?}",
        d.warnings
    );
    assert_eq!(w.lat_ns.p(99.0), Some(5_604_000_000));
    assert_eq!(w.lat_ns.min, 4_000_000);
    assert_eq!(d.job["numjobs"], 16);
    assert_eq!(d.job["iodepth"], 64);
    assert_eq!(d.job["ioengine"], "libaio");
    assert_eq!(d.target.device.as_deref(), Some("nvme0n1"));
    assert!(d.results.read.is_none() && d.results.sync.is_none());
}

#[test]
fn what_is_not_fio_text_is_refused_with_what_to_do() {
    let e = |t: &str| import_text(t, "f", 0, TextContext::default()).unwrap_err();
    assert!(matches!(e(""), FioTextError::NoJobs { .. }));
    assert!(e("{\"jobs\": []}")
        .to_string()
        .contains("disktier import fio"));
    let head = "x: (groupid=0, jobs=1): err= 0: pid=1: Thu Sep 14 07:56:37 2023\n";
    assert!(matches!(e(head), FioTextError::NoFigures { .. }));
    assert!(e(head).to_string().contains("not an excerpt"));
    let bad = format!("{head}  write: IOPS=inf, BW=1MiB/s (1MB/s)(1MiB/1msec)\n");
    assert!(
        matches!(e(&bad), FioTextError::Implausible { .. }),
        "{}",
        e(&bad)
    );
    let falls = format!(
        "{head}  write: IOPS=1, BW=1MiB/s (1MB/s)(1MiB/1000msec)\n  clat percentiles (usec):\n   |  1.00th=[  9], 5.00th=[ 3],\n"
    );
    assert!(e(&falls).to_string().contains("fall"), "{}", e(&falls));
    let big = "a".repeat(MAX_TEXT + 1);
    assert!(matches!(e(&big), FioTextError::TooLarge { .. }));
    let many = head.repeat(MAX_JOBS + 1);
    assert!(matches!(e(&many), FioTextError::TooManyJobs { .. }));
}

#[test]
fn numbers_are_fio_s_or_nothing() {
    use super::parse::number;
    assert_eq!(number("14349k"), Some(14_349_000.0));
    assert_eq!(number("1935.7k"), Some(1_935_700.0));
    assert_eq!(number("12.3k"), Some(12_300.0));
    let huge = format!("1{}", "0".repeat(400));
    for bad in [
        "",
        "k",
        "-1",
        "inf",
        "NaN",
        "1e400",
        "1.2.3",
        "+3",
        "18446744073709551616",
        &huge,
    ] {
        assert_eq!(number(bad), None, "{bad}");
    }
}

/// A megabyte-scale block of percentile lines is read in one pass (checking each line against
/// the whole block again took quadratic time).
#[test]
fn a_long_percentile_block_is_read_in_one_pass() {
    let head = "x: (groupid=0, jobs=1): err= 0: pid=1: Thu Sep 14 07:56:37 2023\n  write: IOPS=1, BW=1MiB/s (1MB/s)(1MiB/1000msec)\n  clat percentiles (usec):\n";
    let mut t = head.to_string();
    for i in 0..100_000u32 {
        let p = f64::from(i % 9_999 + 1) / 100.0;
        t.push_str(&format!("   | {p:.2}th=[{}],\n", i % 9_999 + 1));
    }
    let started = std::time::Instant::now();
    let d = text_doc(&t, 0);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(d.results.write.unwrap().lat_ns.percentiles.len(), 9_999);
}

/// Each job of a job file's run, imported alone, agrees with the JSON's: the trim job's figures
/// are left out by both and counted in the same warning.
#[test]
fn each_job_of_a_job_file_run_agrees_with_the_json_one_by_one() {
    for (i, unit) in [(0, 1000.0), (1, 1000.0), (2, 1000.0), (3, 1.0)] {
        same_run(JOBFILE.0, JOBFILE.1, i, unit);
    }
    let t = text_doc(JOBFILE.0, 2);
    let j = import_json(JOBFILE.1, "j", 2, DocContext::default())
        .unwrap()
        .doc;
    let trim = |d: &RunDoc| {
        d.warnings
            .iter()
            .find(|w| w.starts_with("fio trimmed"))
            .cloned()
    };
    assert_eq!(trim(&t), trim(&j));
    assert!(
        trim(&t).unwrap().contains("27715 time(s)"),
        "{:?}",
        t.warnings
    );
    assert_eq!(t.duration_s, 1.002);
    assert_eq!(t.job["fio_options"]["rw"], "randtrim");
    // Jobs that trimmed nothing are not told about trims.
    assert_eq!(trim(&text_doc(JOBFILE.0, 0)), None);
    // `mix` combines two jobs: its CPU time is of both, as the JSON's summed job_runtime.
    let mix = text_doc(JOBFILE.0, 3);
    assert!((mix.results.cpu.sys_s - 2.0 * 0.1508 * 1.003).abs() < 1e-9);
    // A report whose only figures are trims is a result (empty, as the JSON's), not refused.
    let tr = &JOBFILE.0[JOBFILE.0.find("tr: (groupid=1").unwrap()..];
    assert!(text_doc(tr, 0).results.write.is_none());
}

/// `--jobs`: every job report with its group, job by job as the JSON's `jobs` give them.
#[test]
fn every_job_report_is_read_with_its_group_as_the_json_jobs_are() {
    let r = parse(JOBFILE.0, "t").unwrap();
    let t = jobs(&r, "t", &TextContext::default()).unwrap();
    let v = crate::fio::parse(JOBFILE.1, "j").unwrap();
    let j = crate::fio::jobs(&v, "j", &DocContext::default()).unwrap();
    let names = |x: &[crate::fio::FioJob]| -> Vec<(String, u32)> {
        x.iter().map(|j| (j.name.clone(), j.group)).collect()
    };
    assert_eq!(names(&t.jobs), names(&j));
    assert_eq!(
        names(&t.jobs),
        [("rd", 0), ("wr", 0), ("tr", 1), ("mix", 2)].map(|(n, g)| (n.to_string(), g))
    );
    for (tj, jj) in t.jobs.iter().zip(&j) {
        let (td, jd) = (&tj.measured.doc, &jj.measured.doc);
        assert_eq!(td.duration_s, jd.duration_s, "{}", tj.name);
        for (dir, a, b) in [
            ("read", &td.results.read, &jd.results.read),
            ("write", &td.results.write, &jd.results.write),
        ] {
            let name = format!("{} {dir}", tj.name);
            assert_eq!(a.is_some(), b.is_some(), "{name}");
            let (Some(a), Some(b)) = (a, b) else { continue };
            assert_eq!(
                (a.ios, a.bytes, a.bw_bytes),
                (b.ios, b.bytes, b.bw_bytes),
                "{name}"
            );
            assert!((a.iops - b.iops).abs() < 1e-6, "{name}");
            let unit = if tj.name == "mix" { 1.0 } else { 1000.0 };
            close_lat(&name, &a.lat_ns, &b.lat_ns, unit);
        }
        assert!(tj.measured.read_hist.is_none() && tj.measured.sync_hist.is_none());
    }
    // Said once for the document, not in each job's warnings.
    assert!(
        t.notes[0].starts_with("imported from fio's text output"),
        "{:?}",
        t.notes
    );
    assert!(
        t.jobs[0].measured.doc.warnings.is_empty(),
        "{:?}",
        t.jobs[0].measured.doc.warnings
    );
    // The whole file: fio's group totals agree with its job reports.
    assert!(
        !t.notes.iter().any(|n| n.contains("group")),
        "{:?}",
        t.notes
    );
    let g = &r.groups;
    assert_eq!(g.iter().map(|g| g.id).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(g[0].read.unwrap().run_ms, (1001, 1001));
    assert_eq!(g[1].trim.unwrap().io_bytes, 108.0 * 1048576.0);
    assert!(g[1].read.is_none() && g[1].write.is_none());
    assert_eq!(r.jobs[2].issued_trims, Some(27715));
    assert_eq!(
        r.jobs[2].trim.as_ref().unwrap().clat.unwrap().max,
        40_442_000.0
    );
}

/// A file without some of a group's job reports: the group totals fio printed say so.
#[test]
fn a_group_missing_job_reports_is_said_to_be_incomplete() {
    let cut = |text: &str, from: &str, to: &str| {
        let (a, b) = (text.find(from).unwrap(), text.find(to).unwrap());
        format!("{}{}", &text[..a], &text[b..])
    };
    let no_wr = cut(JOBFILE.0, "wr: (groupid=0", "tr: (groupid=1");
    let t = jobs(&parse(&no_wr, "t").unwrap(), "t", &TextContext::default()).unwrap();
    assert_eq!(t.jobs.len(), 3);
    let n = t.notes.join("\n");
    assert!(
        n.contains("reporting group 0: fio's run status totals 365953024 write bytes, its job reports here 0: the file lacks some"),
        "{n}"
    );
    assert!(!n.contains("read bytes"), "{n}");
    let no_tr = cut(JOBFILE.0, "tr: (groupid=1", "mix: (groupid=2");
    let t = jobs(&parse(&no_tr, "t").unwrap(), "t", &TextContext::default()).unwrap();
    let n = t.notes.join("\n");
    assert!(
        n.contains(
            "lists reporting group 1, but the file holds none of its job reports: the group is not"
        ),
        "{n}"
    );
}

/// Thousands of `Run status group` sections without job reports give one note naming the first
/// few, not a note each.
#[test]
fn groups_without_job_reports_are_one_note() {
    let tail = JOBFILE.0.rfind("Run status group").unwrap();
    let group = |id: usize| {
        JOBFILE.0[tail..]
            .replacen("Run status group 2", &format!("Run status group {id}"), 1)
            .lines()
            .take_while(|l| !l.starts_with("Disk stats"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert!(group(7).starts_with("Run status group 7"), "{}", group(7));
    let mut text = JOBFILE.0.to_string();
    for id in 3..3000 {
        text.push_str(&group(id));
    }
    let t = jobs(&parse(&text, "t").unwrap(), "t", &TextContext::default()).unwrap();
    let folded: Vec<&String> = t
        .notes
        .iter()
        .filter(|n| n.contains("holds none"))
        .collect();
    assert_eq!(folded.len(), 1, "{:?}", t.notes);
    assert!(
        folded[0].contains("lists reporting groups 3, 4, 5, 6, 7, 8, 9, 10 (and 2989 more), but the file holds none of their job reports: the groups are not"),
        "{}",
        folded[0]
    );
}

/// A job fio could not run (trim on a regular file) keeps its error; `--jobs` keeps the job,
/// empty and said so, while a report without any figures is refused.
#[test]
fn a_failed_job_is_kept_empty_and_a_report_without_figures_refused() {
    let failed = "t: (groupid=0, jobs=1): err=25 (file:ioengines.c:399, func=td_io_queue, error=Inappropriate ioctl for device): pid=13437: Sat Nov 28 07:32:38 2026\n     issued rwts: total=0,0,1,0 short=0,0,0,0 dropped=0,0,0,0\n";
    let r = parse(failed, "t").unwrap();
    assert_eq!(r.jobs[0].error, 25);
    let e = jobs(&r, "t", &TextContext::default()).unwrap_err();
    assert!(matches!(e, FioTextError::NoFigures { .. }), "{e}");
    // QA: it was called "an excerpt"; the report is whole, fio could not run the job.
    for e in [
        e,
        to_run_doc(&r, 0, "t", TextContext::default()).unwrap_err(),
    ] {
        let msg = e.to_string();
        assert!(msg.contains("fio reported error 25 for it"), "{msg}");
        assert!(!msg.contains("excerpt"), "{msg}");
    }
    let both = format!("{}{failed}", JOBFILE.0);
    let t = jobs(&parse(&both, "t").unwrap(), "t", &TextContext::default()).unwrap();
    let last = &t.jobs[4].measured.doc;
    assert!(last.results.read.is_none() && last.results.write.is_none());
    let w = last.warnings.join("\n");
    assert!(
        w.contains("error 25") && w.contains("figures are empty"),
        "{w}"
    );
    // Bad group totals are refused as bad job figures are.
    let bad = JOBFILE.0.replace("run=1002-1002msec", "run=1002-9msec");
    let e = parse(&bad, "t").unwrap_err().to_string();
    assert!(e.contains("run status group 1"), "{e}");
}
