//! `disktier report`: one self-contained HTML file drawn from stored runs (and optionally a
//! `disktier plan --format json` document for the cost section).

use super::{print_json, Ctx, Outcome};
use crate::app::report::{read_plan, render_page, select, write_report_skipping, Selection};
use crate::app::SCHEMA_VERSION;
use disktier_store::Store;
use std::num::NonZeroUsize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
// Its own exit codes: it inherited disktier's "1 a verdict failed" (QA).
#[command(
    after_help = "Exit status: 0 written, 2 usage or runtime error (no run to report, -o refused, or the store cannot be read)."
)]
pub struct Args {
    /// Run ids (or unique prefixes) to include; default: the newest runs (see --last).
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// The newest N runs (default 10 when no RUN is given).
    #[arg(long, value_name = "N", conflicts_with = "runs", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,
    /// Only the runs of one `disktier assess` (its assess id).
    // Not empty: `--group ''` said "no run is in group : ..." (QA).
    #[arg(long, value_name = "ASSESS_ID", conflicts_with = "runs",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
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

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout && ctx.json() {
        anyhow::bail!("-o - writes the HTML to standard output, where --format json would print too: pass a file to -o, or leave out --format json");
    }
    let plan = match &args.plan {
        Some(p) => Some(read_plan(p)?),
        None => None,
    };
    let selection = if args.runs.is_empty() {
        Selection::Newest {
            // clap refuses 0.
            last: args.last.and_then(NonZeroUsize::new),
            group: args.group,
        }
    } else {
        Selection::Runs(args.runs)
    };
    if !to_stdout {
        // A file that cannot be written is refused before a large report is drawn.
        crate::app::report::check_destination(&args.output, "-o")?;
    }
    // Reading never creates a store, and reads one it cannot write.
    let mut store = Store::open_existing(ctx.store().db.as_deref())?;
    // A run that cannot be read is named on stderr also with `--quiet`.
    let (runs, skipped) = select(&mut store, &selection, &|m| errln!("{m}"), &|m| ctx.note(m))?;
    let ids: Vec<String> = runs.iter().map(|r| r.summary().id.clone()).collect();
    if to_stdout {
        // `-o -`: standard output, as with most tools (QA: it made a file named "-").
        crate::out::print_raw(&render_page(runs, &skipped, plan.as_ref())?)?;
    } else {
        write_report_skipping(runs, &skipped, plan.as_ref(), &args.output, "-o")?;
    }
    let left: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
    if ctx.json() {
        print_json(
            &serde_json::json!({"schema_version": SCHEMA_VERSION, "report": crate::text::path_json(&args.output), "runs": ids, "skipped": left}),
        )?;
    } else if to_stdout {
        ctx.note(format!(
            "wrote the report of {} to standard output",
            count_runs(ids.len())
        ));
    } else {
        outln!(
            "wrote {} ({}{})",
            // A newline in the name must not split the line (hostile-input check).
            crate::text::printable(&args.output.display().to_string(), false),
            count_runs(ids.len()),
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
