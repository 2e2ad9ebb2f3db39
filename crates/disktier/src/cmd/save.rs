//! Saving a run to the result store (owned by the store area). Every command that measures
//! calls [`save_run`] unless `--no-save` was given; the reading commands open the same store
//! with [`open_store`].

use super::Ctx;
use anyhow::Context;
use disktier_store::{NewRun, Store};

/// Opens the store `--db` / `DISKTIER_DB` names, or the default SQLite file.
pub fn open_store(ctx: &Ctx) -> anyhow::Result<Store> {
    Ok(Store::open(ctx.global.db.as_deref())?)
}

/// Saves one result document; returns the new run id, or `None` with `--no-save`.
/// `kind` is the command ("bench", "check", "assess", "interfere", "import").
pub fn save_run(ctx: &Ctx, kind: &str, doc: &serde_json::Value) -> anyhow::Result<Option<String>> {
    save_run_in_group(ctx, kind, None, doc)
}

/// Like [`save_run`], linking the run to others made together (one `disktier assess`).
pub fn save_run_in_group(
    ctx: &Ctx,
    kind: &str,
    group_id: Option<&str>,
    doc: &serde_json::Value,
) -> anyhow::Result<Option<String>> {
    if ctx.global.no_save {
        return Ok(None);
    }
    let mut store = open_store(ctx)?;
    let id = store
        .save(&NewRun {
            kind,
            group_id,
            doc,
        })
        .with_context(|| format!("cannot save the {kind} run in {}", store.location()))?;
    // The caller prints the id (bench/check after their table, assess in its summary).
    Ok(Some(id))
}
