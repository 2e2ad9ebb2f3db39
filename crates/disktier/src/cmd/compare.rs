//! `disktier compare RUN_A RUN_B [...]`: the same metrics side by side, each run against the
//! first, with the sentence a user would write.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use disktier_engine::RunDoc;
use disktier_store::compare::Compared;
use disktier_store::doc::ResultDoc;
use disktier_store::model::BENCHMARK_KINDS;
use disktier_store::{Store, StoredRun};

#[derive(Debug, clap::Args)]
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
    let mut runs = Vec::new();
    for id in &args.runs {
        let run = store.get(id)?;
        let (id, kind) = (run.summary.id.clone(), run.summary.kind.clone());
        runs.push((id, kind, benchmark(run)?));
    }
    let sides: Vec<Compared> = runs
        .iter()
        .map(|(id, kind, doc)| Compared { id, kind, doc })
        .collect();
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

/// The benchmark result a stored run holds, or why it holds none: a run of another kind (an
/// interference comparison, a fleet setup), or a document that does not read as one.
fn benchmark(run: StoredRun) -> anyhow::Result<RunDoc> {
    let (id, kind) = (&run.summary.id, run.summary.kind.as_str());
    if !BENCHMARK_KINDS.contains(&kind) {
        anyhow::bail!(
            "run {id} is {} {kind} run, and compare takes benchmark runs ({}): show it with `disktier show {id}`{}",
            article(kind),
            BENCHMARK_KINDS.join(", "),
            if kind == "interfere" {
                format!(" or draw it with `disktier report {id}`")
            } else {
                String::new()
            }
        );
    }
    match ResultDoc::read(&run.doc) {
        Ok(ResultDoc::Run(doc)) => Ok(*doc),
        // Its jobs ran side by side or one set after another, each its own figures: no one of
        // them is "the run" to set against another.
        Ok(ResultDoc::JobFile(doc)) => {
            let mut names: Vec<&str> = Vec::new();
            for j in &doc.jobs {
                // fio's numjobs clones share their job's name: each named once.
                if !names.contains(&j.name.as_str()) {
                    names.push(&j.name);
                }
            }
            anyhow::bail!(
                "run {id} is the run of the fio job file {} (job{} {}), and compare takes single-job runs (bench TARGET, check, assess, import fio without --jobs): see its jobs side by side with `disktier show {id}`",
                doc.jobfile,
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            )
        }
        Err(e) => Err(anyhow::anyhow!(
            "run {id} ({} {kind} run) cannot be compared: its stored document is unreadable as a benchmark result ({e}); it was written by another version of disktier or damaged, see it with `disktier show {id} --format json`",
            article(kind)
        )),
    }
}

/// "an" before a vowel sound, else "a".
fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}
