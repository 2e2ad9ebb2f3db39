//! `disktier report`: one self-contained HTML file drawn from stored runs (and optionally a
//! `disktier plan --format json` document for the cost section).

use super::{print_json, Ctx, Outcome};
use crate::app::report::{read_plan, write_report};
use crate::app::SCHEMA_VERSION;
use disktier_store::{Filter, Store};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run ids (or unique prefixes) to include; default: the newest runs (see --last).
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// The newest N runs (default 10 when no RUN is given).
    #[arg(long, value_name = "N", conflicts_with = "runs")]
    pub last: Option<usize>,
    /// Only the runs of one `disktier assess` (its assess id).
    #[arg(long, value_name = "ASSESS_ID", conflicts_with = "runs")]
    pub group: Option<String>,
    /// A plan (`disktier plan --format json > plan.json`): adds the cost of each option.
    #[arg(long, value_name = "FILE.json")]
    pub plan: Option<PathBuf>,
    /// Where to write the HTML.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "disktier-report.html"
    )]
    pub output: PathBuf,
}

/// The default number of runs when none are named.
const DEFAULT_LAST: usize = 10;

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let plan = match &args.plan {
        Some(p) => Some(read_plan(p)?),
        None => None,
    };
    // Reading never creates a store, and reads one it cannot write.
    let mut store = Store::open_existing(ctx.store().db.as_deref())?;
    let mut runs = Vec::new();
    if args.runs.is_empty() {
        let filter = Filter {
            group_id: args.group.clone(),
            last: if args.group.is_some() {
                args.last
            } else {
                Some(args.last.unwrap_or(DEFAULT_LAST))
            },
            ..Filter::default()
        };
        let mut list = store.list(&filter)?;
        list.reverse(); // oldest first reads like the order they were made
        for s in list {
            runs.push(store.get(&s.id)?);
        }
    } else {
        for id in &args.runs {
            runs.push(store.get(id)?);
        }
    }
    write_report(&runs, plan.as_ref(), &args.output)?;
    let ids: Vec<&str> = runs.iter().map(|r| r.summary.id.as_str()).collect();
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "report": args.output, "runs": ids}),
        )?;
    } else {
        println!("wrote {} ({} runs)", args.output.display(), runs.len());
    }
    Ok(Outcome::Pass)
}
