//! Comparing runs: the same metrics side by side, the ratio of each run to the first, and the
//! sentence a user would write ("fdatasync p99 0.20 ms vs 4.05 ms: 19.9x lower", the OpenShift
//! instance-disk recipe's ephemeral NVMe against EBS). Runs of different profiles measure different
//! things, so they are refused unless forced; quick runs beside full or imported ones, and
//! interrupted runs (partial figures), are flagged.

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
    pub profile: Option<String>,
    pub quick: bool,
    /// Ctrl-C or a signal stopped it: its figures are partial.
    pub interrupted: bool,
}

impl Side {
    fn imported(&self) -> bool {
        self.kind == "import"
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
    /// "lower" or "higher": the first run's value relative to the other.
    pub direction: &'static str,
    /// Whether the first run is the better one on this metric.
    pub first_better: bool,
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<Side>,
    pub rows: Vec<Row>,
    /// Notes the reader must see (quick beside full or imported, interrupted runs, forced
    /// profile mismatch).
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
            notes.push(format!(
                "{} ({}) and {} ({}) measured different profiles: compared because of --force",
                first.id,
                show(&first.doc.profile),
                r.id,
                show(&r.doc.profile)
            ));
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
            profile: r.doc.profile.clone(),
            quick: r.doc.quick,
            interrupted: r.doc.interrupted,
        })
        .collect();
    notes.extend(mix_note(&sides));
    let cut = letters(&sides, |s| s.interrupted);
    if !cut.is_empty() {
        let (was, its) = if cut.len() == 1 {
            ("was", "its")
        } else {
            ("were", "their")
        };
        notes.push(format!(
            "{} {was} interrupted (Ctrl-C or a signal): {its} figures are partial, so the comparison says little about the disk",
            cut.join(", ")
        ));
    }
    let mut rows = Vec::new();
    for (metric, unit, better, f) in metrics(sync_name(first.doc)) {
        let values: Vec<Option<f64>> = runs.iter().map(|r| f(r.doc)).collect();
        if values.iter().filter(|v| v.is_some()).count() < 2 && values[0].is_none() {
            continue;
        }
        if values.iter().all(Option::is_none) {
            continue;
        }
        let ratios = values[1..]
            .iter()
            .map(|v| ratio(&metric, unit, better, values[0]?, (*v)?))
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

/// The letters of the sides `pick` selects.
fn letters(sides: &[Side], pick: impl Fn(&Side) -> bool) -> Vec<&str> {
    sides
        .iter()
        .filter(|s| pick(s))
        .map(|s| s.letter.as_str())
        .collect()
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
    Some(format!(
        "{mixed} ({which}): quick runs are shorter and noisier, so small differences mean little"
    ))
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
    let direction = if a < b { "lower" } else { "higher" };
    let first_better = match better {
        Better::Lower => a <= b,
        Better::Higher => a >= b,
    };
    let (va, vb) = fmt_pair(unit, a, b);
    let sentence = if (factor - 1.0).abs() < 0.005 {
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

/// "19.9x" below 100, "180x" above.
pub fn fmt_factor(f: f64) -> String {
    if f < 100.0 {
        format!("{f:.1}x")
    } else {
        format!("{f:.0}x")
    }
}

/// Two values in the same unit, picked for the larger one, so "0.20 ms vs 4.05 ms" reads at a glance.
pub fn fmt_pair(unit: Unit, a: f64, b: f64) -> (String, String) {
    let m = a.max(b);
    let f = |v: f64| match unit {
        Unit::Ns => {
            let (div, name) = if m >= 1e9 {
                (1e9, "s")
            } else if m >= 1e6 {
                (1e6, "ms")
            } else if m >= 1e3 {
                (1e3, "us")
            } else {
                (1.0, "ns")
            };
            if name == "ns" {
                format!("{v:.0} ns")
            } else if name == "us" {
                format!("{:.1} us", v / div)
            } else {
                format!("{:.2} {name}", v / div)
            }
        }
        _ => fmt_value(unit, v),
    };
    (f(a), f(b))
}

/// One value in its own best unit.
pub fn fmt_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ns => disktier_units::fmt_ns(v),
        Unit::Iops => fmt_count(v),
        Unit::BytesPerSec => {
            if v >= 1024.0 * 1024.0 * 1024.0 {
                format!("{:.2} GiB/s", v / (1024.0 * 1024.0 * 1024.0))
            } else if v >= 1024.0 * 1024.0 {
                format!("{:.1} MiB/s", v / (1024.0 * 1024.0))
            } else {
                format!("{:.1} KiB/s", v / 1024.0)
            }
        }
        Unit::FilesPerSec => format!("{} files/s", fmt_count(v)),
    }
}

/// 389, 4750, 45.2k, 180k: fio's way of printing IOPS.
pub fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e5 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
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
                side.id,
                side.target,
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
            cells.extend(row.values.iter().map(|v| match v {
                Some(v) => fmt_value(row.unit, *v),
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

/// Left-aligned columns separated by two spaces, without trailing blanks.
pub fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < r.len() {
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> (String, RunDoc) {
        let p = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let doc: RunDoc = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        (name.to_string(), doc)
    }

    /// `runs` as `kind` runs, to compare.
    fn as_kind<'a>(kind: &'a str, runs: &'a [(String, RunDoc)]) -> Vec<Compared<'a>> {
        runs.iter()
            .map(|(id, doc)| Compared { id, kind, doc })
            .collect()
    }

    fn checks(runs: &[(String, RunDoc)], force: bool) -> Result<Comparison, CompareError> {
        compare(&as_kind("check", runs), force)
    }

    /// The OpenShift recipe's ephemeral disk against its EBS volume.
    fn ephemeral_vs_ebs() -> Comparison {
        checks(
            &[fixture("ocp-recipe-ephemeral"), fixture("ocp-recipe-ebs")],
            false,
        )
        .unwrap()
    }

    #[test]
    fn seed_000_sentence() {
        let c = ephemeral_vs_ebs();
        let s = c.sentences();
        assert!(
            s.contains(&"fdatasync p99 0.20 ms vs 4.05 ms: 19.9x lower".to_string()),
            "{s:#?}"
        );
    }

    #[test]
    fn compare_table_golden() {
        let c = ephemeral_vs_ebs();
        insta::assert_snapshot!("ocp_recipe_compare", c.to_text());
    }

    #[test]
    fn three_runs_and_quick_flag_golden() {
        let runs = [
            fixture("ocp-recipe-ephemeral"),
            fixture("ocp-recipe-ebs"),
            fixture("quick-etcd"),
        ];
        let c = checks(&runs, false).unwrap();
        assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
        insta::assert_snapshot!("three_runs_compare", c.to_text());
    }

    #[test]
    fn different_profiles_need_force() {
        let runs = [fixture("ocp-recipe-ephemeral"), fixture("read-iops")];
        let e = checks(&runs, false).unwrap_err().to_string();
        assert!(
            e.contains("different profiles") && e.contains("--force"),
            "{e}"
        );
        let c = checks(&runs, true).unwrap();
        assert!(c.notes.iter().any(|n| n.contains("--force")));
    }

    /// Regression (QA): an imported fio run beside a quick one was called "full" ("quick and
    /// full runs are mixed (A quick)").
    #[test]
    fn an_import_is_not_called_a_full_run() {
        let quick = [fixture("quick-etcd")];
        let other = [fixture("ocp-recipe-ebs")];
        let runs = [as_kind("bench", &quick)[0], as_kind("import", &other)[0]];
        let c = compare(&runs, false).unwrap();
        assert_eq!(
            c.notes,
            vec!["quick and imported runs are mixed (A quick; B imported): quick runs are shorter and noisier, so small differences mean little"]
        );
        assert!(c.to_text().contains("(etcd, imported)"), "{}", c.to_text());
        let full = [fixture("ocp-recipe-ephemeral")];
        let runs = [runs[0], runs[1], as_kind("check", &full)[0]];
        let c = compare(&runs, false).unwrap();
        assert!(
            c.notes[0].starts_with("quick, full and imported runs are mixed (A quick; B imported)"),
            "{:?}",
            c.notes
        );
    }

    /// Regression (QA): an interrupted run (partial figures) was compared without a word.
    #[test]
    fn an_interrupted_run_is_noted() {
        let mut runs = [fixture("ocp-recipe-ephemeral"), fixture("ocp-recipe-ebs")];
        runs[0].1.interrupted = true;
        let c = checks(&runs, false).unwrap();
        assert_eq!(
            c.notes,
            vec!["A was interrupted (Ctrl-C or a signal): its figures are partial, so the comparison says little about the disk"]
        );
        assert!(c.runs[0].interrupted && !c.runs[1].interrupted);
        let text = c.to_text();
        assert!(text.contains("(etcd, INTERRUPTED)"), "{text}");
        assert!(text.contains("note: A was interrupted"), "{text}");
    }

    #[test]
    fn units_read_well() {
        assert_eq!(
            fmt_pair(Unit::Ns, 203776.0, 4046848.0),
            ("0.20 ms".into(), "4.05 ms".into())
        );
        assert_eq!(fmt_count(45200.0), "45.2k");
        assert_eq!(fmt_count(179800.0), "180k");
        assert_eq!(fmt_value(Unit::BytesPerSec, 736460800.0), "702.3 MiB/s");
    }
}
