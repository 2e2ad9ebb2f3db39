//! `disktier compare RUN_A RUN_B [...]`: the same metrics side by side, each run against the
//! first, with the sentence a user would write.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use disktier_store::compare::{benchmarks, Benchmark, Compared};
use disktier_store::Store;

#[derive(Debug, clap::Args)]
// Its own exit codes: it inherited disktier's "1 a verdict failed" (QA).
#[command(
    after_help = "Exit status: 0 compared (whichever run is better), 2 usage or runtime error (runs it cannot compare, or the store cannot be read)."
)]
pub struct Args {
    /// Two or more run ids (or unique prefixes); the others are compared with the first.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<String>,
    /// Compare runs of different profiles, or small-files runs of different shapes, anyway.
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    // Reading never creates a store, and reads one it cannot write.
    let mut store = Store::open_existing(ctx.store().db.as_deref())?;
    let runs = benchmarks(&mut store, &args.runs)?;
    let sides: Vec<Compared> = runs.iter().map(Benchmark::compared).collect();
    let c = disktier_store::compare::compare(&sides, args.force)?;
    if ctx.json() {
        print_json(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "runs": c.runs,
            "rows": c.rows,
            "sentences": c.sentences(),
            "notes": c.notes,
        }))?;
    } else {
        crate::out::print(&crate::text::printable(&c.to_text(), true))?;
    }
    Ok(Outcome::Pass)
}
