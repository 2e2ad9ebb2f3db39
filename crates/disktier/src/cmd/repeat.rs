//! `--repeat N` on `bench` and `check etcd`: one run on a cloud volume varies, so the job runs N
//! times; each run is saved in the store as its own run (all N share one group id, so `history
//! --group ID` lists them), and an aggregate says what the N runs agree on:
//!
//! - the median of the runs' p99 latencies (sync p99 when the job syncs, else write, else read);
//! - the between-run spread: min, max and the coefficient of variation (sample standard deviation
//!   over the mean of the N p99s);
//! - the verdict's stability: how many of N passed; a verdict that differs between runs is
//!   `unstable`.
//!
//! `--format json` prints `{runs: [...], aggregate: {...}}`; text prints one row a run and the
//! aggregate.

use super::{Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use anyhow::bail;
use disktier_engine::RunDoc;
use disktier_units::fmt_ns;
use serde::Serialize;

/// The most runs `--repeat` takes.
pub const MAX_REPEAT: u64 = 1000;

/// What one run contributes to the aggregate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub p99_ns: Option<u64>,
    pub pass: Option<bool>,
}

/// The latency figure the aggregate is over, and its name in the document.
pub fn p99_of(doc: &RunDoc) -> (Option<u64>, &'static str) {
    let r = &doc.results;
    if let Some(s) = &r.sync {
        return (s.lat_ns.p(99.0), "sync.p99");
    }
    if let Some(w) = &r.write {
        return (w.lat_ns.p(99.0), "write.p99");
    }
    (r.read.as_ref().and_then(|d| d.lat_ns.p(99.0)), "read.p99")
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aggregate {
    pub runs: usize,
    /// Which p99 the figures are (`sync.p99`, `write.p99`, `read.p99`).
    pub metric: String,
    /// Runs that had the figure.
    pub measured: usize,
    pub median_p99_ns: Option<f64>,
    pub min_p99_ns: Option<u64>,
    pub max_p99_ns: Option<u64>,
    /// Sample standard deviation of the p99s over their mean (needs two runs).
    pub cv: Option<f64>,
    /// Runs whose verdict passed, when the command has a verdict.
    pub passed: Option<usize>,
    /// "pass" (all passed), "fail" (none passed), "unstable" (some did), or "none" (no verdict).
    pub verdict: String,
}

/// The aggregate over the runs' figures.
pub fn aggregate(metric: &str, figs: &[Figures]) -> Aggregate {
    let mut p: Vec<u64> = figs.iter().filter_map(|f| f.p99_ns).collect();
    p.sort_unstable();
    let median = match p.len() {
        0 => None,
        n if n % 2 == 1 => Some(p[n / 2] as f64),
        n => Some((p[n / 2 - 1] as f64 + p[n / 2] as f64) / 2.0),
    };
    let cv = (p.len() >= 2).then(|| {
        let n = p.len() as f64;
        let mean = p.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = p.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        if mean > 0.0 {
            var.sqrt() / mean
        } else {
            0.0
        }
    });
    let verdicts: Vec<bool> = figs.iter().filter_map(|f| f.pass).collect();
    let passed = (!verdicts.is_empty()).then(|| verdicts.iter().filter(|&&b| b).count());
    let verdict = match passed {
        None => "none",
        Some(k) if k == verdicts.len() => "pass",
        Some(0) => "fail",
        Some(_) => "unstable",
    };
    Aggregate {
        runs: figs.len(),
        metric: metric.to_string(),
        measured: p.len(),
        median_p99_ns: median,
        min_p99_ns: p.first().copied(),
        max_p99_ns: p.last().copied(),
        cv,
        passed,
        verdict: verdict.into(),
    }
}

/// One finished run: its document (as printed and saved) and the verdict if any.
pub struct OneRun {
    pub doc: RunDoc,
    pub pass: Option<bool>,
}

/// `--repeat N --format json`: every run's document with the id it was saved under (null with
/// `--no-save`), and the aggregate.
#[derive(Serialize)]
struct RepeatDoc<'a> {
    schema_version: u32,
    kind: &'static str,
    group_id: Option<&'a str>,
    runs: Vec<SavedRun>,
    aggregate: Aggregate,
}

#[derive(Serialize)]
struct SavedRun {
    #[serde(flatten)]
    doc: RunDoc,
    id: Option<String>,
}

/// Runs `one` N times, saves each (kind `kind`, one group), prints runs and aggregate. Exit 0
/// when every run passed (or there is no verdict), 1 when any failed.
pub fn repeat(
    ctx: &Ctx,
    kind: &str,
    n: u64,
    mut one: impl FnMut(u64) -> anyhow::Result<OneRun>,
) -> anyhow::Result<Outcome> {
    let group = disktier_store::new_id();
    let mut runs = Vec::new();
    let mut figs = Vec::new();
    let mut metric = "sync.p99";
    let mut ids = Vec::new();
    for i in 0..n {
        let r = one(i)?;
        let (p99, m) = p99_of(&r.doc);
        metric = m;
        figs.push(Figures {
            p99_ns: p99,
            pass: r.pass,
        });
        let id = ctx
            .store()
            .save(kind, Some(&group), &serde_json::to_value(&r.doc)?)?;
        ids.push(id.clone());
        let interrupted = r.doc.interrupted;
        runs.push(SavedRun { doc: r.doc, id });
        if interrupted {
            break;
        }
    }
    let done = runs.len();
    let interrupted = done < n as usize;
    let agg = aggregate(metric, &figs);
    if ctx.json() {
        let doc = RepeatDoc {
            schema_version: SCHEMA_VERSION,
            kind: "repeat",
            group_id: (!ctx.global.no_save).then_some(group.as_str()),
            runs,
            aggregate: agg.clone(),
        };
        // Through a `Value`: keys print sorted, as they always have.
        super::print_json(&serde_json::to_value(&doc)?)?;
    } else {
        print!("{}", render(&agg, &figs, &ids));
        if !ctx.global.no_save {
            ctx.note(format!(
                "saved {} runs as group {group} (disktier history --group {group})",
                done
            ));
        }
    }
    if interrupted {
        bail!(
            "interrupted by a signal after {} of {n} runs: the aggregate above is partial",
            done
        );
    }
    Ok(if agg.verdict == "pass" || agg.verdict == "none" {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

fn render(agg: &Aggregate, figs: &[Figures], ids: &[Option<String>]) -> String {
    let mut s = format!("{:>4}  {:<24} {:>12}  verdict\n", "run", "id", agg.metric);
    for (i, (f, id)) in figs.iter().zip(ids).enumerate() {
        s.push_str(&format!(
            "{:>4}  {:<24} {:>12}  {}\n",
            i + 1,
            id.as_deref().unwrap_or("-"),
            f.p99_ns
                .map(|x| fmt_ns(x as f64))
                .unwrap_or_else(|| "-".into()),
            match f.pass {
                Some(true) => "PASS",
                Some(false) => "FAIL",
                None => "-",
            }
        ));
    }
    let show = |x: Option<u64>| x.map(|x| fmt_ns(x as f64)).unwrap_or_else(|| "-".into());
    s.push_str(&format!(
        "median {} {}, min {}, max {}, coefficient of variation {}\n",
        agg.metric,
        agg.median_p99_ns.map(fmt_ns).unwrap_or_else(|| "-".into()),
        show(agg.min_p99_ns),
        show(agg.max_p99_ns),
        agg.cv
            .map(|c| format!("{:.1} %", c * 100.0))
            .unwrap_or_else(|| "- (one run)".into()),
    ));
    if let Some(k) = agg.passed {
        let n = figs.iter().filter(|f| f.pass.is_some()).count();
        s.push_str(&match agg.verdict.as_str() {
            "unstable" => format!(
                "verdict UNSTABLE: {k} of {n} runs passed; the disk is near the threshold, do not trust one run\n"
            ),
            v => format!("verdict {}: {k} of {n} runs passed\n", v.to_uppercase()),
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(p: u64, pass: bool) -> Figures {
        Figures {
            p99_ns: Some(p),
            pass: Some(pass),
        }
    }

    #[test]
    fn median_spread_and_stability() {
        let a = aggregate("sync.p99", &[f(30, true), f(10, true), f(20, true)]);
        assert_eq!(a.median_p99_ns, Some(20.0));
        assert_eq!((a.min_p99_ns, a.max_p99_ns), (Some(10), Some(30)));
        assert!((a.cv.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(a.verdict, "pass");
        let a = aggregate("sync.p99", &[f(10, true), f(40, false)]);
        assert_eq!(a.median_p99_ns, Some(25.0));
        assert_eq!((a.passed, a.verdict.as_str()), (Some(1), "unstable"));
        let a = aggregate("sync.p99", &[f(40, false)]);
        assert_eq!((a.cv, a.verdict.as_str()), (None, "fail"));
        let a = aggregate(
            "read.p99",
            &[Figures {
                p99_ns: None,
                pass: None,
            }],
        );
        assert_eq!((a.median_p99_ns, a.verdict.as_str()), (None, "none"));
    }
}
