//! `disktier compare RUN_A RUN_B [...]`: the same metrics side by side, each run against the
//! first, with the sentence a user would write.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use anyhow::Context;
use disktier_engine::RunDoc;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Two or more run ids (or unique prefixes); the others are compared with the first.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<String>,
    /// Compare runs of different profiles anyway.
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let mut store = ctx.store().open()?;
    let mut runs = Vec::new();
    for id in &args.runs {
        let run = store.get(id)?;
        let doc: RunDoc = serde_json::from_value(run.doc)
            .with_context(|| format!("run {} is a {} run, not a benchmark result: compare takes bench, check, assess or import runs", run.summary.id, run.summary.kind))?;
        runs.push((run.summary.id, doc));
    }
    let c = disktier_store::compare::compare(&runs, args.force)?;
    if ctx.json() {
        print_json(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "runs": c.runs,
            "rows": c.rows,
            "sentences": c.sentences(),
            "notes": c.notes,
        }))?;
    } else {
        print!("{}", crate::text::printable(&c.to_text(), true));
    }
    Ok(Outcome::Pass)
}
