//! `disktier store`: the spool of runs that could not be saved when they were made
//! (`store spool` lists them, `store flush` saves them now).

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use disktier_store::spool::Spool;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Save the spooled runs into the store (--db) and remove them from the spool.
    #[command(
        after_help = "Exit status: 0 every run meant for this store saved (or already there, or nothing to flush), 2 a spooled run could not be saved (listed; it stays in the spool), or usage or runtime error."
    )]
    Flush {
        /// Also runs that were meant for another store (by default only those meant for this one).
        #[arg(long)]
        all: bool,
    },
    /// List the spooled runs: id, kind, the store they were meant for and why they are here.
    #[command(
        after_help = "Exit status: 0 listed (also when the spool is empty), 2 usage or runtime error."
    )]
    Spool,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let spool = Spool::at(Spool::default_dir()?);
    if let Some(why) = spool.unusable() {
        anyhow::bail!("{why}");
    }
    match args.action {
        Action::Spool => {
            let rows: Vec<serde_json::Value> = spool
                .list()
                .into_iter()
                .map(|l| match l.run {
                    Ok(s) => serde_json::json!({"file": crate::text::path_json(&l.file), "id": s.id, "kind": s.kind,
                        "created_at": s.created_at, "intended_store": s.intended_store,
                        "reason": s.reason}),
                    Err(why) => serde_json::json!({"file": crate::text::path_json(&l.file), "error": why}),
                })
                .collect();
            if ctx.json() {
                print_json(
                    &serde_json::json!({"schema_version": SCHEMA_VERSION, "spool": crate::text::path_json(spool.dir()), "runs": rows}),
                )?;
            } else if rows.is_empty() {
                outln!("the spool {} is empty", spool.dir().display())?;
            } else {
                // A spool file is outside input, and a reason can quote a PostgreSQL server's
                // message: control characters (an escape sequence) are shown escaped.
                let field = |r: &serde_json::Value, k: &str| {
                    crate::text::printable(r[k].as_str().unwrap_or(""), false)
                };
                for r in &rows {
                    match r.get("error") {
                        Some(e) => outln!(
                            "{}  NOT A SPOOLED RUN: {}",
                            r["file"],
                            crate::text::printable(&e.to_string(), false)
                        )?,
                        None => outln!(
                            "{}  {}  {}  for {}  ({})",
                            field(r, "id"),
                            field(r, "created_at"),
                            field(r, "kind"),
                            field(r, "intended_store"),
                            field(r, "reason")
                        )?,
                    }
                }
            }
            Ok(Outcome::Pass)
        }
        Action::Flush { all } => {
            // Nothing waits: say so without opening the store (QA: an empty spool connected,
            // and failed with exit 2 when the store was down, which is when one looks).
            if spool.files().is_empty() {
                let empty: [&str; 0] = [];
                if ctx.json() {
                    print_json(&serde_json::json!({"schema_version": SCHEMA_VERSION,
                        "store": ctx.store().shown_location(), "saved": empty,
                        "already_stored": empty, "same_import": empty, "other_store": empty,
                        "failed": empty}))?;
                } else {
                    outln!(
                        "nothing to flush: the spool {} is empty",
                        spool.dir().display()
                    )?;
                }
                return Ok(Outcome::Pass);
            }
            let mut store = ctx.store().open()?;
            let f = spool.flush(&mut store, all);
            if ctx.json() {
                print_json(
                    &serde_json::json!({"schema_version": SCHEMA_VERSION, "store": store.location(),
                    "saved": f.saved, "already_stored": f.already_stored,
                    "same_import": f.same_import, "other_store": f.other_store,
                    "failed": f.failed}),
                )?;
            } else {
                // One line per run: a newline in the store's path or a spool file's name
                // split it (QA: a file named "a\nb.json" printed "FAILED: .../a" and "b.json:
                // not a spooled run ..." on two lines), as `store spool` never did.
                let line = |s: &str| crate::text::printable(s, false);
                let location = line(&store.location());
                for id in &f.saved {
                    outln!("saved: run {id} in {location}")?;
                }
                for id in &f.already_stored {
                    outln!(
                        "already stored: run {id} is in {location} (not saved twice); its spool file is removed"
                    )?;
                }
                for same in &f.same_import {
                    outln!(
                        "not saved again: spooled run {} is an import already stored as run {} in {location} (the same document: the same file imported with the same options); its spool file is removed",
                        same.spooled,
                        same.stored_as
                    )?;
                }
                if !f.other_store.is_empty() {
                    outln!(
                        "left in the spool: {} run(s) meant for another store (pass --all to save them here)",
                        f.other_store.len()
                    )?;
                }
                for why in &f.failed {
                    outln!("FAILED: {}", line(why))?;
                }
                if f.saved.is_empty()
                    && f.already_stored.is_empty()
                    && f.same_import.is_empty()
                    && f.failed.is_empty()
                    && f.other_store.is_empty()
                {
                    outln!(
                        "nothing to flush: the spool {} is empty",
                        spool.dir().display()
                    )?;
                }
            }
            if !f.failed.is_empty() {
                anyhow::bail!(
                    "{} spooled run(s) could not be saved (listed above); they stay in {}",
                    f.failed.len(),
                    spool.dir().display()
                );
            }
            Ok(Outcome::Pass)
        }
    }
}
