//! `disktier assess [PATH ...]`: the main job. Parses the options into an
//! [`crate::app::assess::Request`], runs it, prints the verdict table (or JSON) and writes the
//! HTML report. The suite, the scratch directories, measuring, judging and saving are in
//! [`crate::app::assess`].

use super::bench::EngineChoice;
use super::{print_json, progress, Ctx, Outcome};
use crate::app::assess::{assess, Hooks, Options, RunOut, Skipped, TargetOut};
use crate::app::SCHEMA_VERSION;
use crate::text::printable;
use anyhow::bail;
use disktier_engine::RunDoc;
use disktier_store::compare::{fmt_count, fmt_value, Unit};
use disktier_units::fmt_ns;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directories on the filesystems to assess (default: the current directory).
    #[arg(value_name = "PATH", conflicts_with = "all_local")]
    pub paths: Vec<PathBuf>,
    /// Every writable local filesystem, and every eligible disk `disktier disks` reports.
    #[arg(long)]
    pub all_local: bool,
    /// Run the full profiles (minutes per target) instead of the quick suite.
    #[arg(long)]
    pub full: bool,
    /// Only these profiles, comma-separated (default: the whole suite).
    #[arg(long, value_delimiter = ',', value_name = "PROFILE,...")]
    pub only: Vec<String>,
    /// Where to write the HTML report.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "disktier-report.html",
        conflicts_with = "no_report"
    )]
    pub report: PathBuf,
    /// Do not write the HTML report.
    #[arg(long)]
    pub no_report: bool,
    /// Engine that runs the profiles (fio has no small-files job: that profile then fails).
    #[arg(long, value_enum, default_value_t = EngineChoice::Native)]
    pub engine: EngineChoice,
}

/// `assess --format json`: the targets and their runs under one assess id.
#[derive(Debug, Serialize)]
struct AssessDoc<'a> {
    schema_version: u32,
    assess_id: &'a str,
    quick: bool,
    /// Wall-clock seconds of the whole assessment.
    seconds: f64,
    /// A signal stopped the assessment: runs marked `interrupted` are partial, and the
    /// profiles after them did not run.
    interrupted: bool,
    targets: &'a [TargetOut],
    /// Disks that were not assessed, and why.
    not_assessed: &'a [Skipped],
    /// The HTML report written, if any.
    #[serde(serialize_with = "crate::text::lossy_opt_path")]
    report: Option<&'a Path>,
}

impl Args {
    fn into_options(self) -> Options {
        Options {
            paths: self.paths,
            all_local: self.all_local,
            full: self.full,
            only: self.only,
            report: self.report,
            no_report: self.no_report,
            tool: self.engine.into(),
        }
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let req = args.into_options().check()?;
    let started = Instant::now();
    let mut a = assess(
        &req,
        &Hooks {
            note: &|m| ctx.note(m),
            progress: &|label| progress::reporter(ctx, label),
            done: &progress::clear,
            stop: progress::stop_flag(),
            store: ctx.store(),
        },
    )?;
    let wall = started.elapsed().as_secs_f64();
    // The runs are saved (by `assess`) and the report written: what cannot be lost is done
    // before anything is printed. A textfile that cannot be written is reported after the
    // table.
    let refs: Vec<&RunDoc> = a.docs.iter().collect();
    let exported = ctx.export_metrics("assess", &refs, a.interrupted);
    if ctx.json() {
        // Through a Value: its keys are sorted, as this document has always been printed.
        print_json(&serde_json::to_value(AssessDoc {
            schema_version: SCHEMA_VERSION,
            assess_id: &a.assess_id,
            quick: req.quick,
            seconds: wall,
            interrupted: a.interrupted,
            targets: &a.targets,
            not_assessed: &a.skipped,
            report: a.report.as_deref(),
        })?)?;
    } else if ctx.prometheus() {
        // The exposition above is the output.
    } else {
        if a.interrupted {
            outln!("INTERRUPTED: the assessment was stopped; figures marked (partial) are from a run cut short, and the profiles after it did not run")?;
        }
        crate::out::print(&table(&a.targets))?;
        for s in &a.skipped {
            outln!("{}  {}", s.device, s.reason)?;
        }
        // QA on dt-s24: with --no-save the id was printed as if `show` and `history --group`
        // could find it.
        outln!(
            "\nassess id {} ({:.0} s{}){}",
            a.assess_id,
            wall,
            if ctx.global.no_save {
                "; not saved (--no-save): show and history will not find it"
            } else {
                ""
            },
            if req.quick {
                ", quick suite: --full for the full profiles"
            } else {
                ""
            }
        )?;
        if let Some(r) = &a.report {
            outln!("report: {}", r.display())?;
        }
    }
    exported?;
    if let Some(e) = a.report_error.take() {
        return Err(e);
    }
    if a.interrupted {
        bail!(
            "interrupted by a signal: the assessment is partial (scratch directories were removed)"
        );
    }
    let not_run = a.etcd_not_run();
    if !not_run.is_empty() {
        bail!(
            "the etcd check could not run on {}, so whether it can host etcd is unknown: see why above, fix it and assess again",
            not_run.join(", ")
        );
    }
    Ok(if a.pass() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

fn table(targets: &[TargetOut]) -> String {
    let mut rows = vec![[
        "TARGET",
        "FS",
        "DEVICE",
        "ETCD",
        "SYNC P99",
        "READ IOPS",
        "WRITE IOPS",
        "READ",
        "WRITE",
        "READ P99 QD1",
        "SMALL FILES",
    ]
    .map(String::from)
    .to_vec()];
    for t in targets {
        let get = |name: &str, f: &dyn Fn(&RunOut) -> Option<String>| {
            t.runs
                .iter()
                .find(|r| r.profile == name)
                .map(|r| {
                    if r.error.is_some() {
                        "failed".into()
                    } else {
                        let v = f(r).unwrap_or_else(|| "-".into());
                        if r.interrupted {
                            format!("{v} (partial)")
                        } else {
                            v
                        }
                    }
                })
                .unwrap_or_else(|| "-".into())
        };
        let etcd_interrupted = t.runs.iter().any(|r| r.profile == "etcd" && r.interrupted);
        // On tmpfs the verdict is kept, but it is RAM: said in the cell and under the table.
        let ram = if t.caveat.is_some() {
            format!(" ({})", t.fs_type.as_deref().unwrap_or("RAM"))
        } else {
            String::new()
        };
        rows.push(vec![
            t.path.clone(),
            t.fs_type.clone().unwrap_or_else(|| "-".into()),
            t.device.clone().unwrap_or_else(|| "-".into()),
            match (t.etcd_ready, etcd_interrupted) {
                (_, true) => "INTERRUPTED".into(),
                (Some(false), _) if t.etcd_inconclusive => format!("INCONCLUSIVE{ram}"),
                (Some(true), _) => format!("ready{ram}"),
                (Some(false), _) => format!("NOT ready{ram}"),
                (None, _) => "-".into(),
            },
            get("etcd", &|r| r.sync_p99_ns.map(|v| fmt_ns(v as f64))),
            get("read-iops", &|r| r.read_iops.map(fmt_count)),
            get("write-iops", &|r| r.write_iops.map(fmt_count)),
            get("read-throughput", &|r| {
                r.read_bw_bytes.map(|v| fmt_value(Unit::BytesPerSec, v))
            }),
            get("write-throughput", &|r| {
                r.write_bw_bytes.map(|v| fmt_value(Unit::BytesPerSec, v))
            }),
            get("latency", &|r| r.p99_ns.map(|v| fmt_ns(v as f64))),
            get("small-files", &|r| {
                r.files_per_s.map(|v| format!("{}/s", fmt_count(v)))
            }),
        ]);
    }
    // A path is printed as history prints it (QA: a newline in a target's name broke its row
    // in two, and an escape sequence in it reached the terminal).
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| r.iter().map(|c| printable(c, false)).collect())
        .collect();
    let mut s = String::from("\n");
    s.push_str(&disktier_store::compare::align(&rows));
    for t in targets {
        if let Some(c) = &t.caveat {
            s.push_str(&format!("caveat: {}\n", printable(c, false)));
        }
        for r in &t.runs {
            if let Some(e) = &r.error {
                let line = format!("{}: {} failed: {e}", t.path, r.profile);
                s.push_str(&printable(&line, false));
                s.push('\n');
            }
            // QA: a run's warnings (the quick etcd job cut short by its cap) were only in
            // `show RUN`: the table's figure stood there as if whole.
            // The RAM caveat, a warning of the run too, is said once, above.
            for w in r.warnings.iter().filter(|w| Some(*w) != t.caveat.as_ref()) {
                let line = format!("{}: {}: warning: {w}", t.path, r.profile);
                s.push_str(&printable(&line, false));
                s.push('\n');
            }
        }
    }
    s
}
