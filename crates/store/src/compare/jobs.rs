//! Whether two runs ran the same job. Runs can differ in what decides every figure: 4 KiB random
//! reads at queue depth 1 against 1 MiB reads, one job against two, O_DIRECT against the page
//! cache, an fsync after every write against none, 70 % reads against 30 %, psync against
//! io_uring. Their ratio says how the jobs differ, not the disks, so such a pair is set side by
//! side but not measured against each other unless forced, as small files of different shapes
//! are (`notes.rs`), and every option that differs is named.

use super::{Compared, Side};
use disktier_engine::RunDoc;
use disktier_units::Bytes;
use serde::Serialize;
use serde_json::Value;

/// The options of a job that decide its figures, by fio's names, as every benchmark document
/// carries them (its `job`). The size, runtime and seed decide how long a job ran, not what it
/// asked of the disk. `rwmixread` counts only between two mixed jobs (a pure read or write
/// job's is fio's unused default).
const DECIDING: [&str; 9] = [
    "rw",
    "bs",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "fsync",
    "fdatasync",
    "rwmixread",
];

/// The options fio's text report prints (its header's `rw=`, `bs=`, `ioengine=`, `iodepth=`,
/// and `jobs=N`): an import of it ([`disktier_engine::fio::text::IMPORTED_NOTE`]) holds fio's
/// defaults for the others, which are then unknown rather than different.
const IN_FIO_TEXT: [&str; 5] = ["rw", "bs", "iodepth", "numjobs", "ioengine"];

/// One option in which a run's job differs from the first run's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobDifference {
    /// fio's name of the option.
    pub option: &'static str,
    /// The first run's value, as its document has it.
    pub first: Value,
    /// This run's value.
    pub this: Value,
}

/// Whether `doc` is an import of fio's text report.
fn from_fio_text(doc: &RunDoc) -> bool {
    doc.warnings
        .iter()
        .any(|w| w.starts_with(disktier_engine::fio::text::IMPORTED_NOTE))
}

/// Whether `doc` knows option `key` of its job.
fn known(doc: &RunDoc, key: &str) -> bool {
    !from_fio_text(doc) || IN_FIO_TEXT.contains(&key)
}

/// Whether `doc`'s job mixes reads and writes (`rwmixread` applies).
fn mixed(doc: &RunDoc) -> bool {
    doc.job
        .get("rw")
        .and_then(Value::as_str)
        .is_some_and(|rw| matches!(rw, "readwrite" | "rw" | "randrw"))
}

/// The deciding options where `run`'s job differs from `first`'s.
pub(super) fn differences(first: &RunDoc, run: &RunDoc) -> Vec<JobDifference> {
    // Runs of different profiles are refused, or noted when forced, on their own; a built-in
    // profile's --quick version scales its job down (fewer jobs, smaller files) and has a note
    // of its own. A profile run beside one of the same scale ran the same job unless an option
    // overrode it (`bench --profile etcd --iodepth 4`, an import given --profile).
    if first.profile != run.profile || (first.profile.is_some() && first.quick != run.quick) {
        return Vec::new();
    }
    DECIDING
        .into_iter()
        .filter(|k| *k != "rwmixread" || (mixed(first) && mixed(run)))
        .filter(|k| known(first, k) && known(run, k))
        .filter_map(|k| {
            // An option a document does not carry is no difference.
            let (a, b) = (first.job.get(k)?, run.job.get(k)?);
            (a != b).then(|| JobDifference {
                option: k,
                first: a.clone(),
                this: b.clone(),
            })
        })
        .collect()
}

/// Whether `run` ran `first`'s job, as far as the figures go.
pub(super) fn same_job(first: &RunDoc, run: &RunDoc) -> bool {
    differences(first, run).is_empty()
}

/// An option's value as a reader would say it: a block size in bytes units, a flag as 0 or 1
/// (fio's spelling).
fn shown(key: &str, v: &Value) -> String {
    match (key, v) {
        ("bs", Value::Number(n)) => n
            .as_u64()
            .map(|b| Bytes(b).to_string())
            .unwrap_or_else(|| n.to_string()),
        (_, Value::Bool(b)) => u8::from(*b).to_string(),
        (_, Value::String(s)) => disktier_units::printable(s),
        (_, other) => other.to_string(),
    }
}

/// The note naming each run whose job differs from the first run's, and how.
pub(super) fn job_note(runs: &[Compared<'_>], sides: &[Side], force: bool) -> Option<String> {
    let first = runs.first()?.doc;
    let mut odd = Vec::new();
    let mut against = Vec::new();
    for (k, run) in runs.iter().enumerate().skip(1) {
        let diff = differences(first, run.doc);
        if diff.is_empty() {
            continue;
        }
        let how: Vec<String> = diff
            .iter()
            .map(|d| {
                format!(
                    "{} {} against {}",
                    d.option,
                    shown(d.option, &d.first),
                    shown(d.option, &d.this)
                )
            })
            .collect();
        odd.push(format!("A vs {}: {}", sides[k].letter, how.join(", ")));
        against.push(format!("A vs {}", sides[k].letter));
    }
    if odd.is_empty() {
        return None;
    }
    let what = not_compared(force, &against);
    Some(format!(
        "the runs ran different jobs ({}), so the comparison is not like-for-like and their ratios would measure the jobs, not the disks: {what}",
        odd.join("; ")
    ))
}

/// What happens to the figures of runs that differ (`against`: "A vs B", ...). Said so that it
/// holds in the report too, which has no --force.
pub(super) fn not_compared(force: bool, against: &[String]) -> String {
    if force {
        "compared because of --force".to_string()
    } else {
        format!(
            "their figures are not compared ({} left blank; `disktier compare --force` compares them anyway)",
            against.join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
