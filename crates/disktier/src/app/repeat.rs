//! Repeat: N runs of one job, each saved in one group ([`series`]), and what they agree on —
//! median p99, between-run spread, verdict stability ([`aggregate`]).

use super::measure::NothingMeasured;
use super::save::StoreConfig;
use disktier_engine::result::RepeatRun;
use disktier_engine::RunDoc;

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

/// The aggregate's type is the repeat document's (`disktier_engine::result::RepeatAggregate`):
/// docs/result.schema.json describes it.
pub use disktier_engine::result::RepeatAggregate as Aggregate;

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

/// One finished run of a series: its document (as printed and saved) and the verdict if any.
pub struct OneRun {
    pub doc: RunDoc,
    pub pass: Option<bool>,
}

/// One run of a series as its text row shows it: its figures, its id, and whether a signal cut
/// it short.
pub struct Row {
    pub figs: Figures,
    pub id: Option<String>,
    pub interrupted: bool,
    /// Its verdict failed as inconclusive: a runtime cap cut it short (`verdicts[].inconclusive`).
    pub inconclusive: bool,
}

/// How many of `rows` were judged: completed runs with a verdict (the N of "k of N passed").
pub fn judged(rows: &[Row]) -> usize {
    rows.iter()
        .filter(|r| !r.interrupted && r.figs.pass.is_some())
        .count()
}

/// A series as it ran.
pub struct Series {
    /// The group every run was saved in.
    pub group: String,
    /// Every run saved, in order (the last one interrupted when a signal stopped it).
    pub runs: Vec<RepeatRun>,
    /// One row a run of `runs`.
    pub rows: Vec<Row>,
    /// Over the runs that completed.
    pub aggregate: Aggregate,
    /// The run (1-based) a signal stopped; not counted in the aggregate.
    pub stopped: Option<u64>,
    /// The run (1-based) that could not run, after earlier ones had, and why: the series ends
    /// there, and the runs before it are shown before the error is.
    pub failed: Option<(u64, anyhow::Error)>,
}

/// Runs `one` (given the run's 0-based number) up to `n` times and saves each run as `kind` in
/// one new group. A run a signal stopped ends the series: it is saved (marked interrupted) when
/// it measured anything, but not counted in the aggregate (QA: an interrupted first run printed
/// "PASS: 1 of 1 runs passed"); one that measured nothing ([`NothingMeasured`]) is neither.
pub fn series(
    store: &StoreConfig,
    kind: &str,
    n: u64,
    mut one: impl FnMut(u64) -> anyhow::Result<OneRun>,
) -> anyhow::Result<Series> {
    let group = disktier_store::new_id();
    let mut runs = Vec::new();
    let mut figs = Vec::new();
    let mut rows = Vec::new();
    let mut metric = "sync.p99";
    let mut stopped = None;
    let mut failed = None;
    for i in 0..n {
        let r = match one(i) {
            Ok(r) => r,
            Err(e) if e.is::<NothingMeasured>() => {
                stopped = Some(i + 1);
                break;
            }
            // QA: a run that failed after others had measured (a disk that filled up) ended
            // the series with the error alone: the runs before it were saved but never shown,
            // and with --no-save lost.
            Err(e) if !runs.is_empty() => {
                failed = Some((i + 1, e));
                break;
            }
            Err(e) => return Err(e),
        };
        let (p99, m) = p99_of(&r.doc);
        let f = Figures {
            p99_ns: p99,
            pass: r.pass,
        };
        let id = store.save(kind, Some(&group), &serde_json::to_value(&r.doc)?)?;
        let interrupted = r.doc.interrupted;
        if interrupted {
            stopped = Some(i + 1);
        } else {
            metric = m;
            figs.push(f);
        }
        rows.push(Row {
            figs: f,
            id: id.clone(),
            interrupted,
            inconclusive: r.doc.verdicts.first().is_some_and(|v| v.inconclusive),
        });
        runs.push(RepeatRun { doc: r.doc, id });
        if interrupted {
            break;
        }
    }
    Ok(Series {
        group,
        runs,
        rows,
        aggregate: aggregate(metric, &figs),
        stopped,
        failed,
    })
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

    /// QA: run 2 of 3 failing lost run 1 from the output: the series keeps it and says which
    /// run failed.
    #[test]
    fn a_run_that_fails_after_others_ends_the_series_with_them_kept() {
        let store = StoreConfig {
            db: None,
            no_save: true,
            quiet: true,
        };
        let doc = RunDoc {
            schema_version: crate::app::SCHEMA_VERSION,
            engine: "disktier".into(),
            profile: Some("etcd".into()),
            quick: true,
            job: serde_json::json!({}),
            target: Default::default(),
            host: Default::default(),
            started_at: "2026-11-28T14:00:00Z".into(),
            duration_s: 1.0,
            interrupted: false,
            results: Default::default(),
            series: vec![],
            verdicts: vec![],
            warnings: vec![],
        };
        let s = series(&store, "check", 3, |i| match i {
            0 => Ok(OneRun {
                doc: doc.clone(),
                pass: Some(true),
            }),
            _ => anyhow::bail!("no space left"),
        })
        .unwrap();
        assert_eq!((s.runs.len(), s.aggregate.runs, s.stopped), (1, 1, None));
        let (k, e) = s.failed.unwrap();
        assert_eq!((k, e.to_string()), (2, "no space left".to_string()));
        // A first run that fails is the error itself: there is nothing to show.
        let e = series(&store, "check", 3, |_| -> anyhow::Result<OneRun> {
            anyhow::bail!("no space left")
        });
        assert!(e.is_err());
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
