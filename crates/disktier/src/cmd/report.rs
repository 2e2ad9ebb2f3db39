//! `disktier report`: one self-contained HTML file drawn from stored runs (and optionally a
//! `disktier plan --format json` document for the cost section).

use super::{print_json, Ctx, Outcome};
use crate::app::report::{read_plan, write_report_skipping};
use crate::app::SCHEMA_VERSION;
use disktier_store::report::Skipped;
use disktier_store::{Filter, Store, StoreError, StoredRun};
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
    let mut skipped = Vec::new();
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
            take(store.get(&s.id), &mut runs, &mut skipped)?;
        }
    } else {
        for id in &args.runs {
            take(store.get(id), &mut runs, &mut skipped)?;
        }
    }
    if runs.is_empty() && !skipped.is_empty() {
        anyhow::bail!(
            "nothing to report: the {} selected run{} cannot be read (listed above); pick others with RUN or --last",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
    }
    write_report_skipping(&runs, &skipped, plan.as_ref(), &args.output)?;
    let ids: Vec<&str> = runs.iter().map(|r| r.summary.id.as_str()).collect();
    let left: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "report": args.output, "runs": ids, "skipped": left}),
        )?;
    } else {
        outln!(
            "wrote {} ({} runs{})",
            args.output.display(),
            runs.len(),
            if left.is_empty() {
                String::new()
            } else {
                format!("; {} left out: {}", left.len(), left.join(", "))
            }
        )?;
    }
    Ok(Outcome::Pass)
}

/// Keeps a run the store handed over; one whose row does not read (its stored JSON does not
/// parse) does not stop the report: it is named on stderr (also with `--quiet`: a run missing
/// from a report is something to know) and in the report. Any other error stops it.
fn take(
    got: Result<StoredRun, StoreError>,
    runs: &mut Vec<StoredRun>,
    skipped: &mut Vec<Skipped>,
) -> anyhow::Result<()> {
    match got {
        Ok(run) => runs.push(run),
        Err(e) => {
            let id = match &e {
                StoreError::CorruptRow { id, .. } | StoreError::BadRow { id, .. } => id.clone(),
                _ => return Err(e.into()),
            };
            errln!(
                "warning: {}; it is left out of the report",
                crate::text::printable(&e.to_string(), false)
            );
            skipped.push(Skipped {
                id,
                why: e.to_string(),
            });
        }
    }
    Ok(())
}
