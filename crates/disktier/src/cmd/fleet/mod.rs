//! `disktier fleet run|clean|rbac`: every node of a Kubernetes cluster measured through the
//! cluster (one Job per node). This module parses, calls `app::fleet` (which runs, saves and
//! sums up the nodes) or `disktier_fleet` (the Kubernetes work), and prints.
//!
//! This file holds the arguments and the three commands; `results.rs` exports each node's
//! result as metrics, `text.rs` writes the human output (progress, table, summary).

mod results;
mod text;

use super::{print_json, Ctx, Outcome};
use crate::app::{self, SCHEMA_VERSION};
use anyhow::bail;
use disktier_fleet::dry_run;
use disktier_fleet::kube_run::{ClientOptions, Progress, RunSpec};
use disktier_fleet::manifest::{self, JobConfig, JobOptions, PullPolicy};
use disktier_fleet::rbac::{self, Who};
use disktier_fleet::select::Selection;
use disktier_fleet::summary;
use results::export_metrics;
use std::path::PathBuf;
use std::time::Duration;
use text::{left_behind_message, note, summary_text, table, ProgressLines};

pub type Args = super::Sub<What>;

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Run a disktier command on every selected node (one Job each) and compare the nodes.
    #[command(after_help = FLEET_RUN_HELP)]
    Run(RunArgs),
    /// Delete every Job and Pod a fleet run left behind (found by label).
    #[command(after_help = crate::cmd::EXIT_OK)]
    Clean(CleanArgs),
    /// Print the least-privilege RBAC objects fleet needs, as YAML for `kubectl apply -f -`.
    #[command(after_help = crate::cmd::EXIT_OK)]
    Rbac(RbacArgs),
}

const FLEET_RUN_HELP: &str = "Examples:
  disktier fleet run --control-plane -- check etcd /var/lib/etcd
  disktier fleet run --selector node.kubernetes.io/instance-type=m6id.xlarge -- assess /var/lib/containers
  disktier fleet run --nodes a,b --dry-run -- check etcd /var/lib/etcd

Exit status: the worst node's: 0 every node passed, 1 a verdict failed, 2 a node could not be measured (skipped, image, deadline, eviction, OOM) or the run failed.";

/// The cluster to talk to.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// The namespace the Jobs run in.
    #[arg(long, short = 'n', default_value = "disktier")]
    pub namespace: String,
}

impl ClusterArgs {
    fn client_options(&self) -> ClientOptions {
        ClientOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
        }
    }
}

value_enum! {
    pub enum PullPolicyArg => PullPolicy {
        #[value(name = "Always", alias = "always")]
        Always,
        #[value(name = "IfNotPresent", alias = "if-not-present")]
        IfNotPresent,
        #[value(name = "Never", alias = "never")]
        Never,
    }
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("selection").required(true).args(["nodes", "selector", "control_plane", "all_nodes"])))]
pub struct RunArgs {
    /// These nodes, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "NODE,...")]
    pub nodes: Vec<String>,
    /// The nodes matching a label selector (e.g. node.kubernetes.io/instance-type=m6id.xlarge).
    #[arg(long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// The control-plane nodes (role label control-plane or master).
    #[arg(long)]
    pub control_plane: bool,
    /// Every node.
    #[arg(long)]
    pub all_nodes: bool,
    /// Nodes measured at once. The default, 1, is the safe one: nodes whose disks share a
    /// backend (network volumes of one array, one hypervisor's disks) disturb each other's
    /// figures when measured together. Raise it for local (instance-store) disks.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub parallel: u16,
    /// The image that holds disktier (its entrypoint is the disktier binary).
    #[arg(long, default_value = crate::image::DEFAULT_IMAGE)]
    pub image: String,
    #[arg(long, value_enum, default_value_t = PullPolicyArg::IfNotPresent)]
    pub image_pull_policy: PullPolicyArg,
    /// The pods' service account (default: the namespace's default; the pods never use it).
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,
    /// Each node's Job is ended (activeDeadlineSeconds) after this long, in whole seconds.
    #[arg(long, value_parser = disktier_units::clap_parsers::duration, default_value = "10m", value_name = "DURATION")]
    pub timeout: Duration,
    /// Finished Jobs are deleted by the cluster after this long even if this client died
    /// (ttlSecondsAfterFinished; the client deletes them at once otherwise). At least 60s: a
    /// shorter one could delete a pod before its result is read from the log. At most
    /// 2147483647s, the field being an int32.
    #[arg(long, value_parser = disktier_units::clap_parsers::duration, default_value = "10m", value_name = "DURATION")]
    pub ttl: Duration,
    /// Tolerate every taint, not only the control plane's NoSchedule (without it, a node with a
    /// NoExecute taint is skipped: the taint manager would evict the pod).
    #[arg(long)]
    pub tolerate_all: bool,
    /// Create the namespace when it does not exist.
    #[arg(long)]
    pub create_namespace: bool,
    /// Print the manifests (multi-document YAML) instead of running; with --nodes nothing is
    /// contacted.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The fleet run id (default: a new one); for reproducible --dry-run output in tests.
    #[arg(long, hide = true, value_name = "ID")]
    pub run_id: Option<String>,
    /// The disktier command each node runs (after `--`); fleet adds --format json, --no-save
    /// and --quiet, and mounts exactly the absolute paths it names.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct CleanArgs {
    /// Only this fleet run's objects (default: every fleet run's).
    #[arg(long, value_name = "FLEET_RUN_ID")]
    pub run: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, clap::Args)]
pub struct RbacArgs {
    /// The namespace the Jobs will run in.
    #[arg(long, short = 'n', default_value = "disktier")]
    pub namespace: String,
    /// Bind to this ServiceAccount of the namespace (created too).
    #[arg(
        long,
        default_value = "disktier-fleet",
        conflicts_with = "user",
        value_name = "NAME"
    )]
    pub service_account: String,
    /// Bind to this user instead of a ServiceAccount.
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.what {
        What::Run(a) => fleet_run(ctx, a),
        What::Clean(a) => clean(ctx, a),
        What::Rbac(a) => rbac_yaml(ctx, a),
    }
}

fn job_options(a: &RunArgs, run_id: String) -> JobOptions {
    JobOptions {
        run_id,
        namespace: a.cluster.namespace.clone(),
        image: a.image.clone(),
        pull_policy: a.image_pull_policy.into(),
        service_account: a.service_account.clone(),
        timeout: a.timeout,
        ttl: a.ttl,
        tolerate_all: a.tolerate_all,
    }
}

fn fleet_run(ctx: &Ctx, a: RunArgs) -> anyhow::Result<Outcome> {
    let run_id = app::fleet::run_id(a.run_id.as_deref())?;
    let cfg = job_options(&a, run_id.clone()).into_config(&a.command)?;
    let sel = Selection::from_options(&a.nodes, a.selector.as_deref(), a.control_plane)?;
    if a.dry_run {
        return dry_run(ctx, &a, cfg, sel);
    }
    let spec = RunSpec {
        job: cfg,
        selection: sel,
        parallel: a.parallel as usize,
        create_namespace: a.create_namespace,
    };
    note(
        ctx,
        format_args!(
            "fleet run {run_id}: {} on {} in namespace {}, {} at once",
            a.command.join(" "),
            spec.selection.describe(),
            spec.job.namespace,
            spec.parallel
        ),
    );
    // Progress goes to stderr while Jobs exist: a closed stderr (`2>&1 | head`, a dropped ssh
    // session) must not end the process there, so a line that cannot be written is dropped
    // and the run goes on to its cleanup and saves what finished.
    let mut lines = ProgressLines::default();
    let mut on_progress = |p: Progress<'_>| note(ctx, lines.line(&p));
    let app::fleet::FleetRun {
        outcome,
        summary: sum,
    } = app::fleet::run(
        &ctx.store(),
        &spec,
        &a.cluster.client_options(),
        &mut on_progress,
    )?;
    let nodes = &outcome.nodes;
    // A textfile that cannot be written is reported after the nodes are printed.
    let exported = export_metrics(ctx, &spec, nodes, outcome.interrupted.is_some());
    // A reader that stopped reading (`| head`) gets no more output, but the exit status is
    // still the nodes' (the results are saved already).
    if ctx.prometheus() {
        // The exposition is the output.
    } else if ctx.json() {
        let doc = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "fleet_run_id": outcome.run_id,
            "command": a.command,
            "image": spec.job.image,
            "namespace": spec.job.namespace,
            "interrupted": outcome.interrupted,
            "left_behind": outcome.left_behind,
            "cleanup_error": outcome.cleanup_error,
            "nodes": nodes,
            "summary": sum,
        });
        crate::out::print_raw(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        crate::out::print(&format!(
            "{}{}fleet run {}: `disktier history --group {}`, `disktier report --group {}`\n",
            table(nodes),
            summary_text(&sum),
            outcome.run_id,
            outcome.run_id,
            outcome.run_id
        ))?;
    }
    if let Some(e) = &outcome.cleanup_error {
        bail!(
            "this run's Jobs and Pods could not be deleted ({e}); the nodes' results above are kept: once the API server answers, run `disktier fleet clean -n {} --run {}`",
            spec.job.namespace,
            outcome.run_id
        );
    }
    if !outcome.left_behind.is_empty() {
        bail!(left_behind_message(
            &spec.job.namespace,
            &outcome.run_id,
            &outcome.left_behind
        ));
    }
    if let Some(sig) = outcome.interrupted {
        bail!("interrupted by {sig}: every Job and Pod this run made was deleted; the nodes that finished are saved");
    }
    exported?;
    match sum.exit_code {
        0 => Ok(Outcome::Pass),
        1 => Ok(Outcome::Fail),
        // The table above has every reason in full; the error line counts them by kind.
        _ => bail!(summary::unmeasured_message(nodes)),
    }
}

fn dry_run(ctx: &Ctx, a: &RunArgs, cfg: JobConfig, sel: Selection) -> anyhow::Result<Outcome> {
    let nodes = dry_run::nodes(&a.cluster.client_options(), &sel, cfg.tolerate_all)?;
    for c in &nodes.skipped {
        note(
            ctx,
            format_args!("skipped {}: {}", c.node, c.skip.as_deref().unwrap_or("")),
        );
    }
    let m = dry_run::manifests(&cfg, &nodes.measured, a.create_namespace)?;
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "dry_run": true, "jobs": m.jobs}),
        )?;
    } else {
        // Manifests for `kubectl apply -f -`: the node command's arguments as given, as
        // `fleet rbac` and `render` print theirs (out::print_raw).
        crate::out::print_raw(&m.yaml)?;
    }
    Ok(Outcome::Pass)
}

fn clean(ctx: &Ctx, a: CleanArgs) -> anyhow::Result<Outcome> {
    let selector = manifest::clean_selector(&a.cluster.namespace, a.run.as_deref())?;
    let ns = a.cluster.namespace.clone();
    let report = app::fleet::clean(&a.cluster.client_options(), &ns, &selector)?;
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "namespace": ns, "deleted": report}),
        )?;
    } else if report.jobs.is_empty() && report.pods.is_empty() {
        outln!("nothing to clean in namespace {ns} ({selector})")?;
    } else {
        for j in &report.jobs {
            outln!("deleted job/{j}")?;
        }
        for p in &report.pods {
            outln!("deleted pod/{p}")?;
        }
    }
    if !report.left_behind.is_empty() {
        bail!(
            "still present after the wait: {} (a pod on a node whose kubelet is gone may need `kubectl delete --force --grace-period=0`)",
            report.left_behind.join(", ")
        );
    }
    Ok(Outcome::Pass)
}

fn rbac_yaml(ctx: &Ctx, a: RbacArgs) -> anyhow::Result<Outcome> {
    manifest::check_dns_label("--namespace", &a.namespace)?;
    let who = Who::from_options(a.user, a.service_account)?;
    let objs = rbac::objects(&a.namespace, &who);
    if ctx.json() {
        print_json(&serde_json::json!({"schema_version": SCHEMA_VERSION, "objects": objs}))?;
    } else {
        crate::out::print_raw(&manifest::to_yaml(&objs)?)?;
    }
    Ok(Outcome::Pass)
}
