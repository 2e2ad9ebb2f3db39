//! `disktier import fio FILE.json`: reads a result fio already produced (`--output-format=json`)
//! into disktier's result document, prints it and stores it (kind "import"), so runs made with
//! plain fio can be compared with disktier's own. An etcd-style job (fdatasync latencies present)
//! also gets the etcd verdict, interpolated from fio's percentile list.

use super::{bench, jobargs, Ctx, Outcome};
use crate::app::judge;
use disktier_engine::etcdperf;
use disktier_engine::fio::{self, DocContext};
use disktier_engine::verdict;
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

/// The etcd-perf output holds no date: the file's modification time stands for when it ran.
fn import_etcd_perf(ctx: &Ctx, a: EtcdPerfArgs) -> anyhow::Result<Outcome> {
    let e = etcdperf::parse_file(&a.file)?;
    let started_at = std::fs::metadata(&a.file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| {
            time::OffsetDateTime::from(t)
                .format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    let doc = e.to_run_doc(&a.file.display().to_string(), started_at);
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
    // Like `import fio`: importing succeeded whatever the verdict says.
    Ok(Outcome::Pass)
}

fn import_fio(ctx: &Ctx, a: FioArgs) -> anyhow::Result<Outcome> {
    let profile = a.profile.as_deref().map(jobargs::profile).transpose()?;
    let dc = DocContext {
        profile: profile.map(|p| p.name().to_string()),
        // The host that ran fio is not in its JSON: left empty rather than guessed.
        ..DocContext::default()
    };
    if a.jobs {
        let (text, name) = if a.file.as_os_str() == "-" {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
            (text, "standard input".to_string())
        } else {
            let name = a.file.display().to_string();
            let text = std::fs::read_to_string(&a.file)
                .map_err(|e| anyhow::anyhow!("cannot read {name}: {e}"))?;
            (text, name)
        };
        let v = fio::parse(&text, &name)?;
        let value = super::jobfile::import_document(&v, &name)?;
        super::jobfile::finish_import(ctx, &value)?;
        return Ok(Outcome::Pass);
    }
    let m = if a.file.as_os_str() == "-" {
        let text = fio::read_capped(Ok(std::io::stdin()), "standard input")?;
        fio::import_text(&text, "standard input", a.job, dc)?
    } else {
        fio::import_file(&a.file, a.job, dc)?
    };
    let mut doc = m.doc;
    doc.warnings.push(if m.sync_hist.is_some() {
        "imported from fio's JSON: host facts are unknown".to_string()
    } else {
        "imported from fio's JSON: host facts are unknown; without json+ bins, latencies between fio's listed percentiles are interpolated".to_string()
    });
    let mut extra = Vec::new();
    if doc.results.sync.is_some() {
        if let Ok(v) = judge::etcd(
            &mut doc,
            m.sync_hist.as_ref(),
            verdict::EtcdCriteria::default(),
        ) {
            extra = v.lines;
        }
    }
    let value = serde_json::to_value(&doc)?;
    bench::finish_value(ctx, "import", &doc, &value, &extra)?;
    Ok(Outcome::Pass)
}
