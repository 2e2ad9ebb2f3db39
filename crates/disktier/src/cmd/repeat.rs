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
use crate::app::repeat::{aggregate, p99_of, Aggregate, Figures};
use crate::app::SCHEMA_VERSION;
use crate::exposition::{self, RepeatMetrics, RunMetrics};
use anyhow::bail;
use disktier_engine::result::{RepeatDoc, RepeatRun};
use disktier_engine::RunDoc;
use disktier_units::fmt_ns;

/// The most runs `--repeat` takes.
pub const MAX_REPEAT: u64 = 1000;

/// One finished run: its document (as printed and saved) and the verdict if any.
pub struct OneRun {
    pub doc: RunDoc,
    pub pass: Option<bool>,
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
        runs.push(RepeatRun { doc: r.doc, id });
        if interrupted {
            break;
        }
    }
    let done = runs.len();
    let interrupted = done < n as usize || runs.iter().any(|r| r.doc.interrupted);
    let agg = aggregate(metric, &figs);
    if ctx.json() {
        let doc = RepeatDoc {
            schema_version: SCHEMA_VERSION,
            kind: "repeat".into(),
            group_id: (!ctx.global.no_save).then(|| group.clone()),
            runs: runs.clone(),
            aggregate: agg.clone(),
        };
        // Through a `Value`: keys print sorted, as they always have.
        super::print_json(&serde_json::to_value(&doc)?)?;
    } else if !ctx.prometheus() {
        print!("{}", render(&agg, &figs, &ids));
    }
    if !ctx.global.no_save && !ctx.json() {
        ctx.note(format!(
            "saved {} runs as group {group} (disktier history --group {group})",
            done
        ));
    }
    export(ctx, kind, &runs, &agg, interrupted)?;
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
    if ctx.prometheus() {
        use std::io::Write;
        std::io::stdout().lock().write_all(text.as_bytes())?;
    }
    if let (Some(dir), false) = (&ctx.textfile, interrupted) {
        let path = dir.write(kind, &text)?;
        ctx.note(format_args!("metrics written to {}", path.display()));
    }
    Ok(())
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
