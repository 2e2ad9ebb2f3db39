//! `disktier import fio FILE.json`: reads a result fio already produced (`--output-format=json`;
//! `import fio-text` its default text report) into disktier's result document, prints it and stores it (kind "import"), so runs made with
//! plain fio can be compared with disktier's own. An etcd-style job (fdatasync latencies present)
//! also gets the etcd verdict, interpolated from fio's percentile list.
//!
//! Exit status, as every command's: 0 imported (the etcd verdict passed, or there is none), 1
//! imported and the etcd verdict failed (the run is saved all the same), 2 not imported.

use super::{bench, Ctx, Outcome};
use crate::app::import::{self, FioImport};
use std::path::PathBuf;

pub type Args = super::Sub<What>;

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Import fio's JSON output (fio --output-format=json ...).
    Fio(FioArgs),
    /// Import fio's default text report (fio --output-format=normal, or no option).
    ///
    /// One job's report, as recipes and issues quote it, into the same result as `import fio`
    /// makes of fio's JSON; with --jobs every job report (fio's output of a job file) into the
    /// same document as `import fio --jobs`. The text has no sync count, histogram bins, file,
    /// size, host or time zone: those are left unknown and said so in the result's warnings.
    /// Trims (`trim:`) are left out of the figures, as `import fio` leaves out fio's JSON `trim`,
    /// and a warning counts them. With --jobs, each reporting group's jobs are checked against
    /// fio's `Run status group` totals.
    FioText(FioArgs),
    /// Import the OpenShift etcd-perf image's text output ("99th percentile of fsync is N ns").
    EtcdPerf(EtcdPerfArgs),
}

#[derive(Debug, clap::Args)]
pub struct EtcdPerfArgs {
    /// The file the image's output was saved to (`podman run ... etcd-perf > FILE`).
    pub file: PathBuf,
    /// What the image measured: the directory it was given, or a name for the disk
    /// (`ebs-gp3`), so that `history` and `compare` tell imports apart [default: /var/lib/etcd].
    #[arg(long, value_name = "PATH|NAME", value_parser = label)]
    pub target: Option<String>,
    /// The node the image ran on (the output does not say; without it the host is shown as
    /// unknown).
    #[arg(long, value_name = "NAME", value_parser = label)]
    pub host: Option<String>,
}

/// A target or host name for an imported run: printed and stored, so one line of printable
/// characters, at most 255 bytes.
fn label(s: &str) -> Result<String, String> {
    if s.is_empty() || s.len() > 255 || s.chars().any(char::is_control) {
        return Err("give one line of 1 to 255 printable characters".into());
    }
    Ok(s.to_string())
}

/// `import fio` and `import fio-text`: the same options, as both make the same documents.
#[derive(Debug, clap::Args)]
pub struct FioArgs {
    /// The file fio's output was saved to (`fio ... > FILE`; `-` for standard input). A FIFO,
    /// `-` or `<(...)` is read until its writer closes it, as `cat` reads it: a FIFO no writer
    /// has opened waits for one (Ctrl-C ends the wait).
    pub file: PathBuf,
    /// The built-in profile the fio job corresponds to (e.g. etcd), recorded with the result.
    #[arg(long, short = 'p', value_name = "NAME", value_parser = super::value_enum::Offered { values: super::value_enum::PROFILES, check: super::value_enum::any_text }, hide_possible_values = true)]
    pub profile: Option<String>,
    /// Which job of the file to import, when fio ran several without --group_reporting.
    #[arg(
        long,
        default_value_t = 0,
        value_name = "INDEX",
        conflicts_with = "jobs"
    )]
    pub job: usize,
    /// Import every job (fio's output of a job file) as one run with a `jobs` list and the
    /// reporting groups, as `disktier bench JOBFILE` saves it.
    #[arg(long)]
    pub jobs: bool,
    /// What fio measured (its file, directory or device), or a name for the disk (`ebs-gp3`),
    /// so that `history` and `compare` tell imports apart. Where fio's JSON names a path, this
    /// takes its place (the job's fio options keep fio's); fio's text names none.
    #[arg(long, value_name = "PATH|NAME", value_parser = label)]
    pub target: Option<String>,
    /// The host fio ran on (fio's output does not say; without it the host is shown as
    /// unknown).
    #[arg(long, value_name = "NAME", value_parser = label)]
    pub host: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.what {
        What::Fio(a) => import_fio(ctx, a),
        What::FioText(a) => import_fio_text(ctx, a),
        What::EtcdPerf(a) => import_etcd_perf(ctx, a),
    }
}

fn import_fio_text(ctx: &Ctx, a: FioArgs) -> anyhow::Result<Outcome> {
    let imported = import::fio_text(import::FioTextOptions {
        file: &a.file,
        profile: a.profile.as_deref(),
        job: a.job,
        jobs: a.jobs,
        target: a.target.as_deref(),
        host: a.host.as_deref(),
    })?;
    saved(ctx, imported)
}

fn import_etcd_perf(ctx: &Ctx, a: EtcdPerfArgs) -> anyhow::Result<Outcome> {
    let named = disktier_engine::etcdperf::Named {
        target: a.target.as_deref(),
        host: a.host.as_deref(),
    };
    let doc = import::etcd_perf(&a.file, named)?;
    let value = serde_json::to_value(&doc)?;
    let extra: Vec<String> = doc
        .verdicts
        .iter()
        .map(|v| {
            let who = if v.name == "etcd" {
                "disktier"
            } else {
                "the image"
            };
            let pf = super::show::pass_word(v);
            format!("{pf} ({who}): {}", v.message)
        })
        .collect();
    bench::finish_value(ctx, "import", &doc, &value, &extra)?;
    Ok(verdict_outcome(&doc))
}

/// Exit 1 when the imported run did not pass ([`import::passed`]): the run is saved all the same.
fn verdict_outcome(doc: &disktier_engine::RunDoc) -> Outcome {
    if import::passed(&doc.verdicts) {
        Outcome::Pass
    } else {
        Outcome::Fail
    }
}

fn import_fio(ctx: &Ctx, a: FioArgs) -> anyhow::Result<Outcome> {
    let o = import::FioOptions {
        file: &a.file,
        profile: a.profile.as_deref(),
        job: a.job,
        jobs: a.jobs,
        target: a.target.as_deref(),
        host: a.host.as_deref(),
    };
    saved(ctx, import::fio(o)?)
}

/// Prints and saves what an `import fio` or `import fio-text` read.
fn saved(ctx: &Ctx, imported: FioImport) -> anyhow::Result<Outcome> {
    match imported {
        FioImport::Jobs(value) => {
            super::jobfile::save_and_print(ctx, "import", &value, |_| Ok(()))?;
            Ok(Outcome::Pass)
        }
        FioImport::Run(doc, extra) => {
            let value = serde_json::to_value(&doc)?;
            bench::finish_value(ctx, "import", &doc, &value, &extra)?;
            Ok(verdict_outcome(&doc))
        }
    }
}
