//! One module per subcommand: its options (clap) and its `run`, which turns them into a checked
//! configuration and calls the library crate that owns the concept.

#![allow(dead_code)] // helpers are used as subcommands land

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
pub mod meta;
pub mod plan;
pub mod price;
pub mod progress;
pub mod render;
pub mod repeat;
pub mod report;
pub mod save;
pub mod setup;
pub mod show;
pub mod simulate;
pub mod store;
pub mod trace;

use crate::cli::{Cli, Command, Format, Global};

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
}

impl Ctx {
    pub fn json(&self) -> bool {
        self.global.format == Format::Json
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

pub fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    let ctx = Ctx { global: cli.global };
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
