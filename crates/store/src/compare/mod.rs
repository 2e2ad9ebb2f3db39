//! Comparing runs: the same metrics side by side, the ratio of each run to the first, and the
//! sentence a user would write ("fdatasync p99 0.20 ms vs 4.05 ms: 19.9x lower", the OpenShift
//! instance-disk recipe's ephemeral NVMe against EBS). Runs of different profiles measure different
//! things, so they are refused unless forced; quick runs beside full or imported ones,
//! interrupted runs (partial figures) and the runs' own warnings are noted, and small-files runs
//! of different shapes, and jobs that differ in their I/O pattern, block size, queue depth, job
//! count, engine, O_DIRECT, syncs or read mix, are not set against each other unless forced
//! (`notes.rs`, `jobs.rs`).

mod format;
mod jobs;
mod notes;
mod stored;

pub use format::{absurd, align, fmt_count, fmt_factor, fmt_pair, fmt_row, fmt_value};
pub use jobs::JobDifference;
pub use stored::{benchmark, benchmarks, Benchmark, CannotCompare};

use disktier_engine::{DirStats, RunDoc};
use serde::Serialize;

/// Whether a bigger number is better (IOPS) or worse (latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// How a metric's value prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Ns,
    Iops,
    BytesPerSec,
    FilesPerSec,
}

/// A run to compare: its id, the command that stored it (an import is neither a quick nor a
/// full disktier run) and its document.
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub doc: &'a RunDoc,
}

/// One run in a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// "A", "B", ... in the table.
    pub letter: String,
    pub id: String,
    /// The command that stored it (bench, check, assess, import).
    pub kind: String,
    pub target: String,
    /// The host that measured it; absent when its document names none (an import).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub profile: Option<String>,
    pub quick: bool,
    /// Ctrl-C or a signal stopped it: its figures are partial.
    pub interrupted: bool,
    /// The run's own warnings, as it printed them (also in the comparison's notes).
    pub warnings: Vec<String>,
    /// The options of its job that differ from the first run's (`jobs.rs`): then its figures
    /// are not measured against the first's unless forced. Absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub job_differences: Vec<JobDifference>,
}

impl Side {
    fn imported(&self) -> bool {
        self.kind == "import"
    }

    /// Its target, with its host before it (`node-a:/var/lib/etcd`) when another of `sides`
    /// measured the same path on another host: runs saved into one store by several nodes
    /// (QA: "A ... /var/lib/etcd" beside "B ... /var/lib/etcd" did not say which node was
    /// which, nor that they were different disks).
    fn place(&self, sides: &[Side]) -> String {
        match &self.host {
            Some(h)
                if sides.iter().any(|o| {
                    o.target == self.target && o.host.as_ref().is_some_and(|oh| oh != h)
                }) =>
            {
                format!("{h}:{}", self.target)
            }
            _ => self.target.clone(),
        }
    }
}

/// One metric across the runs; `ratios[k]` compares run k+1 with run 0.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub metric: String,
    pub unit: Unit,
    pub better: Better,
    pub values: Vec<Option<f64>>,
    pub ratios: Vec<Option<Ratio>>,
}

/// The first run's value against another's.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// max/min, always >= 1.
    pub factor: f64,
    /// "lower" or "higher": the first run's value relative to the other; "same" within half a
    /// percent.
    pub direction: &'static str,
    /// Whether the first run is the better one on this metric (never when "same").
    pub first_better: bool,
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<Side>,
    pub rows: Vec<Row>,
    /// Notes the reader must see (forced profile mismatch, quick beside full or imported,
    /// interrupted runs, small files of different shapes, the runs' own warnings).
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("compare needs at least two runs: give two run ids (see `disktier history`)")]
    TooFew,
    #[error(
        "runs {a} ({pa}) and {b} ({pb}) measured different profiles: pass --force to compare them anyway"
    )]
    DifferentProfiles {
        a: String,
        pa: String,
        b: String,
        pb: String,
    },
}

/// What "sync" was called in the job: the OpenShift instance-disk recipe's etcd job uses fdatasync.
fn sync_name(doc: &RunDoc) -> &'static str {
    let n = |k: &str| doc.job.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    if n("fdatasync") > 0 {
        "fdatasync"
    } else if n("fsync") > 0 {
        "fsync"
    } else {
        "sync"
    }
}

type Extract = Box<dyn Fn(&RunDoc) -> Option<f64>>;
/// A compared figure: its name, unit, which way is better, and how to read it from a document.
type Metric = (String, Unit, Better, Extract);
/// One direction's figures in a document.
type Direction = fn(&RunDoc) -> Option<&DirStats>;

/// A latency percentile of one direction (lower is better).
fn lat(name: String, dir: Direction, p: f64) -> Metric {
    let read = move |d: &RunDoc| dir(d).and_then(|s| s.lat_ns.p(p)).map(|v| v as f64);
    (name, Unit::Ns, Better::Lower, Box::new(read))
}

/// A rate (higher is better); 0 is none measured.
fn rate(name: &str, unit: Unit, read: impl Fn(&RunDoc) -> Option<f64> + 'static) -> Metric {
    let positive = move |d: &RunDoc| read(d).filter(|v| *v > 0.0);
    (name.into(), unit, Better::Higher, Box::new(positive))
}

fn metrics(sync: &str) -> Vec<Metric> {
    fn read(d: &RunDoc) -> Option<&DirStats> {
        d.results.read.as_ref()
    }
    fn write(d: &RunDoc) -> Option<&DirStats> {
        d.results.write.as_ref()
    }
    fn syncs(d: &RunDoc) -> Option<&DirStats> {
        d.results.sync.as_ref()
    }
    vec![
        lat(format!("{sync} p50"), syncs, 50.0),
        lat(format!("{sync} p99"), syncs, 99.0),
        lat(format!("{sync} p99.9"), syncs, 99.9),
        // What the p99 hides: the OSTree-vs-etcd issue's run beside the update had a p99 of
        // 6.19 ms and one fdatasync of 1.94 s [recipe-mco-ostree-etcd].
        (
            format!("{sync} max"),
            Unit::Ns,
            Better::Lower,
            Box::new(|d: &RunDoc| syncs(d).and_then(|s| s.lat_ns.max_ns()).map(|v| v as f64)),
        ),
        rate("read IOPS", Unit::Iops, |d| read(d).map(|s| s.iops)),
        rate("write IOPS", Unit::Iops, |d| write(d).map(|s| s.iops)),
        rate("read throughput", Unit::BytesPerSec, |d| {
            read(d).map(|s| s.bw_bytes)
        }),
        rate("write throughput", Unit::BytesPerSec, |d| {
            write(d).map(|s| s.bw_bytes)
        }),
        lat("read p50".into(), read, 50.0),
        lat("read p99".into(), read, 99.0),
        lat("write p50".into(), write, 50.0),
        lat("write p99".into(), write, 99.0),
        rate("small files", Unit::FilesPerSec, |d| {
            d.results.small_files.as_ref().map(|s| s.files_per_s)
        }),
    ]
}

/// Compares `runs`, the first being the one the others are measured against.
pub fn compare(runs: &[Compared<'_>], force: bool) -> Result<Comparison, CompareError> {
    if runs.len() < 2 {
        return Err(CompareError::TooFew);
    }
    let first = &runs[0];
    let mut notes = Vec::new();
    for r in &runs[1..] {
        if r.doc.profile != first.doc.profile {
            let show = |p: &Option<String>| p.clone().unwrap_or_else(|| "custom job".into());
            if !force {
                return Err(CompareError::DifferentProfiles {
                    a: first.id.to_string(),
                    pa: show(&first.doc.profile),
                    b: r.id.to_string(),
                    pb: show(&r.doc.profile),
                });
            }
            let note = format!(
                "{} ({}) and {} ({}) measured different profiles: compared because of --force",
                first.id,
                show(&first.doc.profile),
                r.id,
                show(&r.doc.profile)
            );
            // The same run given twice is noted once (and as given twice, below).
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    let sides: Vec<Side> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Side {
            letter: letter(i),
            id: r.id.to_string(),
            kind: r.kind.to_string(),
            target: r.doc.target.path.clone(),
            host: Some(r.doc.host.hostname.clone()).filter(|h| !h.is_empty()),
            profile: r.doc.profile.clone(),
            quick: r.doc.quick,
            interrupted: r.doc.interrupted,
            warnings: r.doc.warnings.clone(),
            job_differences: if i == 0 {
                Vec::new()
            } else {
                jobs::differences(first.doc, r.doc)
            },
        })
        .collect();
    notes.extend(notes::about_runs(runs, &sides, force));
    // Small files of different shapes, and custom jobs that differ in what decides their figures
    // (`jobs.rs`), are different jobs (see the notes): such a pair is set side by side but not
    // measured against each other, unless forced.
    let comparable: Vec<bool> = runs[1..]
        .iter()
        .map(|r| {
            force || (notes::same_small_files(first.doc, r.doc) && jobs::same_job(first.doc, r.doc))
        })
        .collect();
    let mut rows = Vec::new();
    for (metric, unit, better, f) in metrics(sync_name(first.doc)) {
        let values: Vec<Option<f64>> = runs.iter().map(|r| f(r.doc)).collect();
        // A metric any run has is shown, "-" where a run lacks it, whichever run that is (QA:
        // one only B had, an import as A, was left out, and shown with A and B swapped).
        if values.iter().all(Option::is_none) {
            continue;
        }
        let ratios = values[1..]
            .iter()
            .zip(&comparable)
            .map(|(v, &ok)| {
                if !ok {
                    return None;
                }
                ratio(&metric, unit, better, values[0]?, (*v)?)
            })
            .collect();
        rows.push(Row {
            metric,
            unit,
            better,
            values,
            ratios,
        });
    }
    Ok(Comparison {
        runs: sides,
        rows,
        notes,
    })
}

fn letter(i: usize) -> String {
    let l = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        l.to_string()
    } else {
        format!("{l}{}", i / 26)
    }
}

fn ratio(metric: &str, unit: Unit, better: Better, a: f64, b: f64) -> Option<Ratio> {
    if a <= 0.0 || b <= 0.0 {
        return None;
    }
    let factor = a.max(b) / a.min(b);
    let same = (factor - 1.0).abs() < 0.005;
    // Within half a percent neither is better: "the same" in every output.
    let direction = if same {
        "same"
    } else if a < b {
        "lower"
    } else {
        "higher"
    };
    let first_better = !same
        && match better {
            Better::Lower => a < b,
            Better::Higher => a > b,
        };
    let (va, vb) = fmt_pair(unit, a, b);
    let sentence = if same {
        format!("{metric} {va} vs {vb}: the same")
    } else {
        format!("{metric} {va} vs {vb}: {} {direction}", fmt_factor(factor))
    };
    Some(Ratio {
        factor,
        direction,
        first_better,
        sentence,
    })
}

impl Comparison {
    /// The sentences, one per metric and compared run.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, side) in self.runs.iter().enumerate().skip(1) {
            for row in &self.rows {
                if let Some(r) = &row.ratios[k - 1] {
                    let who = if self.runs.len() > 2 {
                        format!("A vs {}: ", side.letter)
                    } else {
                        String::new()
                    };
                    out.push(format!("{who}{}", r.sentence));
                }
            }
        }
        out
    }

    /// The comparison as text: a legend of the runs, the table, the sentences, the notes.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for side in &self.runs {
            s.push_str(&format!(
                "{}  {}  {}  ({}{}{}{})\n",
                side.letter,
                // A newline in a stored name cannot break the legend into lines of its own
                // (QA); JSON keeps the name as it is.
                disktier_units::printable(&side.id),
                // An import that names no path (fio's text report) has none: said so, as
                // `show` says it, rather than a blank between two spaces (QA).
                if side.target.is_empty() {
                    "target unknown".to_string()
                } else {
                    disktier_units::printable(&side.place(&self.runs))
                },
                side.profile.as_deref().unwrap_or("custom job"),
                if side.quick { ", quick" } else { "" },
                if side.imported() { ", imported" } else { "" },
                if side.interrupted {
                    ", INTERRUPTED"
                } else {
                    ""
                }
            ));
        }
        s.push('\n');
        let mut head = vec!["METRIC".to_string()];
        head.extend(self.runs.iter().map(|r| r.letter.clone()));
        head.extend(self.runs[1..].iter().map(|r| format!("A vs {}", r.letter)));
        let mut rows = vec![head];
        for row in &self.rows {
            let mut cells = vec![row.metric.clone()];
            // The row's values in one unit, for the largest of them.
            let known: Vec<f64> = row.values.iter().flatten().copied().collect();
            let mut shown = fmt_row(row.unit, &known).into_iter();
            cells.extend(row.values.iter().map(|v| match v {
                Some(_) => shown.next().unwrap_or_default(),
                None => "-".into(),
            }));
            cells.extend(row.ratios.iter().map(|r| match r {
                Some(r) if (r.factor - 1.0).abs() < 0.005 => "same".into(),
                Some(r) => format!(
                    "{} {} ({})",
                    fmt_factor(r.factor),
                    r.direction,
                    if r.first_better { "better" } else { "worse" }
                ),
                None => "-".into(),
            }));
            rows.push(cells);
        }
        s.push_str(&align(&rows));
        s.push('\n');
        for line in self.sentences() {
            s.push_str(&line);
            s.push('\n');
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    }
}

#[cfg(test)]
mod tests;
