//! `disktier bench TARGET`: runs one job — a built-in profile (the user recipes' benchmarks,
//! docs/sources.md) or fio-style options — on a file, a directory or a block device, with the
//! native engine or through fio, and prints a table per direction and for sync (or the result
//! document with `--format json`). The measurement is `app::measure::measure_request` (through
//! `cmd/progress.rs`'s progress line); [`finish`], which `check` and `import` share, saves the
//! result and prints it.

pub use super::runargs::{EngineChoice, RunArgs};
use super::{progress, Ctx, Outcome};
use crate::app::job::{self, JobOptions};
use crate::app::measure::Request;
use crate::app::target::BenchTarget;
use anyhow::{bail, Result};
use disktier_engine::{DirStats, IoLog, RunDoc};
use disktier_units::{fmt_ns, Bytes};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// File, directory (per-job files are created in it) or block device to run on; or a fio
    /// job file (`*.fio`, or a file that starts with a `[section]`) to run its jobs. fio's
    /// `--directory=DIR` and `--filename=PATH` may name it instead, as recipes write them.
    #[arg(required_unless_present_any = ["directory", "filename"])]
    pub target: Option<PathBuf>,
    /// fio's spelling of a directory target (recipes paste `--directory=$TEST_DIR`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["target", "filename"])]
    pub directory: Option<PathBuf>,
    /// fio's spelling of a file or device target.
    #[arg(long, value_name = "PATH", conflicts_with = "target")]
    pub filename: Option<PathBuf>,
    /// A built-in profile: etcd, etcd-openshift, write-iops, read-iops, write-throughput,
    /// read-throughput, latency, small-files. Job options override its settings.
    #[arg(long, short = 'p', value_name = "NAME", value_parser = super::value_enum::Offered { values: super::value_enum::PROFILES, check: super::value_enum::any_text }, hide_possible_values = true)]
    pub profile: Option<String>,
    /// Scale the profile down (size, runtime, file count) so it takes seconds.
    #[arg(long)]
    pub quick: bool,
    /// Record every I/O issued to FILE (a block trace for `disktier simulate`): a new file or an
    /// old trace (or a pipe), never a file with other contents or a device.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Run the job N times: each run is saved (one group), and an aggregate gives the median
    /// p99, the between-run spread and how many runs passed.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=super::repeat::MAX_REPEAT))]
    pub repeat: u64,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub job: JobOptions,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<Outcome> {
    let target = match crate::app::target::bench_target(
        args.target.as_deref(),
        args.filename.as_deref(),
        args.directory.as_deref(),
    )? {
        BenchTarget::JobFile(file) => {
            // QA: `bench FILE.fio --repeat 2` ran the file once and said nothing.
            if args.repeat > 1 {
                bail!(
                    "{} is a fio job file: --repeat repeats one job, not a file of jobs; run `disktier bench` on the file once per repeat (each run is saved), or drop --repeat",
                    crate::text::printable(&file.display().to_string(), false)
                );
            }
            return super::jobfile::run(ctx, &file, &args.run, &job_file_misfits(&args));
        }
        BenchTarget::Target(t) => t,
    };
    let profile = args.profile.as_deref().map(job::profile).transpose()?;
    let io_log = match &args.trace {
        Some(_) if args.run.engine == EngineChoice::Fio => {
            bail!("--trace records the native engine's I/O: drop --engine fio")
        }
        Some(_) if args.repeat > 1 => bail!("--trace records one run: drop --repeat or --trace"),
        Some(p) => Some(crate::app::tracelog::open_io_log(p, &target)?),
        None => None,
    };
    let label = profile.map_or_else(|| "bench".to_string(), |p| p.name().to_string());
    let request = |io_log| Request {
        target: &target,
        profile,
        quick: args.quick,
        job: &args.job,
        run: (&args.run).into(),
        io_log,
    };
    if args.repeat > 1 {
        return super::repeat::repeat(ctx, "bench", args.repeat, |i| {
            let label = format!("{label} {}/{}", i + 1, args.repeat);
            let m = progress::measure(ctx, &label, request(None))?;
            Ok(crate::app::repeat::OneRun {
                doc: m.doc,
                pass: None,
            })
        });
    }
    // The trace is finished after the run, and its write errors reported (QA: a full disk cut
    // the trace short and the run still exited 0); a run that failed leaves no trace.
    let m = match progress::measure(
        ctx,
        &label,
        request(io_log.clone().map(|l| l as Arc<dyn IoLog>)),
    ) {
        Ok(m) => m,
        Err(e) => {
            if let Some(l) = &io_log {
                l.discard();
            }
            return Err(e);
        }
    };
    // The run is saved and shown whatever became of its trace; a trace that could not be
    // written then makes the exit code 2.
    let traced = io_log.as_ref().map(|l| l.finish());
    finish(ctx, "bench", &m.doc, &[])?;
    traced.transpose()?;
    Ok(Outcome::Pass)
}

/// The options given with a job file that cannot apply to it (its jobs take theirs from the
/// file).
fn job_file_misfits(args: &Args) -> Vec<&'static str> {
    let mut given = args.job.given();
    if args.profile.is_some() {
        given.push("--profile");
    }
    if args.quick {
        given.push("--quick");
    }
    if args.trace.is_some() {
        given.push("--trace");
    }
    given
}

/// Saves the document as `kind`, then prints it (table or JSON) with `extra` lines after the
/// table, and turns an interrupted run into the error that makes the exit code 2.
pub fn finish(ctx: &Ctx, kind: &str, doc: &RunDoc, extra: &[String]) -> Result<()> {
    let value = serde_json::to_value(doc)?;
    finish_value(ctx, kind, doc, &value, extra)
}

/// [`finish`] with the JSON already built (check adds fields to it).
pub fn finish_value(
    ctx: &Ctx,
    kind: &str,
    doc: &RunDoc,
    value: &Value,
    extra: &[String],
) -> Result<()> {
    let id = ctx.store().save_measured(kind, doc, value)?;
    let printed = print_doc(ctx, kind, doc, value, extra);
    if let Some(id) = id {
        ctx.note(format!("saved as run {id}"));
    }
    printed?;
    if doc.interrupted {
        bail!("interrupted by a signal: the result above is partial (created files were removed unless --keep-files)");
    }
    Ok(())
}

/// The document on stdout (JSON, the table and `extra`, or the Prometheus exposition) and in
/// the textfile directory.
fn print_doc(ctx: &Ctx, kind: &str, doc: &RunDoc, value: &Value, extra: &[String]) -> Result<()> {
    // A textfile that cannot be written does not keep the result off stdout (QA: a full
    // --textfile-dir printed nothing, and check's verdict was only in the store).
    let exported = ctx.export_metrics(kind, &[doc], doc.interrupted);
    let printed = if ctx.json() {
        super::print_json(value)
    } else if !ctx.prometheus() {
        let mut text = render(doc);
        for line in extra {
            text.push_str(&crate::text::printable(line, false));
            text.push('\n');
        }
        crate::out::print(&text).map_err(Into::into)
    } else {
        Ok(())
    };
    exported.and(printed)
}

/// The human-readable result: a header, one table row per direction and for sync, CPU time,
/// warnings.
pub fn render(doc: &RunDoc) -> String {
    let mut s = String::new();
    // An import that names no target (fio's text report does not print it) says so, rather
    // than a blank path before a guessed kind.
    // The path as the user gave it, but one line that plays nothing on a terminal (QA: a
    // newline or an escape sequence in a directory's name reached the terminal as it was).
    let mut head = if doc.target.path.is_empty() {
        "unknown target (an import's --target names it)".to_string()
    } else {
        format!(
            "{} ({})",
            crate::text::printable(&doc.target.path, false),
            doc.target.kind
        )
    };
    if let Some(fs) = &doc.target.fs_type {
        head.push_str(&format!(" on {fs}"));
    }
    if let Some(dev) = &doc.target.device {
        head.push_str(&format!(", device {dev}"));
    }
    s.push_str(&head);
    s.push('\n');
    let mut what = Vec::new();
    if let Some(p) = &doc.profile {
        what.push(format!("profile {p}"));
    }
    if doc.quick {
        what.push("quick (scaled down: figures are indicative)".into());
    }
    what.push(format!("engine {}", doc.engine));
    what.push(job_summary(&doc.job));
    s.push_str(&what.join(", "));
    s.push('\n');
    if doc.interrupted {
        s.push_str("INTERRUPTED: partial result\n");
    }
    let rows: Vec<(&str, &DirStats)> = [
        ("read", doc.results.read.as_ref()),
        ("write", doc.results.write.as_ref()),
        ("sync", doc.results.sync.as_ref()),
    ]
    .into_iter()
    .filter_map(|(n, d)| d.map(|d| (n, d)))
    .collect();
    if !rows.is_empty() {
        s.push_str(&format!(
            "{:<6} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10}\n",
            "", "ios", "IOPS", "MiB/s", "p50", "p99", "p99.9", "max"
        ));
        for (name, d) in rows {
            let mib = if name == "sync" {
                "-".to_string()
            } else {
                format!("{:.2}", d.bw_bytes / (1u64 << 20) as f64)
            };
            // A figure the result does not have (an import's) is "-", never 0.
            let p = |q: f64| {
                d.lat_ns
                    .p(q)
                    .map_or_else(|| "-".to_string(), |v| fmt_ns(v as f64))
            };
            let max = d
                .lat_ns
                .max_ns()
                .map_or_else(|| "-".to_string(), |v| fmt_ns(v as f64));
            // A latency without a count is an import's that gave no count (etcd-perf's output
            // without fio's report): its count and rate are unknown, not 0 (QA).
            let counted = d.ios > 0 || d.lat_ns.p(99.0).is_none();
            let (ios, iops) = if counted {
                (d.ios.to_string(), format!("{:.1}", d.iops))
            } else {
                ("-".into(), "-".into())
            };
            s.push_str(&format!(
                "{:<6} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10}\n",
                name,
                ios,
                iops,
                mib,
                p(50.0),
                p(99.0),
                p(99.9),
                max
            ));
        }
    }
    if let Some(st) = doc.results.sync.as_ref().and_then(|d| d.stalls) {
        s.push_str(&format!(
            "sync stalls: {} over {} (etcd's heartbeat interval), {} over {} (its election timeout)\n",
            st.over_heartbeat,
            fmt_ns(st.heartbeat_ns as f64),
            st.over_election,
            fmt_ns(st.election_ns as f64)
        ));
    }
    if let Some(sf) = &doc.results.small_files {
        s.push_str(&format!(
            "small files: {} files of {} in {:.2} s{}: {:.0} files/s, {:.1} MiB/s\n",
            sf.files,
            Bytes(sf.file_size),
            sf.seconds,
            final_sync(sf.sync_s, doc.interrupted),
            sf.files_per_s,
            sf.bw_bytes / (1u64 << 20) as f64
        ));
    }
    if doc.engine == "etcd-perf" && doc.duration_s == 0.0 {
        s.push_str("run time and cpu: not in the imported file\n");
    } else {
        s.push_str(&format!(
            "{:.2} s measured; cpu {:.2} s user, {:.2} s system\n",
            doc.duration_s, doc.results.cpu.usr_s, doc.results.cpu.sys_s
        ));
    }
    for w in &doc.warnings {
        s.push_str(&format!("warning: {}\n", crate::text::printable(w, false)));
    }
    s
}

/// "write bs=2300 ioengine=sync fdatasync=1 size=22 MiB" from the job JSON.
fn job_summary(job: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(rw) = job.get("rw").and_then(|v| v.as_str()) {
        parts.push(rw.to_string());
    }
    if let Some(bs) = job.get("bs").and_then(|v| v.as_u64()) {
        parts.push(format!("bs={bs}"));
    }
    if let Some(e) = job.get("ioengine").and_then(|v| v.as_str()) {
        parts.push(format!("ioengine={e}"));
    }
    for k in ["iodepth", "numjobs", "fdatasync", "fsync"] {
        if let Some(n) = job.get(k).and_then(|v| v.as_u64()) {
            let default = if k == "iodepth" || k == "numjobs" {
                1
            } else {
                0
            };
            if n != default {
                parts.push(format!("{k}={n}"));
            }
        }
    }
    if job.get("direct").and_then(|v| v.as_bool()) == Some(true) {
        parts.push("direct".into());
    }
    if let Some(size) = job.get("size").and_then(|v| v.as_u64()) {
        parts.push(format!("size={}", Bytes(size)));
    }
    if let Some(rt) = job.get("runtime").and_then(|v| v.as_str()) {
        parts.push(format!("runtime={rt}"));
    }
    parts.join(" ")
}

/// ", the final sync 0.42 s of it" for a small-files run that synced (older results did not).
pub fn final_sync(sync_s: Option<f64>, interrupted: bool) -> String {
    match (sync_s, interrupted) {
        (Some(s), _) => format!(", the final sync {s:.2} s of it"),
        (None, true) => ", stopped before its final sync".into(),
        // Stored before disktier ended small-files with a syncfs (QA: `show` said nothing).
        (None, false) => ", without a final sync (the page cache's rate)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_engine::{HostInfo, LatStats, Results, TargetInfo};

    /// QA: `show` of a small-files result stored before the final sync said nothing of it.
    #[test]
    fn final_sync_says_how_the_files_were_timed() {
        assert_eq!(
            final_sync(Some(1.0), false),
            ", the final sync 1.00 s of it"
        );
        assert_eq!(final_sync(None, true), ", stopped before its final sync");
        assert_eq!(
            final_sync(None, false),
            ", without a final sync (the page cache's rate)"
        );
    }

    #[test]
    fn table_has_a_row_per_direction_and_sync() {
        let lat = |p99: u64| {
            let mut l = LatStats {
                max: p99 * 2,
                ..LatStats::default()
            };
            for (k, v) in [("50", p99 / 2), ("99", p99), ("99.9", p99 + 1)] {
                l.percentiles.insert(k.into(), v);
            }
            l
        };
        let doc = RunDoc {
            schema_version: crate::app::SCHEMA_VERSION,
            engine: "disktier".into(),
            profile: Some("etcd".into()),
            quick: true,
            job: serde_json::json!({"rw": "write", "bs": 2300, "ioengine": "sync", "fdatasync": 1, "iodepth": 1, "size": 4194304}),
            target: TargetInfo {
                path: "/var/lib/etcd".into(),
                kind: "directory".into(),
                fs_type: Some("xfs".into()),
                device: Some("loop3".into()),
                ..TargetInfo::default()
            },
            host: HostInfo::default(),
            started_at: String::new(),
            duration_s: 2.0,
            interrupted: false,
            results: Results {
                write: Some(DirStats {
                    ios: 1823,
                    bytes: 1823 * 2300,
                    iops: 911.5,
                    bw_bytes: 911.5 * 2300.0,
                    lat_ns: lat(40_000),
                    stalls: None,
                }),
                sync: Some(DirStats {
                    ios: 1823,
                    iops: 911.5,
                    lat_ns: lat(1_400_000),
                    ..DirStats::default()
                }),
                ..Results::default()
            },
            series: vec![],
            verdicts: vec![],
            warnings: vec!["io_uring is unavailable: fell back to psync".into()],
        };
        let t = render(&doc);
        assert!(
            t.starts_with("/var/lib/etcd (directory) on xfs, device loop3\n"),
            "{t}"
        );
        assert!(t.contains("profile etcd, quick"), "{t}");
        assert!(
            t.contains("write bs=2300 ioengine=sync fdatasync=1 size=4 MiB"),
            "{t}"
        );
        let sync = t.lines().find(|l| l.starts_with("sync ")).unwrap();
        assert!(
            sync.contains("1.40 ms") && sync.contains("2.80 ms"),
            "{sync}"
        );
        assert!(t
            .lines()
            .any(|l| l.starts_with("write ") && l.contains("911.5")));
        assert!(!t.lines().any(|l| l.starts_with("read ")));
        assert!(t.contains("warning: io_uring is unavailable"));
        assert!(!t.contains("INTERRUPTED"));
    }
}
