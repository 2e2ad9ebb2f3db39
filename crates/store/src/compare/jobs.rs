//! Whether two custom jobs ran the same job. Two runs that share no built-in profile (imports of
//! fio's reports of your own jobs, `bench` with fio-style options) can differ in what decides
//! every figure: 4 KiB random reads at queue depth 1 against 1 MiB reads, one job against two.
//! Their ratio says how the jobs differ, not the disks, so such a pair is set side by side but
//! not measured against each other unless forced, as small files of different shapes are
//! (`notes.rs`).

use super::{Compared, Side};
use disktier_engine::RunDoc;
use disktier_units::Bytes;
use serde_json::Value;

/// The options of a job that decide its figures, by fio's names, that every custom job's
/// document carries as it ran: fio's text report prints each (its header's `rw=`, `bs=`,
/// `iodepth=`, and `jobs=N`), where it does not print `direct`, `fsync`, `fdatasync` or
/// `rwmixread`, whose values in such an import are fio's defaults rather than the job's. The
/// size, runtime and seed decide how long a job ran, not what it asked of the disk.
const DECIDING: [&str; 4] = ["rw", "bs", "iodepth", "numjobs"];

/// The deciding options where `run`'s job differs from `first`'s: (option, first's, run's).
fn differences<'a>(
    first: &'a RunDoc,
    run: &'a RunDoc,
) -> Vec<(&'static str, &'a Value, &'a Value)> {
    // A built-in profile is its job (its --quick version has a note of its own), and runs of
    // different profiles are refused, or noted when forced, on their own.
    if first.profile.is_some() || run.profile.is_some() {
        return Vec::new();
    }
    DECIDING
        .into_iter()
        .filter_map(|k| {
            let (a, b) = (first.job.get(k)?, run.job.get(k)?);
            (a != b).then_some((k, a, b))
        })
        .collect()
}

/// Whether `run` ran `first`'s job, as far as the figures go (an option a document does not
/// carry is no difference).
pub(super) fn same_job(first: &RunDoc, run: &RunDoc) -> bool {
    differences(first, run).is_empty()
}

/// An option's value as a reader would say it: a block size in bytes units.
fn shown(key: &str, v: &Value) -> String {
    match (key, v) {
        ("bs", Value::Number(n)) => n
            .as_u64()
            .map(|b| Bytes(b).to_string())
            .unwrap_or_else(|| n.to_string()),
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
            .map(|(key, a, b)| format!("{key} {} against {}", shown(key, a), shown(key, b)))
            .collect();
        odd.push(format!("A vs {}: {}", sides[k].letter, how.join(", ")));
        against.push(format!("A vs {}", sides[k].letter));
    }
    if odd.is_empty() {
        return None;
    }
    let what = not_compared(force, &against);
    Some(format!(
        "the runs ran different jobs ({}), so their ratios would measure the jobs, not the disks: {what}",
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
