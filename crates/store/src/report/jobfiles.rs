//! The runs of fio job files (`bench FILE.fio`, `import fio --jobs`): one table per run, a row
//! per job and a row per reporting group that combines several jobs.
//! Its jobs ran side by side or one set after another, each with its own figures, so no one of
//! them is set against a single run's curves: they are shown as measured, each with when it
//! started.

use super::html::esc;
use crate::compare::{fmt_count, fmt_value, Unit};
use crate::StoredRun;
use disktier_engine::result::{JobEntry, JobFileDoc, Results};
use disktier_engine::DirStats;
use disktier_units::fmt_ns;
use serde_json::Value;
use std::fmt::Write as _;

/// The cells of one direction: IOPS, throughput, p99 ("–" where the direction did no I/O).
fn dir_cells(d: Option<&DirStats>) -> [String; 3] {
    match d.filter(|d| d.ios > 0) {
        Some(d) => [
            fmt_count(d.iops),
            fmt_value(Unit::BytesPerSec, d.bw_bytes),
            d.lat_ns
                .p(99.0)
                .map(|v| fmt_ns(v as f64))
                .unwrap_or_else(|| "–".into()),
        ],
        None => ["–".into(), "–".into(), "–".into()],
    }
}

/// The figure cells of one job or group.
fn figures(r: &Results) -> String {
    let mut s = String::new();
    for cell in dir_cells(r.read.as_ref())
        .into_iter()
        .chain(dir_cells(r.write.as_ref()))
    {
        let _ = write!(s, "<td class=\"num\">{}</td>", esc(&cell));
    }
    let sync = r
        .sync
        .as_ref()
        .filter(|d| d.ios > 0)
        .and_then(|d| d.lat_ns.p(99.0))
        .map(|v| fmt_ns(v as f64))
        .unwrap_or_else(|| "–".into());
    let _ = write!(s, "<td class=\"num\">{}</td>", esc(&sync));
    s
}

/// A job option as the table shows it ("–" when absent).
fn opt(job: &Value, key: &str) -> String {
    match job.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if key == "bs" => n
            .as_u64()
            .map(|b| disktier_units::Bytes(b).to_string())
            .unwrap_or_else(|| n.to_string()),
        Some(Value::Number(n)) => n.to_string(),
        _ => "–".into(),
    }
}

const HEAD: &str = "<tr><th>job</th><th>group</th><th>start</th><th>rw</th><th>bs</th><th>depth</th><th>jobs</th><th>target</th>\
<th>read IOPS</th><th>read bw</th><th>read p99</th><th>write IOPS</th><th>write bw</th><th>write p99</th><th>sync p99</th></tr>\n";

/// "2026-11-27 19:13:18 UTC" from an RFC 3339 time in UTC; anything else as stored.
fn when(t: &str) -> String {
    match (t.get(..19), t.ends_with('Z')) {
        (Some(head), true) if head.as_bytes().get(10) == Some(&b'T') => {
            format!("{} UTC", head.replace('T', " "))
        }
        _ => t.to_string(),
    }
}

fn job_row(j: &JobEntry) -> String {
    format!(
        "<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"mono\">{}</td>{}</tr>\n",
        esc(&j.name),
        if j.interrupted { " (interrupted)" } else { "" },
        j.group,
        j.start_s
            .map(|t| format!("+{t:.2} s"))
            .unwrap_or_else(|| "–".into()),
        esc(&opt(&j.job, "rw")),
        esc(&opt(&j.job, "bs")),
        esc(&opt(&j.job, "iodepth")),
        esc(&opt(&j.job, "numjobs")),
        esc(&super::charts::short(super::bench::target_name(&j.target.path), 36)),
        figures(&j.results)
    )
}

/// One job file's run.
fn one(run: &StoredRun, doc: &JobFileDoc) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h3>run <span class=\"mono\">{}</span> · job file <span class=\"mono\">{}</span></h3>\n<p>engine {} · started {} · {:.1} s measured{}</p>",
        esc(&run.summary.id),
        esc(&doc.jobfile),
        esc(&doc.engine),
        esc(&when(&doc.started_at)),
        doc.duration_s,
        if doc.interrupted {
            " · <strong>interrupted: partial figures</strong>"
        } else {
            ""
        }
    );
    s.push_str("<div class=\"scroll\">\n<table class=\"compare\">\n");
    s.push_str(HEAD);
    // Each group's jobs, then the group's combined row when it combines several jobs (fio's
    // `numjobs` clones, or jobs under group_reporting): a group of one job is that job's row.
    let mut shown = vec![false; doc.jobs.len()];
    for g in &doc.groups {
        let members: Vec<usize> = (0..doc.jobs.len())
            .filter(|&i| doc.jobs[i].group == g.group && !shown[i])
            .collect();
        for &i in &members {
            s.push_str(&job_row(&doc.jobs[i]));
            shown[i] = true;
        }
        if members.len() > 1 {
            let _ = writeln!(
                s,
                "<tr class=\"group\"><td>group {} ({})</td><td class=\"num\">{}</td><td colspan=\"6\">combined</td>{}</tr>",
                g.group,
                esc(&g.jobs.join(", ")),
                g.group,
                figures(&g.results)
            );
        }
    }
    // A job whose group is not listed (a damaged document) is still shown.
    for (i, j) in doc.jobs.iter().enumerate() {
        if !shown[i] {
            s.push_str(&job_row(j));
        }
    }
    s.push_str("</table>\n</div>\n");
    let mut notes: Vec<String> = doc.notes.clone();
    for j in &doc.jobs {
        for w in &j.warnings {
            let line = format!("{}: {w}", j.name);
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
    }
    for n in notes {
        let _ = writeln!(s, "<div class=\"note\">{}</div>", esc(&n));
    }
    s
}

/// The section: every job file's run, in the order given.
pub(super) fn job_file_section(runs: &[(&StoredRun, &JobFileDoc)]) -> String {
    let mut s = String::from(
        "<p class=\"muted\">Jobs ran as their file said: side by side, or one set after another where a stonewall waits (start: seconds from the start of the file's run, when known); each has its own figures, and \"jobs\" is its numjobs. See one run in text with <code>disktier show ID</code>.</p>\n",
    );
    for (run, doc) in runs {
        s.push_str(&one(run, doc));
    }
    s
}
