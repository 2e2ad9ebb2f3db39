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
//! `--format json` prints `{runs: [...], aggregate: {...}}` (the engine's `RepeatDoc`); text
//! prints one row a run and the aggregate; `--format prometheus` and `--textfile-dir` export
//! every run with a `run` label ("1".."N") and the aggregate's `disktier_repeat_*` families
//! (docs/monitoring.md). The aggregate is computed in [`crate::app::repeat`].

use super::{Ctx, Outcome};
use crate::app::repeat::{series, Aggregate, OneRun, Row};
use crate::app::SCHEMA_VERSION;
use crate::exposition::{self, RepeatMetrics, RunMetrics};
use anyhow::bail;
use disktier_engine::result::{RepeatDoc, RepeatRun};
use disktier_units::fmt_ns;

/// The most runs `--repeat` takes.
pub const MAX_REPEAT: u64 = 1000;

/// Runs `one` N times ([`series`]: each saved, kind `kind`, one group), prints runs and
/// aggregate. Exit 0 when every run passed (or there is no verdict), 1 when any failed, 2 when
/// a signal stopped the series (the run it cut is not counted).
pub fn repeat(
    ctx: &Ctx,
    kind: &str,
    n: u64,
    one: impl FnMut(u64) -> anyhow::Result<OneRun>,
) -> anyhow::Result<Outcome> {
    let mut s = series(&ctx.store(), kind, n, one)?;
    let failed = s.failed.take();
    let (group, agg) = (&s.group, &s.aggregate);
    let interrupted = s.stopped.is_some();
    // Every run is saved above: what cannot be lost is done before anything is printed. A
    // textfile that cannot be written is reported after the runs are printed; a series cut
    // short by a failed run is printed but not written there, as an interrupted one.
    let exported = export(ctx, kind, &s.runs, agg, interrupted || failed.is_some());
    if ctx.json() {
        let doc = RepeatDoc {
            schema_version: SCHEMA_VERSION,
            kind: "repeat".into(),
            group_id: (!ctx.global.no_save).then(|| group.clone()),
            runs: s.runs,
            aggregate: agg.clone(),
            interrupted,
        };
        // Through a `Value`: keys print sorted, as they always have.
        super::print_json(&serde_json::to_value(&doc)?)?;
    } else if !ctx.prometheus() {
        crate::out::print(&render(agg, &s.rows, s.stopped.map(|k| (k, n))))?;
    }
    if !ctx.global.no_save && !ctx.json() && !s.rows.is_empty() {
        ctx.note(format!(
            "saved {} runs as group {group} (disktier history --group {group})",
            s.rows.len()
        ));
    }
    exported?;
    if let Some((k, e)) = failed {
        return Err(e.context(format!(
            "run {k} of {n} could not run; the {} run(s) above completed and are counted",
            agg.runs
        )));
    }
    if let Some(k) = s.stopped {
        bail!(
            "interrupted by a signal during run {k} of {n}: it is not counted; the aggregate above is over the {} run(s) that completed",
            agg.runs
        );
    }
    Ok(if agg.verdict == "pass" || agg.verdict == "none" {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

/// `--format prometheus` / `--textfile-dir`: every run, labelled `run="1"`..`run="N"`, and
/// the aggregate. An interrupted series is printed but not written to the textfile, as an
/// interrupted run is not.
fn export(
    ctx: &Ctx,
    kind: &str,
    runs: &[RepeatRun],
    agg: &Aggregate,
    interrupted: bool,
) -> anyhow::Result<()> {
    if !ctx.exports_metrics() || runs.is_empty() {
        return Ok(());
    }
    let metrics: Vec<RunMetrics> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut m = RunMetrics::from_doc(kind, &exposition::local_node(&r.doc), &r.doc);
            m.labels.extra.push(("run", (i + 1).to_string()));
            m
        })
        .collect();
    let repeat = RepeatMetrics::new(&metrics[0], agg);
    let text = exposition::encode_with(&metrics, &[repeat])?;
    ctx.write_exposition(kind, &text, interrupted)
}

/// The text output: one row a run, the aggregate; `stopped` is the run a signal stopped, of N.
fn render(agg: &Aggregate, rows: &[Row], stopped: Option<(u64, u64)>) -> String {
    let mut s = format!("{:>4}  {:<24} {:>12}  verdict\n", "run", "id", agg.metric);
    for (i, r) in rows.iter().enumerate() {
        s.push_str(&format!(
            "{:>4}  {:<24} {:>12}  {}\n",
            i + 1,
            r.id.as_deref().unwrap_or("-"),
            r.figs
                .p99_ns
                .map(|x| fmt_ns(x as f64))
                .unwrap_or_else(|| "-".into()),
            match (r.interrupted, r.figs.pass) {
                (true, _) => "INTERRUPTED (partial, not counted)",
                (false, Some(false)) if r.inconclusive => "INCONCLUSIVE (cut short)",
                (false, Some(true)) => "PASS",
                (false, Some(false)) => "FAIL",
                (false, None) => "-",
            }
        ));
    }
    if let Some((k, n)) = stopped {
        s.push_str(&format!(
            "INTERRUPTED: a signal stopped run {k} of {n}; it is not counted, and the aggregate is over the {} run(s) that completed\n",
            agg.runs
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
            .unwrap_or_else(|| match agg.runs {
                1 => "- (one run)".into(),
                _ => "-".into(),
            }),
    ));
    if let Some(k) = agg.passed {
        let n = crate::app::repeat::judged(rows);
        s.push_str(&match agg.verdict.as_str() {
            "unstable" => format!(
                "verdict UNSTABLE: {k} of {n} runs passed; the disk is near the threshold, do not trust one run\n"
            ),
            v => format!("verdict {}: {k} of {n} runs passed\n", v.to_uppercase()),
        });
        let cut = rows.iter().filter(|r| r.inconclusive).count();
        if cut > 0 {
            s.push_str(&format!(
                "{cut} of {n} runs were cut short with too few fdatasyncs to settle their verdict (counted as not passed): see each run's warning\n"
            ));
        }
    }
    s
}
