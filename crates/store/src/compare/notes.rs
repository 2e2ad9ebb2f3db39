//! The notes under a comparison: what the reader must know before trusting a ratio (quick runs
//! beside full ones, partial figures, the runs' own warnings, small files of different shapes).

use super::{Compared, Side};
use disktier_catalog::fmt::int;
use disktier_engine::RunDoc;
use disktier_units::Bytes;

/// The letters of the sides `pick` selects.
pub(super) fn letters(sides: &[Side], pick: impl Fn(&Side) -> bool) -> Vec<&str> {
    sides
        .iter()
        .filter(|s| pick(s))
        .map(|s| s.letter.as_str())
        .collect()
}

/// Every note about the runs themselves, in the order a reader needs them.
pub(super) fn about_runs(runs: &[Compared<'_>], sides: &[Side], force: bool) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(twice_note(sides));
    notes.extend(mix_note(sides));
    notes.extend(interrupted_note(sides));
    notes.extend(small_files_note(runs, sides, force));
    notes.extend(super::jobs::job_note(runs, sides, force));
    notes.extend(latency_note(runs, sides));
    notes.extend(warning_notes(sides));
    notes
}

/// The runs given more than once: they are compared with themselves.
fn twice_note(sides: &[Side]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        if sides[..i].iter().any(|p| p.id == s.id) {
            continue;
        }
        let same = letters(sides, |o| o.id == s.id);
        if same.len() > 1 {
            out.push(format!(
                "{} are the same run ({}), given {} times",
                same.join(", "),
                s.id,
                same.len()
            ));
        }
    }
    out
}

/// The note when quick runs stand beside full or imported ones (an import is fio's or etcd-perf's
/// run, neither quick nor full as disktier's profiles are).
fn mix_note(sides: &[Side]) -> Option<String> {
    let quick = letters(sides, |s| s.quick);
    let imported = letters(sides, |s| !s.quick && s.imported());
    let full = letters(sides, |s| !s.quick && !s.imported());
    if quick.is_empty() || (imported.is_empty() && full.is_empty()) {
        return None;
    }
    let mixed = match (full.is_empty(), imported.is_empty()) {
        (false, true) => "quick and full runs are mixed",
        (true, false) => "quick and imported runs are mixed",
        _ => "quick, full and imported runs are mixed",
    };
    let mut which = format!("{} quick", quick.join(", "));
    if !imported.is_empty() {
        which.push_str(&format!("; {} imported", imported.join(", ")));
    }
    // The full runs are named too when imports are there as well: "quick, full and imported
    // runs are mixed (A quick; B imported)" left the reader to guess which was full (QA).
    if !full.is_empty() && !imported.is_empty() {
        which.push_str(&format!("; {} full", full.join(", ")));
    }
    Some(format!(
        "{mixed} ({which}): quick runs are shorter and noisier, so small differences mean little"
    ))
}

fn interrupted_note(sides: &[Side]) -> Option<String> {
    let cut = letters(sides, |s| s.interrupted);
    if cut.is_empty() {
        return None;
    }
    let (was, its) = if cut.len() == 1 {
        ("was", "its")
    } else {
        ("were", "their")
    };
    Some(format!(
        "{} {was} interrupted (Ctrl-C or a signal): {its} figures are partial, so the comparison says little about the disk",
        cut.join(", ")
    ))
}

/// What a small-files run wrote, and whether its time ends with the files on the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    files: u64,
    file_size: u64,
    /// Timed to the end of a final syncfs. Results from before disktier synced timed the page
    /// cache, and so did a run a signal stopped before its sync.
    synced: bool,
}

fn shape(doc: &RunDoc) -> Option<Shape> {
    doc.results.small_files.as_ref().map(|s| Shape {
        files: s.files,
        file_size: s.file_size,
        synced: s.sync_s.is_some(),
    })
}

/// Whether `run`'s figures may be set against the first run's: if both wrote small files, they
/// wrote the same number of the same size, and both timed them onto the disk. A run of 2,000
/// files of 4 KiB and one of 100 files of 1 MiB ask different questions of a disk: every
/// figure (files/s, write IOPS, throughput, latency) follows from the shape.
pub(super) fn same_small_files(first: &RunDoc, run: &RunDoc) -> bool {
    match (shape(first), shape(run)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// "4 KiB", or "5.12 KiB (5,242 B)" where the unit rounds: two sizes that differ by a few bytes
/// must not read the same.
fn size(bytes: u64) -> String {
    let short = Bytes(bytes).to_string();
    if short.contains('.') {
        format!("{short} ({} B)", int(bytes))
    } else {
        short
    }
}

/// Why a run's small files were timed without a final sync.
fn unsynced_why(doc: &RunDoc) -> &'static str {
    if doc.interrupted {
        "stopped before its final sync"
    } else {
        "timed without a final sync (the page cache, before disktier synced)"
    }
}

fn small_files_note(runs: &[Compared<'_>], sides: &[Side], force: bool) -> Option<String> {
    let first = runs[0].doc;
    shape(first)?;
    let odd: Vec<usize> = (1..runs.len())
        .filter(|&k| !same_small_files(first, runs[k].doc))
        .collect();
    if odd.is_empty() {
        // The same shape, each timed the same way: a note only when that way is the page cache.
        let unsynced: Vec<&str> = (0..runs.len())
            .filter(|&k| shape(runs[k].doc).is_some_and(|s| !s.synced))
            .map(|k| sides[k].letter.as_str())
            .collect();
        return (unsynced.len() > 1).then(|| {
            format!(
                "the small-files runs {} were timed without a final sync (stopped before it, or stored before disktier synced): their files/s are the page cache's, not the disk's",
                unsynced.join(", ")
            )
        });
    }
    // Only runs that hold small files differ (`same_small_files`), so each has a shape.
    let describe = |k: usize| {
        let s = shape(runs[k].doc)?;
        Some(format!(
            "{} {} files of {}{}",
            sides[k].letter,
            int(s.files),
            size(s.file_size),
            if s.synced {
                String::new()
            } else {
                format!(" {}", unsynced_why(runs[k].doc))
            }
        ))
    };
    let list: Vec<String> = std::iter::once(0)
        .chain(odd.iter().copied())
        .filter_map(describe)
        .collect();
    let against: Vec<String> = odd
        .iter()
        .map(|&k| format!("A vs {}", sides[k].letter))
        .collect();
    let what = super::jobs::not_compared(force, &against);
    Some(format!(
        "the small-files runs differ ({}): {what}",
        list.join("; ")
    ))
}

/// Whether the run has read or write latencies (the sync calls' are timed the same way by
/// both engines).
fn has_io_latencies(doc: &RunDoc) -> bool {
    [&doc.results.read, &doc.results.write]
        .into_iter()
        .flatten()
        .any(|d| d.ios > 0)
}

/// The note when the native engine's read/write latencies stand beside fio's: disktier times
/// an I/O from its submission to its completion (fio's `lat`), fio's JSON and `--engine fio`
/// give `clat`, from after the submission (docs/result-schema.md, `lat_ns`).
fn latency_note(runs: &[Compared<'_>], sides: &[Side]) -> Option<String> {
    let with = |engine: &str| {
        let ids: Vec<&str> = runs
            .iter()
            .zip(sides)
            .filter(|(r, _)| r.doc.engine == engine && has_io_latencies(r.doc))
            .map(|(_, s)| s.letter.as_str())
            .collect();
        ids
    };
    let native = with("disktier");
    let fio = with("fio");
    if native.is_empty() || fio.is_empty() {
        return None;
    }
    Some(format!(
        "read/write latencies are timed differently: {} from submission to completion (disktier's engine, fio's lat), {} fio's clat, from after the submission (on io_uring a few percent lower at low latencies; the same where the device time dominates)",
        native.join(", "),
        fio.join(", ")
    ))
}

/// The runs' own warnings (a read of never-written blocks, an engine that fell back, a cold
/// page cache), each once, with the letters of the runs that carry it: "4.9x higher" means
/// little beside "this read measured blocks that never reached the media".
fn warning_notes(sides: &[Side]) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
    for side in sides {
        for w in side.warnings.iter().filter(|w| !w.trim().is_empty()) {
            match seen.iter_mut().find(|(text, _)| *text == w.as_str()) {
                Some((_, who)) if !who.contains(&side.letter.as_str()) => who.push(&side.letter),
                Some(_) => {}
                None => seen.push((w, vec![&side.letter])),
            }
        }
    }
    seen.into_iter()
        .map(|(text, who)| format!("{} warned: {text}", who.join(", ")))
        .collect()
}
