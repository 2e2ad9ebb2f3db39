//! The command-line surface: global options and one subcommand per job. Each subcommand's own
//! options live beside its code in `cmd/<name>.rs`.

use crate::cmd;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "disktier",
    version,
    about = "Which disk should this data live on, is it fast enough, what does it cost, and can it be set up safely?",
    long_about = None,
    after_help = "Exit status: 0 ok, 1 a verdict failed (e.g. check etcd above threshold), 2 usage or runtime error."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// Output format (prometheus: text exposition 0.0.4, for check, bench and assess).
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the run's metrics to DIR/disktier_<command>.prom, atomically, for
    /// node_exporter's textfile collector (check, bench, assess).
    #[arg(long, global = true, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// No progress line and no notes on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Result store: a SQLite file path, a postgres://... URL or a libpq key=value string (default: $XDG_DATA_HOME/disktier/results.db).
    // hide_env_values: --help would otherwise print DISKTIER_DB, password included.
    #[arg(long, global = true, env = "DISKTIER_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Do not save this run in the store.
    #[arg(long, global = true)]
    pub no_save: bool,
    /// A catalog file that overrides or extends the embedded price catalog.
    #[arg(long, global = true, env = "DISKTIER_CATALOG")]
    pub catalog: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// Prometheus text exposition format 0.0.4 (check, bench, assess).
    Prometheus,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Assess the disks behind paths: the quick suite, verdicts, store and HTML report (the main job).
    Assess(cmd::assess::Args),
    /// Run one benchmark job (a built-in profile or fio-style options) on a file, directory or device.
    Bench(cmd::bench::Args),
    /// Give a verdict: can this disk host etcd?
    Check(cmd::check::Args),
    /// Import a result produced by another tool (fio's JSON).
    Import(cmd::import::Args),
    /// Show, check or import the price/performance catalog.
    Catalog(cmd::catalog::Args),
    /// Price one volume type or instance for a month.
    Price(cmd::price::Args),
    /// List the storage options that meet requirements, cheapest first.
    Plan(cmd::plan::Args),
    /// List the node's block devices, classified, with eligibility for setup.
    Disks(cmd::disks::Args),
    /// Make a filesystem on the node's local disks and mount it, safely and idempotently.
    Setup(cmd::setup::Args),
    /// Render the same setup as manifests for a platform (openshift, gke, eks, systemd, ...).
    Render(cmd::render::Args),
    /// List stored runs.
    History(cmd::history::Args),
    /// Show one stored run.
    Show(cmd::show::Args),
    /// Compare stored runs side by side.
    Compare(cmd::compare::Args),
    /// Write a self-contained HTML report of stored runs.
    Report(cmd::report::Args),
    /// Runs waiting in the spool (the store was unreachable): list them, or save them now.
    Store(cmd::store::Args),
    /// Measure what a bulk writer does to etcd's fsyncs, and which mitigation helps.
    Interfere(cmd::interfere::Args),
    /// The bulk writer `interfere` runs next to the probe, as its own process (internal).
    #[command(hide = true, name = "__aggressor")]
    Aggressor(cmd::interfere::AggressorArgs),
    /// Measure every node of a Kubernetes cluster (one Job per node) and compare them.
    Fleet(cmd::fleet::Args),
    /// Record, import and describe block I/O traces.
    Trace(cmd::trace::Args),
    /// Predict cache hit ratios from a trace for cache sizes and policies.
    Simulate(cmd::simulate::Args),
    /// Print shell completions.
    Completions(cmd::meta::CompletionsArgs),
    /// Write the man pages.
    Man(cmd::meta::ManArgs),
}

pub fn parse() -> Cli {
    Cli::parse()
}

/// The clap command tree, for completions and man pages.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_consistent() {
        super::command().debug_assert();
    }
}
