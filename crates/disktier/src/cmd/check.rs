//! `disktier check etcd DIR`: can this disk host etcd? Runs etcd's fio job (the `etcd` profile, or
//! `etcd-openshift`) in DIR and judges the 99th percentile of fdatasync latency against 10 ms,
//! printing it the way the OpenShift etcd-perf image does (the OpenShift instance-disk recipe
//! [recipe-ocp-instance-disk]), plus etcd's IOPS guidance and a 95 % confidence interval for the
//! p99. Exit 0 within the threshold, 1 above, 2 when it could not run.

use super::bench::{self, RunArgs};
use super::{Ctx, Outcome};
use crate::app::check::{self, EtcdCheck, EtcdKind};
use crate::app::job::JobOptions;
use crate::app::judge;
use crate::app::repeat::OneRun;
use anyhow::bail;
use disktier_engine::verdict::EtcdCriteria;
use std::path::PathBuf;
use std::time::Duration;

pub type Args = super::Sub<What>;

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Can this directory's disk host etcd? fdatasync p99 under 10 ms (etcd docs, etcd-perf).
    #[command(
        after_help = "Exit status: 0 the p99 is within the threshold (with --profile etcd-server, the backend commit p99 too; with --metrics, every member's p99s, stalls and counters pass), 1 one fails (or a runtime, --quick's cap of 5 s or --runtime, cut the run short and the p99's interval does not settle the verdict: INCONCLUSIVE), 2 the check could not run (with --metrics, a member could not be read) or was interrupted."
    )]
    Etcd(EtcdArgs),
}

value_enum! {
    /// The etcd profiles `check etcd` accepts.
    pub enum EtcdProfile => EtcdKind {
        /// etcd's classic job: 2300-byte writes, fdatasync after each, 22 MiB (etcd docs).
        Etcd,
        /// The current OpenShift etcd-perf job: 8000-byte writes, 100 MiB, 60 s time-based.
        EtcdOpenshift,
        /// What a running etcd server does: WAL appends into preallocated 64 MB segments, one
        /// fdatasync per batch, at 150 puts/s, while bbolt commits every 100 ms (two fdatasyncs).
        /// Judges the WAL fdatasync p99 and the backend commit p99 (etcd docs: under 25 ms).
        EtcdServer,
    }
}

#[derive(Debug, clap::Args)]
pub struct EtcdArgs {
    /// Directory on the disk etcd would use (e.g. /var/lib/etcd); a test file is created in it
    /// and removed afterwards. Not with --metrics.
    #[arg(required_unless_present = "metrics", conflicts_with = "metrics")]
    pub dir: Option<PathBuf>,
    /// Judge running etcd members instead, from their own /metrics: comma-separated URLs such
    /// as http://127.0.0.1:2381/metrics or https://10.0.0.5:2379/metrics.
    #[arg(long, value_delimiter = ',', value_name = "URL[,URL...]")]
    pub metrics: Vec<String>,
    /// With --metrics: sample twice this many seconds apart and judge what happened in between
    /// (default: everything since each member started).
    #[arg(long, value_name = "SECONDS", requires = "metrics", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub interval: Option<u64>,
    /// With --metrics: CA bundle for the members' TLS certificates (as etcdctl --cacert).
    #[arg(long, requires = "metrics", value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// With --metrics: client certificate, when the members require one (as etcdctl --cert).
    #[arg(long, requires_all = ["metrics", "key"], value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// With --metrics: the client certificate's key (as etcdctl --key).
    #[arg(long, requires_all = ["metrics", "cert"], value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Which etcd job to run.
    #[arg(long, short = 'p', value_enum, default_value_t = EtcdProfile::Etcd, conflicts_with = "metrics")]
    pub profile: EtcdProfile,
    /// Limit for the 99th percentile of fdatasync latency, with its unit (10ms, 500us: a bare
    /// number is refused) (etcd docs: 10 ms).
    #[arg(long, value_parser = disktier_units::clap_parsers::latency, default_value = "10ms", value_name = "DURATION", conflicts_with = "metrics")]
    pub threshold: Duration,
    /// Scale the job down so the check takes seconds (the etcd job: 4 MiB, for at most 5 s;
    /// fewer samples: a wider interval). A run the 5 s cap cuts short says how many of its
    /// writes ran, and is INCONCLUSIVE (exit 1) unless the p99's interval settles the verdict.
    #[arg(long, conflicts_with = "metrics")]
    pub quick: bool,
    /// Run the job N times: each run is saved (one group), and an aggregate gives the median
    /// p99, the between-run spread and how many runs passed.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "metrics", value_parser = clap::value_parser!(u64).range(1..=super::repeat::MAX_REPEAT))]
    pub repeat: u64,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub job: JobOptions,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.what {
        What::Etcd(a) => etcd(ctx, a),
    }
}

fn etcd(ctx: &Ctx, a: EtcdArgs) -> anyhow::Result<Outcome> {
    let Some(dir) = a.dir.clone() else {
        return live(ctx, &a);
    };
    // clap's `requires = "metrics"` is void here: DIR conflicts with --metrics, and clap takes
    // a missing argument that conflicts with a present one as fine (QA: `check etcd DIR
    // --interval 60 --cacert ca.crt` measured DIR and ignored both).
    let live_only: Vec<&str> = [
        (a.interval.is_some(), "--interval"),
        (a.cacert.is_some(), "--cacert"),
        (a.cert.is_some(), "--cert"),
        (a.key.is_some(), "--key"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect();
    if !live_only.is_empty() {
        bail!(
            "{} only {} to --metrics (judging running etcd members), and {} is measured instead: drop {} to measure the directory, or give --metrics URL without it",
            live_only.join(", "),
            if live_only.len() == 1 { "applies" } else { "apply" },
            dir.display(),
            live_only.join(", ")
        );
    }
    let prepared = check::prepare(
        &dir,
        a.profile.into(),
        a.quick,
        &a.job,
        (&a.run).into(),
        a.threshold,
    )?;
    let (request, criteria) = match prepared {
        EtcdCheck::Job { request, criteria } => (request, criteria),
        EtcdCheck::Server {
            dir,
            quick,
            criteria,
        } => {
            // The model runs once, on files it creates and removes: these would be ignored (QA:
            // --repeat 3 ran once and printed one run, no aggregate).
            let ignored: Vec<&str> = [
                (a.repeat > 1, "--repeat"),
                (a.run.keep_files, "--keep-files"),
                (a.run.destructive, "--destructive"),
                (a.run.no_layout, "--no-layout"),
            ]
            .into_iter()
            .filter_map(|(given, name)| given.then_some(name))
            .collect();
            if !ignored.is_empty() {
                bail!(
                    "{} {} not apply to --profile etcd-server (the model runs once, on files it creates and removes itself): drop {}, or use --profile etcd",
                    ignored.join(", "),
                    if ignored.len() == 1 { "does" } else { "do" },
                    ignored.join(", ")
                );
            }
            return etcd_server(ctx, dir, quick, criteria);
        }
    };
    let one = |label: String| -> anyhow::Result<(OneRun, Vec<String>)> {
        super::progress::running(ctx, &label, |stop, progress| {
            check::measure_and_judge(request.clone(), criteria, stop, progress)
        })
    };
    if a.repeat > 1 {
        return super::repeat::repeat(ctx, "check", a.repeat, |i| {
            Ok(one(format!("check etcd {}/{}", i + 1, a.repeat))?.0)
        });
    }
    let (r, lines) = one("check etcd".into())?;
    bench::finish(ctx, "check", &r.doc, &lines)?;
    Ok(if r.pass == Some(true) {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

/// `check etcd --metrics`: the verdict from what the running members measured themselves.
fn live(ctx: &Ctx, a: &EtcdArgs) -> anyhow::Result<Outcome> {
    // Nothing is measured here to export: refused before scraping, never an exit 0 with no
    // metrics.
    if ctx.exports_metrics() {
        bail!("--format prometheus and --textfile-dir export runs disktier measured; check etcd --metrics judges etcd's own metrics, which Prometheus scrapes from etcd already: use --format text or json here");
    }
    // What only a measured check uses would be silently ignored (clap refuses --profile,
    // --threshold and --quick itself).
    let mut measuring = a.job.given();
    for (given, name) in [
        (a.run.keep_files, "--keep-files"),
        (a.run.destructive, "--destructive"),
        (a.run.no_layout, "--no-layout"),
    ] {
        if given {
            measuring.push(name);
        }
    }
    if !measuring.is_empty() {
        bail!(
            "{} {} the job a measured check runs, and --metrics measures nothing (it judges what the members measured): drop {}, or measure a directory with check etcd DIR",
            measuring.join(", "),
            if measuring.len() == 1 { "sets up" } else { "set up" },
            measuring.join(", ")
        );
    }
    let tls = disktier_etcdmetrics::TlsFiles {
        cacert: a.cacert.clone(),
        cert: a.cert.clone(),
        key: a.key.clone(),
    };
    let countdown = super::progress::enabled(ctx);
    // A signal ends the --interval wait or a scrape a member does not answer (up to the
    // client's 20 s) with exit 2, as the page says of an interrupted check.
    let stop = super::progress::stop_flag();
    let live = judge::etcd_live(
        &a.metrics,
        &tls,
        a.interval,
        &stop,
        &|m| ctx.note(m),
        &|left| {
            if countdown {
                super::progress::draw(&format!(
                    "etcd metrics: second sample in {}",
                    super::progress::fmt_secs(std::time::Duration::from_secs(left))
                ));
            }
        },
    );
    super::progress::clear();
    let live = live?;
    let j = &live.judged;
    if ctx.json() {
        super::print_json(&live.document())?;
    } else {
        for line in &j.lines {
            outln!("{line}")?;
        }
    }
    Ok(if j.pass { Outcome::Pass } else { Outcome::Fail })
}

/// `check etcd --profile etcd-server`: the WAL fdatasync p99 is the verdict figure, the backend
/// commit p99 the second one; both must be within their limits.
fn etcd_server(
    ctx: &Ctx,
    dir: &std::path::Path,
    quick: bool,
    criteria: EtcdCriteria,
) -> anyhow::Result<Outcome> {
    let j = check::etcd_server(dir, quick, criteria, super::progress::stop_flag(), &|m| {
        ctx.note(m)
    })?;
    let value = serde_json::to_value(j.document())?;
    bench::finish_value(ctx, "check", &j.doc, &value, &j.lines)?;
    Ok(if j.pass { Outcome::Pass } else { Outcome::Fail })
}
