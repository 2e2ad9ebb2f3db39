//! One module per subcommand: its options (clap) and its `run`, which turns them into plain
//! values, calls the service in `app/` (or the library crate) that owns the concept, and prints.
//! Beside them: [`Ctx`] (what every command receives), `runargs`, `progress` (the progress line
//! and signals), `repeat` and `jobfile` (output shared by several commands), `manpage` (the
//! pages `man` writes), `value_enum`.

#[macro_use]
mod value_enum;

pub mod assess;
pub mod bench;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod disks;
mod fish_deep;
pub mod fleet;
pub mod history;
pub mod import;
pub mod interfere;
pub mod jobfile;
pub(crate) mod manpage;
pub mod meta;
pub mod plan;
pub mod price;
pub mod progress;
pub mod render;
pub mod repeat;
pub mod report;
pub mod runargs;
pub mod setup;
pub mod show;
pub mod simulate;
pub mod store;
pub mod trace;

use crate::exposition::{self, RunMetrics, TextfileDir};
use crate::global::{Format, Global};
use disktier_engine::RunDoc;

/// The exit codes of a command that gives no verdict (its after-help, which the man page shows
/// as EXIT STATUS): without it the page would inherit disktier's "1 a verdict failed".
pub const EXIT_OK: &str = "Exit status: 0 ok, 2 usage or runtime error.";

/// A command that is only a choice of subcommands (`check etcd`, `import fio`, `fleet run`).
#[derive(Debug, clap::Args)]
pub struct Sub<W: clap::Subcommand> {
    #[command(subcommand)]
    pub what: W,
}

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
    /// Whether runs' metrics are wanted: `--format prometheus` or `--textfile-dir`.
    pub fn exports_metrics(&self) -> bool {
        self.prometheus() || self.textfile.is_some()
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
        if !self.exports_metrics() {
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
        if !self.exports_metrics() {
            return Ok(());
        }
        let text = exposition::encode(runs)?;
        self.write_exposition(command, &text, interrupted)
    }
    /// Writes `text` (an exposition) to the textfile directory, unless `interrupted`, and
    /// prints it with `--format prometheus`. The file first: stdout that cannot be written
    /// must not cost the collector its figures; and each is attempted whatever became of the
    /// other (QA: a full textfile directory left stdout empty), the file's error first.
    pub fn write_exposition(
        &self,
        command: &str,
        text: &str,
        interrupted: bool,
    ) -> anyhow::Result<()> {
        let written = match (&self.textfile, interrupted) {
            (Some(dir), false) => dir.write(command, text).map(|w| {
                self.note(format_args!("metrics written to {}", w.path.display()));
                // Even with --quiet (cron): that a target's figures are gone must not go unsaid.
                if !w.replaced_paths.is_empty() {
                    crate::out::note(format_args!(
                        "warning: {} held the figures of {}, which this run replaced (the collector no longer has them): give each target its own file with --textfile-name NAME",
                        w.path.display(),
                        crate::text::some_of(&w.replaced_paths, 3)
                    ));
                }
            }),
            _ => Ok(()),
        };
        let printed = if self.prometheus() {
            crate::out::print_raw(text).map_err(Into::into)
        } else {
            Ok(())
        };
        written.and(printed)
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
    /// Prints `json` as pretty JSON with `--format json`, else the text `text` makes.
    pub fn print<T: serde::Serialize>(
        &self,
        json: &T,
        text: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        if self.json() {
            print_json(json)?;
        } else {
            crate::out::print(&text())?;
        }
        Ok(())
    }
    /// Prints a note to stderr unless `--quiet` (a stderr that cannot be written is ignored).
    pub fn note(&self, msg: impl std::fmt::Display) {
        if self.chatty() {
            crate::out::note(msg);
        }
    }
}

/// Prints a value as pretty JSON on stdout ([`crate::out`]: a reader that went away is no
/// error, a full disk is).
pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(v)?;
    text.push('\n');
    crate::out::print_raw(&text)?;
    Ok(())
}
