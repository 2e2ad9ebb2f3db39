//! One module per subcommand: its options (clap) and its `run`, which turns them into a checked
//! configuration and calls the library crate that owns the concept.

pub mod assess;
pub mod bench;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod disks;
pub mod fleet;
pub mod history;
pub mod import;
pub mod interfere;
pub mod jobargs;
pub mod jobfile;
pub mod meta;
pub mod plan;
pub mod price;
pub mod progress;
pub mod render;
pub mod repeat;
pub mod report;
pub mod setup;
pub mod show;
pub mod simulate;
pub mod store;
pub mod trace;

use crate::cli::{Cli, Command, Format, Global};
use crate::exposition::{self, RunMetrics, TextfileDir};
use anyhow::bail;
use disktier_engine::RunDoc;

/// How a command ended when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Pass,
    /// Exit 1: the command ran, and a verdict failed.
    Fail,
}

/// What every command receives besides its own options.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub global: Global,
    /// `--textfile-dir`, checked to be a writable directory before the command ran.
    pub textfile: Option<TextfileDir>,
}

impl Ctx {
    pub fn json(&self) -> bool {
        self.global.format == Format::Json
    }
    /// `--format prometheus`: the exposition replaces the text on stdout.
    pub fn prometheus(&self) -> bool {
        self.global.format == Format::Prometheus
    }
    /// Prints the runs' exposition with `--format prometheus` and writes it to the textfile
    /// directory with `--textfile-dir`; `command` names the file and the `command` label.
    /// An interrupted measurement is printed but not written: the collector would serve a
    /// partial run as the node's latest figures.
    pub fn export_metrics(
        &self,
        command: &str,
        docs: &[&RunDoc],
        interrupted: bool,
    ) -> anyhow::Result<()> {
        if !self.prometheus() && self.textfile.is_none() {
            return Ok(());
        }
        let runs: Vec<RunMetrics> = docs
            .iter()
            .map(|d| RunMetrics::from_doc(command, &exposition::local_node(d), d))
            .collect();
        self.export_run_metrics(command, &runs, interrupted)
    }
    /// [`Ctx::export_metrics`] for runs whose metrics are already built (fleet: one per node,
    /// each with its node's name).
    pub fn export_run_metrics(
        &self,
        command: &str,
        runs: &[RunMetrics],
        interrupted: bool,
    ) -> anyhow::Result<()> {
        if !self.prometheus() && self.textfile.is_none() {
            return Ok(());
        }
        let text = exposition::encode(runs)?;
        if self.prometheus() {
            use std::io::Write;
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
        if let (Some(dir), false) = (&self.textfile, interrupted) {
            let path = dir.write(command, &text)?;
            self.note(format_args!("metrics written to {}", path.display()));
        }
        Ok(())
    }
    /// Where this command saves runs and reads them (`--db`, `--no-save`).
    pub fn store(&self) -> crate::app::save::StoreConfig {
        crate::app::save::StoreConfig {
            db: self.global.db.clone(),
            no_save: self.global.no_save,
            quiet: self.global.quiet,
        }
    }
    /// Progress lines and notes go to stderr only when this is true.
    pub fn chatty(&self) -> bool {
        !self.global.quiet
    }
    /// Prints a note to stderr unless `--quiet`.
    pub fn note(&self, msg: impl std::fmt::Display) {
        if self.chatty() {
            eprintln!("{msg}");
        }
    }
}

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    Ok(())
}

/// Whether the command's runs have a Prometheus exposition (`--format prometheus`,
/// `--textfile-dir`).
fn exports_metrics(c: &Command) -> bool {
    matches!(
        c,
        Command::Assess(_) | Command::Bench(_) | Command::Check(_)
    ) || matches!(c, Command::Fleet(f) if matches!(f.what, fleet::What::Run(_)))
}

pub fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    let metrics = exports_metrics(&cli.command);
    if !metrics && cli.global.format == Format::Prometheus {
        bail!(
            "--format prometheus is for check, bench, assess and fleet run: use --format json here"
        );
    }
    if !metrics && cli.global.textfile_dir.is_some() {
        bail!("--textfile-dir is for check, bench, assess and fleet run: drop it here");
    }
    // Checked before the command measures anything: a run of minutes must not end in an
    // unwritable directory.
    let textfile = cli
        .global
        .textfile_dir
        .as_deref()
        .map(TextfileDir::check)
        .transpose()?;
    let ctx = Ctx {
        global: cli.global,
        textfile,
    };
    match cli.command {
        Command::Assess(a) => assess::run(&ctx, a),
        Command::Bench(a) => bench::run(&ctx, a),
        Command::Check(a) => check::run(&ctx, a),
        Command::Import(a) => import::run(&ctx, a),
        Command::Catalog(a) => catalog::run(&ctx, a),
        Command::Price(a) => price::run(&ctx, a),
        Command::Plan(a) => plan::run(&ctx, a),
        Command::Disks(a) => disks::run(&ctx, a),
        Command::Setup(a) => setup::run(&ctx, a),
        Command::Render(a) => render::run(&ctx, a),
        Command::History(a) => history::run(&ctx, a),
        Command::Show(a) => show::run(&ctx, a),
        Command::Compare(a) => compare::run(&ctx, a),
        Command::Report(a) => report::run(&ctx, a),
        Command::Store(a) => store::run(&ctx, a),
        Command::Interfere(a) => interfere::run(&ctx, a),
        Command::Aggressor(a) => interfere::aggressor(&ctx, a),
        Command::Fleet(a) => fleet::run(&ctx, a),
        Command::Trace(a) => trace::run(&ctx, a),
        Command::Simulate(a) => simulate::run(&ctx, a),
        Command::Completions(a) => meta::completions(&ctx, a),
        Command::Man(a) => meta::man(&ctx, a),
    }
}
