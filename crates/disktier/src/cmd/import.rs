//! `disktier import fio FILE.json`: reads a result fio already produced (`--output-format=json`)
//! into disktier's result document, prints it and stores it (kind "import"), so runs made with
//! plain fio can be compared with disktier's own. An etcd-style job (fdatasync latencies present)
//! also gets the etcd verdict, interpolated from fio's percentile list.
//!
//! Exit status, as every command's: 0 imported (the etcd verdict passed, or there is none), 1
//! imported and the etcd verdict failed (the run is saved all the same), 2 not imported.

use super::{bench, Ctx, Outcome};
use crate::app::job;
use disktier_engine::fio::{self, DocContext};
use std::path::PathBuf;

pub type Args = super::Sub<What>;

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Import fio's JSON output (fio --output-format=json ...).
    Fio(FioArgs),
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

#[derive(Debug, clap::Args)]
pub struct FioArgs {
    /// The file fio wrote (`-` for standard input).
    pub file: PathBuf,
    /// The built-in profile the fio job corresponds to (e.g. etcd), recorded with the result.
    #[arg(long, short = 'p', value_name = "NAME")]
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
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.what {
        What::Fio(a) => import_fio(ctx, a),
        What::EtcdPerf(a) => import_etcd_perf(ctx, a),
    }
}

fn import_etcd_perf(ctx: &Ctx, a: EtcdPerfArgs) -> anyhow::Result<Outcome> {
    let named = disktier_engine::etcdperf::Named {
        target: a.target.as_deref(),
        host: a.host.as_deref(),
    };
    let doc = crate::app::import::etcd_perf(&a.file, named)?;
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
            let pf = if v.pass { "PASS" } else { "FAIL" };
            format!("{pf} ({who}): {}", v.message)
        })
        .collect();
    bench::finish_value(ctx, "import", &doc, &value, &extra)?;
    Ok(verdict_outcome(&doc))
}

/// Exit 1 when the imported run's `etcd` verdict (disktier's own, not the etcd-perf image's)
/// failed, as `check etcd` would; 0 when it passed or there is none.
fn verdict_outcome(doc: &disktier_engine::RunDoc) -> Outcome {
    match doc.verdicts.iter().find(|v| v.name == "etcd") {
        Some(v) if !v.pass => Outcome::Fail,
        _ => Outcome::Pass,
    }
}

fn import_fio(ctx: &Ctx, a: FioArgs) -> anyhow::Result<Outcome> {
    let profile = a.profile.as_deref().map(job::profile).transpose()?;
    let dc = DocContext {
        profile: profile.map(|p| p.name().to_string()),
        // The host that ran fio is not in its JSON: left empty rather than guessed.
        ..DocContext::default()
    };
    if a.jobs {
        // Read as a single job's import is: capped, and an unreadable file or one that is not
        // text said apart.
        let (text, name) = if a.file.as_os_str() == "-" {
            let name = "standard input".to_string();
            (fio::read_capped(Ok(std::io::stdin()), &name)?, name)
        } else {
            let name = a.file.display().to_string();
            (fio::read_capped(std::fs::File::open(&a.file), &name)?, name)
        };
        let v = fio::parse(&text, &name)?;
        let value = serde_json::to_value(crate::app::jobfile::import_document(&v, &name)?)?;
        super::jobfile::save_and_print(ctx, "import", &value, |_| Ok(()))?;
        return Ok(Outcome::Pass);
    }
    let m = if a.file.as_os_str() == "-" {
        let text = fio::read_capped(Ok(std::io::stdin()), "standard input")?;
        fio::import_text(&text, "standard input", a.job, dc)?
    } else {
        fio::import_file(&a.file, a.job, dc)?
    };
    let (doc, extra) = crate::app::import::fio_run(m);
    let value = serde_json::to_value(&doc)?;
    bench::finish_value(ctx, "import", &doc, &value, &extra)?;
    Ok(verdict_outcome(&doc))
}
