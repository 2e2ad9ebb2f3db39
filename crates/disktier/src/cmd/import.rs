//! `disktier import fio FILE.json`: reads a result fio already produced (`--output-format=json`)
//! into disktier's result document, prints it and stores it (kind "import"), so runs made with
//! plain fio can be compared with disktier's own. An etcd-style job (fdatasync latencies present)
//! also gets the etcd verdict, interpolated from fio's percentile list.

use super::{bench, jobargs, Ctx, Outcome};
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
    let doc = crate::app::import::etcd_perf(&a.file)?;
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
        let value = crate::app::jobfile::import_document(&v, &name)?;
        super::jobfile::print_and_save(ctx, "import", &value)?;
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
    Ok(Outcome::Pass)
}
