//! The self-contained HTML report: verdict badges per target, latency-percentile curves per
//! profile, IOPS and throughput bars across targets, per-second series, comparison ratios, the
//! cost of each planned option beside what was measured, and interference scenarios. One file,
//! no scripts, no network: styles inline, charts inline SVG from plotters, and a CSP that forbids
//! loading anything.

mod bench;
pub mod charts;
mod docs;
mod error;
pub mod fleet;
mod fragments;
pub mod html;
mod interference;
mod jobfiles;
mod measured;
mod outline;
mod planned;

pub use error::ReportError;
pub use outline::outline;

use crate::StoredRun;
use bench::judge_etcd;
use bench::Bench;
use disktier_fleet::result::NodeDoc;
use docs::StoredDoc;
use html::esc;
use interference::interfere_section;
use jobfiles::job_file_section;
use measured::comparisons;
use measured::latency;
use measured::throughput;
use measured::timeseries;
use measured::verdicts;
use planned::plan_section;
use std::fmt::Write as _;

/// What a report is made from.
pub struct ReportInput<'a> {
    pub runs: &'a [StoredRun],
    /// Runs selected but not read from the store (a damaged row): named, not drawn.
    pub skipped: &'a [Skipped],
    /// `disktier plan --format json` output, if given.
    pub plan: Option<&'a disktier_catalog::plan::StoragePlan>,
    /// Shown in the header (the caller passes the time; tests pass a fixed one).
    pub generated_at: &'a str,
}

impl<'a> ReportInput<'a> {
    /// `runs` alone: nothing skipped, no plan.
    pub fn new(runs: &'a [StoredRun], generated_at: &'a str) -> ReportInput<'a> {
        ReportInput {
            runs,
            skipped: &[],
            plan: None,
            generated_at,
        }
    }
}

/// A stored run read for the report: its listing columns, and its document read once into its
/// type ([`StoredDoc`]). The stored JSON is not kept (only a `fleet` object, which the fleet
/// section reads): a document's JSON tree takes two to four times the memory of its typed form, and
/// `report --last 10000` held every one of them at once (QA: 358 MB for 10,000 runs of 2 KB
/// documents, of which 60 % were the JSON trees). `disktier report` reads the runs one after
/// another into this form, so no more than one JSON document is held at a time.
pub struct ReadRun {
    run: StoredRun,
    doc: StoredDoc,
}

impl std::fmt::Debug for ReadRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadRun")
            .field("summary", &self.run.summary)
            .finish_non_exhaustive()
    }
}

impl ReadRun {
    /// Reads `run`'s document and drops its JSON (and the host and device columns, which the
    /// report does not show).
    pub fn read(mut run: StoredRun) -> ReadRun {
        let doc = StoredDoc::read(&run);
        // The fleet section reads the fleet tag and, for a node that gave no document, its
        // outcome (`unmeasured`): both are kept, the rest of the JSON is dropped.
        let mut kept = serde_json::Map::new();
        if let Some(o) = run.doc.as_object_mut() {
            for key in ["fleet", "unmeasured"] {
                if let Some(v) = o.remove(key) {
                    kept.insert(key.to_string(), v);
                }
            }
        }
        run.doc = if kept.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::Value::Object(kept)
        };
        run.host = serde_json::Value::Null;
        run.device = serde_json::Value::Null;
        ReadRun { run, doc }
    }

    /// The run's listing columns (id, time, kind, profile, target, ...).
    pub fn summary(&self) -> &crate::RunSummary {
        &self.run.summary
    }
}

/// A selected run the store could not hand over (its stored JSON does not parse): the report
/// names it with the reason and goes on without it.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub id: String,
    pub why: String,
}

/// Renders the report.
pub fn render(input: &ReportInput<'_>) -> Result<String, ReportError> {
    let runs = input.runs.iter().cloned().map(ReadRun::read).collect();
    render_read(runs, input.skipped, input.plan, input.generated_at)
}

/// Renders the report of runs already read ([`ReadRun::read`]), as [`render`] does.
pub fn render_read(
    read: Vec<ReadRun>,
    skipped: &[Skipped],
    plan: Option<&disktier_catalog::plan::StoragePlan>,
    generated_at: &str,
) -> Result<String, ReportError> {
    if read.is_empty() && skipped.is_empty() {
        return Err(ReportError::Empty);
    }
    let (runs, docs): (Vec<StoredRun>, Vec<StoredDoc>) =
        read.into_iter().map(|r| (r.run, r.doc)).unzip();
    let mut targets: Vec<String> = Vec::new();
    let mut benches = Vec::new();
    let mut interfere = Vec::new();
    let mut job_files = Vec::new();
    let mut unreadable = Vec::new();
    // What is listed but not drawn, one line each (escaped HTML).
    let mut not_drawn = Vec::new();
    // Each document is read once: its key figures are kept for the fleet section.
    let mut figures = Vec::with_capacity(runs.len());
    for (run, stored) in runs.iter().zip(docs) {
        figures.push(stored.figures());
        match stored {
            // `read` gives every interfere document to the interfere arm.
            StoredDoc::Node(NodeDoc::Run(doc)) => {
                let mut doc = *doc;
                judge_etcd(&mut doc);
                // Placed and coloured once every run is read (`bench::place`).
                benches.push(Bench {
                    run,
                    doc,
                    place: String::new(),
                    color: 0,
                });
            }
            StoredDoc::Interfere(doc) => interfere.push((run, doc)),
            StoredDoc::Unreadable(why) => {
                not_drawn.push(format!(
                    "run <span class=\"mono\">{}</span>: unreadable document ({}); see it with <code>disktier show {} --format json</code>",
                    esc(&run.summary.id),
                    esc(&why),
                    esc(&run.summary.id)
                ));
                unreadable.push((run.summary.id.as_str(), why));
            }
            StoredDoc::JobFile(doc) => job_files.push((run, doc)),
            // Drawn in the fleet section only, never with the runs' figures.
            StoredDoc::Node(_) | StoredDoc::Unmeasured => {}
        }
    }
    let places: Vec<String> = {
        let docs: Vec<&disktier_engine::RunDoc> = benches.iter().map(|b| &b.doc).collect();
        docs.iter().map(|d| bench::place(d, &docs)).collect()
    };
    for (b, place) in benches.iter_mut().zip(places) {
        b.place = place;
        b.color = match targets.iter().position(|t| *t == b.place) {
            Some(i) => i,
            None => {
                targets.push(b.place.clone());
                targets.len() - 1
            }
        };
    }
    for sk in skipped {
        not_drawn.push(format!(
            "run <span class=\"mono\">{}</span>: left out, its stored row does not read ({})",
            esc(&sk.id),
            esc(&sk.why)
        ));
    }
    let mut body = String::new();
    let mut nav = Vec::new();
    let mut add = |id: &str, title: &str, content: String| {
        nav.push(format!("<a href=\"#{id}\">{}</a>", esc(title)));
        let _ = write!(
            body,
            "<section id=\"{id}\">\n<h2>{}</h2>\n{content}</section>\n",
            esc(title)
        );
    };
    if !not_drawn.is_empty() {
        add(
            "not-drawn",
            "Runs not drawn",
            format!(
                "<ul class=\"notes\">\n{}</ul>\n",
                not_drawn
                    .iter()
                    .map(|n| format!("<li class=\"note\">{n}</li>\n"))
                    .collect::<String>()
            ),
        );
    }
    if !benches.is_empty() {
        add(
            "verdicts",
            "Verdicts by target",
            verdicts(&benches, &targets),
        );
        // Every run counts in the cards and is listed under Runs; the charts and tables draw
        // each profile's newest (QA: 10,000 runs made a 196 MB page of 10,000 latency curves
        // and series charts, in 838 MB of memory).
        let (drawn, left) = bench::newest_of_each_profile(&benches, DRAWN_PER_PROFILE);
        let note = not_all_drawn(left);
        add(
            "latency",
            "Latency percentiles",
            format!("{note}{}", latency(&drawn)?),
        );
        add(
            "throughput",
            "IOPS and throughput",
            format!("{note}{}", throughput(&drawn)?),
        );
        let cmp = comparisons(&drawn);
        if !cmp.is_empty() {
            add("comparisons", "Comparisons", format!("{note}{cmp}"));
        }
        add(
            "timeseries",
            "Second by second",
            format!("{note}{}", timeseries(&drawn)?),
        );
    }
    if !job_files.is_empty() {
        let docs: Vec<_> = job_files.iter().map(|(r, d)| (*r, &**d)).collect();
        let (docs, note) = newest_drawn(docs, "fio job file runs");
        add(
            "jobfiles",
            "fio job files",
            format!("{note}{}", job_file_section(&docs)),
        );
    }
    if let Some(f) = fleet::section(&runs, &figures)? {
        add("fleet", "Fleet: one row per node", f);
    }
    if let Some(plan) = plan {
        add("plan", "Cost of each option", plan_section(plan, &benches)?);
    }
    if !interfere.is_empty() {
        let docs: Vec<_> = interfere.iter().map(|(r, d)| (*r, &**d)).collect();
        let (docs, note) = newest_drawn(docs, "interference runs");
        add(
            "interfere",
            "Interference",
            format!("{note}{}", interfere_section(&docs)?),
        );
    }
    add(
        "runs",
        "Runs in this report",
        runs_table(&runs, &unreadable, skipped),
    );

    let hosts: Vec<String> = {
        // An import knows no host: its hostname is empty.
        let mut h: Vec<String> = runs
            .iter()
            .filter_map(|r| r.summary.hostname.clone())
            .filter(|h| !h.is_empty())
            .collect();
        h.sort();
        h.dedup();
        h
    };
    let n_runs = runs.len() + skipped.len();
    // The header counts the job files' and interference runs' targets too (QA: "3 runs on 0
    // targets").
    let mut all_targets = targets.clone();
    let more = job_files
        .iter()
        .filter_map(|(_, d)| d.target.as_ref().map(|t| &t.path))
        .chain(interfere.iter().map(|(_, d)| &d.target));
    for t in more {
        if !all_targets.contains(t) {
            all_targets.push(t.clone());
        }
    }
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>disktier report</title>\n<style>{style}</style>\n</head>\n<body>\n\
         <header>\n<h1>disktier report</h1>\n<p>{n} run{s} on {t} target{ts}{hosts}{left} · generated {when}</p>\n</header>\n\
         <nav>{nav}</nav>\n<main>\n{body}</main>\n\
         <footer>Made by disktier. This file is self-contained: it loads nothing from the network.</footer>\n\
         </body>\n</html>\n",
        csp = html::CSP,
        style = html::STYLE,
        n = n_runs,
        s = if n_runs == 1 { "" } else { "s" },
        left = if not_drawn.is_empty() { String::new() } else { format!(" · {} not drawn", not_drawn.len()) },
        t = all_targets.len(),
        ts = if all_targets.len() == 1 { "" } else { "s" },
        hosts = if hosts.is_empty() { String::new() } else { format!(" · host {}", esc(&hosts.join(", "))) },
        when = esc(generated_at),
        nav = nav.join(""),
    );
    Ok(page)
}

/// How many runs of one profile the charts and comparison tables draw, the newest: the charts
/// tell 32 lines apart (`charts::PALETTE`'s 8 colours, each with 4 dash patterns and markers),
/// and a comparison table of more runs is more columns than anyone reads.
const DRAWN_PER_PROFILE: usize = 32;

/// The note above each chart section when `left` runs are not drawn in it.
fn not_all_drawn(left: usize) -> String {
    if left == 0 {
        return String::new();
    }
    format!(
        "<p class=\"note\">{left} older run{s} of {these} profiles {are} not drawn here: the charts and comparisons show the newest {DRAWN_PER_PROFILE} runs of each profile. Every run counts in the cards above and is listed under Runs; report older ones by their ids (<code>disktier report RUN ...</code>) or with <code>--group</code>.</p>\n",
        s = if left == 1 { "" } else { "s" },
        these = if left == 1 { "its" } else { "their" },
        are = if left == 1 { "is" } else { "are" },
    )
}

/// The newest [`DRAWN_PER_PROFILE`] of `runs` (by when they were saved), in their order, and
/// the note above their section when older ones are left out (QA: 2,000 interference runs
/// made a 36 MB page, a chart and a table each).
fn newest_drawn<'a, T>(
    runs: Vec<(&'a StoredRun, T)>,
    what: &str,
) -> (Vec<(&'a StoredRun, T)>, String) {
    if runs.len() <= DRAWN_PER_PROFILE {
        return (runs, String::new());
    }
    let mut by_time: Vec<usize> = (0..runs.len()).collect();
    by_time.sort_by(|&a, &b| {
        let key = |i: usize| (&runs[i].0.summary.created_at, &runs[i].0.summary.id);
        key(b).cmp(&key(a))
    });
    let mut keep = vec![false; runs.len()];
    for i in by_time.into_iter().take(DRAWN_PER_PROFILE) {
        keep[i] = true;
    }
    let left = runs.len() - DRAWN_PER_PROFILE;
    let note = format!(
        "<p class=\"note\">{left} older {what} are not drawn here: this section shows the newest {DRAWN_PER_PROFILE}. Every run is listed under Runs; report older ones by their ids (<code>disktier report RUN ...</code>).</p>\n"
    );
    let drawn = runs
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect();
    (drawn, note)
}

/// Every run, one row each; a run whose document did not read has a second row saying why, and
/// a run left out (its row does not read) one row saying so.
fn runs_table(runs: &[StoredRun], unreadable: &[(&str, String)], skipped: &[Skipped]) -> String {
    let mut s = String::from("<table class=\"runs\">\n<tr><th>run</th><th>saved (UTC)</th><th>kind</th><th>profile</th><th>target</th><th>host</th><th>engine</th></tr>\n");
    for r in runs {
        let m = &r.summary;
        let _ = writeln!(
            s,
            "<tr><td class=\"mono\">{}</td><td>{}</td><td>{}{}</td><td>{}{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&m.id),
            esc(m.created_at.get(..19).unwrap_or(&m.created_at)).replace('T', " "),
            esc(&m.kind),
            if m.interrupted {
                " (interrupted: partial figures)"
            } else {
                ""
            },
            esc(m.profile.as_deref().unwrap_or("–")),
            if m.quick { " (quick)" } else { "" },
            esc(m.target.as_deref().unwrap_or("–")),
            esc(m.hostname.as_deref().filter(|h| !h.is_empty()).unwrap_or("–")),
            esc(m.engine.as_deref().unwrap_or("–")),
        );
        if let Some((_, why)) = unreadable.iter().find(|(id, _)| *id == m.id) {
            let _ = writeln!(
                s,
                "<tr class=\"unreadable\"><td colspan=\"7\">unreadable document: {}</td></tr>",
                esc(why)
            );
        }
    }
    for sk in skipped {
        let _ = writeln!(
            s,
            "<tr class=\"unreadable\"><td class=\"mono\">{}</td><td colspan=\"6\">left out: {}</td></tr>",
            esc(&sk.id),
            esc(&sk.why)
        );
    }
    s.push_str("</table>\n");
    s
}
