//! Every job report of fio's text (its output of a job file) as the jobs `import fio --jobs`
//! reads from fio's JSON ([`crate::fio::jobs`]): `disktier import fio-text --jobs`.
//!
//! Each job report becomes one [`FioJob`] with its `groupid`; the text has no histogram bins,
//! so its histograms are unknown. fio's `Run status group N (all jobs):` sections are its totals
//! of each reporting group: the groups themselves are the jobs' `groupid`s (as fio's JSON has
//! them), and each printed total is checked against the sum of its jobs' figures, so a file
//! that lacks some of a group's job reports is said to, not taken as the whole group.

use super::{has_figures, job_doc, notes, FioTextError, Said, TextContext, TextReport};
use crate::fio::FioJob;
use crate::types::Measured;

/// The jobs of a text report and what is said once for the whole document.
#[derive(Debug, Clone)]
pub struct TextJobs {
    pub jobs: Vec<FioJob>,
    /// What the text import cannot know, and where fio's group totals disagree with the jobs.
    pub notes: Vec<String>,
}

/// Every job report of `r` (named `source_name` in errors), in the file's order. A report with
/// no figures at all is refused; a job whose report has none is kept, empty, with a warning.
pub fn jobs(
    r: &TextReport,
    source_name: &str,
    ctx: &TextContext,
) -> Result<TextJobs, FioTextError> {
    if !r.jobs.iter().any(has_figures) {
        return Err(FioTextError::NoFigures {
            source_name: source_name.into(),
            index: 0,
            name: r.jobs.first().map_or_else(String::new, |j| j.name.clone()),
            error: r.jobs.first().map_or(0, |j| j.error),
        });
    }
    let mut said = Said::default();
    let mut out = Vec::with_capacity(r.jobs.len());
    for j in &r.jobs {
        let (mut doc, s) = job_doc(j, r, ctx.clone());
        said = said.or(s);
        if !has_figures(j) {
            doc.warnings.push(
                "fio's report of this job has no \"read:\", \"write:\" or \"trim:\" line: its figures are empty".into(),
            );
        }
        out.push(FioJob {
            name: j.name.clone(),
            group: j.groupid,
            measured: Measured {
                doc,
                read_hist: None,
                write_hist: None,
                sync_hist: None,
            },
        });
    }
    let mut notes = notes(r, said);
    notes.extend(group_checks(r, &out));
    Ok(TextJobs { jobs: out, notes })
}

/// fio's `Run status group` totals against the sums of the group's job reports: a group
/// printed without any of its jobs, or whose bytes are not its jobs' (as rounded by fio to 3
/// significant digits), is said to be incomplete. Each kind is one note however many groups it
/// names (a file may hold thousands of groups), listing the first few.
fn group_checks(r: &TextReport, jobs: &[FioJob]) -> Vec<String> {
    let mut absent = Vec::new();
    let mut short = Vec::new();
    for g in &r.groups {
        let members: Vec<&FioJob> = jobs.iter().filter(|j| j.group == g.id).collect();
        if members.is_empty() {
            absent.push(g.id);
            continue;
        }
        let sum = |pick: fn(&crate::result::Results) -> Option<u64>| -> Option<u64> {
            members
                .iter()
                .filter_map(|j| pick(&j.measured.doc.results))
                .fold(None, |a, b| Some(a.unwrap_or(0u64).saturating_add(b)))
        };
        let dirs = [
            ("read", g.read, sum(|r| r.read.as_ref().map(|d| d.bytes))),
            ("write", g.write, sum(|r| r.write.as_ref().map(|d| d.bytes))),
        ];
        for (name, printed, jobs_bytes) in dirs {
            let printed = printed.map_or(0.0, |p| p.io_bytes);
            let ours = jobs_bytes.unwrap_or(0) as f64;
            // Printed to 3 significant digits, as the jobs' own figures are.
            if (ours - printed).abs() > (0.006 * printed).max(1.0) {
                short.push(format!(
                    "group {}: fio's run status totals {printed:.0} {name} bytes, its job reports here {ours:.0}",
                    g.id
                ));
            }
        }
    }
    let mut w = Vec::new();
    if !absent.is_empty() {
        let (them, its) = if absent.len() == 1 {
            ("the group is", "its")
        } else {
            ("the groups are", "their")
        };
        w.push(format!(
            "fio's run status lists reporting {} {}, but the file holds none of {its} job reports: {them} not in this result",
            if absent.len() == 1 { "group" } else { "groups" },
            first_few(&absent.iter().map(u32::to_string).collect::<Vec<_>>(), ", ")
        ));
    }
    if !short.is_empty() {
        w.push(format!(
            "reporting {}: the file lacks some of the group's job reports, so the group's figures are of those it holds",
            first_few(&short, "; ")
        ));
    }
    w
}

/// How many groups a folded note names before it counts the rest.
const NAMED_GROUPS: usize = 8;

/// The first [`NAMED_GROUPS`] items joined by `sep`, then how many more there are.
fn first_few(items: &[String], sep: &str) -> String {
    let shown = items[..items.len().min(NAMED_GROUPS)].join(sep);
    match items.len().saturating_sub(NAMED_GROUPS) {
        0 => shown,
        more => format!("{shown} (and {more} more)"),
    }
}
