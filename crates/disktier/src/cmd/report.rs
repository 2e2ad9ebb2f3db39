//! `disktier report`: one self-contained HTML file drawn from stored runs (and optionally a
//! `disktier plan --format json` document for the cost section).

use super::{print_json, Ctx, Outcome};
use crate::app::report::{read_plan, render_page, write_report_skipping};
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
    #[arg(long, value_name = "N", conflicts_with = "runs", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,
    /// Only the runs of one `disktier assess` (its assess id).
    #[arg(long, value_name = "ASSESS_ID", conflicts_with = "runs")]
    pub group: Option<String>,
    /// A plan (`disktier plan --format json > plan.json`): adds the cost of each option.
    #[arg(long, value_name = "FILE.json")]
    pub plan: Option<PathBuf>,
    /// Where to write the HTML (`-`: standard output).
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
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout && ctx.json() {
        anyhow::bail!("-o - writes the HTML to standard output, where --format json would print too: pass a file to -o, or leave out --format json");
    }
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
        if list.is_empty() {
            if let Some(g) = &args.group {
                anyhow::bail!(
                    "no run is in group {g}: `disktier history` lists the runs with their groups"
                );
            }
        }
        list.reverse(); // oldest first reads like the order they were made
        for s in list {
            take(store.get(&s.id), &mut runs, &mut skipped)?;
        }
    } else {
        for id in &args.runs {
            let before = runs.len();
            take(store.get(id), &mut runs, &mut skipped)?;
            // A run named twice (or by two prefixes) is drawn once.
            if runs.len() > before
                && runs[..before]
                    .iter()
                    .any(|r| r.summary.id == runs[before].summary.id)
            {
                let dup = runs.pop().expect("pushed above");
                ctx.note(format!(
                    "run {} is named more than once: it is drawn once",
                    dup.summary.id
                ));
            }
        }
    }
    if runs.is_empty() && !skipped.is_empty() {
        anyhow::bail!(
            "nothing to report: the {} selected run{} cannot be read (listed above); pick others with RUN or --last",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
    }
    if to_stdout {
        // `-o -`: standard output, as with most tools (QA: it made a file named "-").
        crate::out::print(&render_page(&runs, &skipped, plan.as_ref())?)?;
    } else {
        write_report_skipping(&runs, &skipped, plan.as_ref(), &args.output)?;
    }
    let ids: Vec<&str> = runs.iter().map(|r| r.summary.id.as_str()).collect();
    let left: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "report": args.output, "runs": ids, "skipped": left}),
        )?;
    } else if to_stdout {
        ctx.note(format!(
            "wrote the report of {} to standard output",
            count_runs(runs.len())
        ));
    } else {
        outln!(
            "wrote {} ({}{})",
            // A newline in the name must not split the line (hostile-input check).
            crate::text::printable(&args.output.display().to_string(), false),
            count_runs(runs.len()),
            if left.is_empty() {
                String::new()
            } else {
                format!("; {} left out: {}", left.len(), left.join(", "))
            }
        )?;
    }
    Ok(Outcome::Pass)
}

/// "1 run", "3 runs".
fn count_runs(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
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
