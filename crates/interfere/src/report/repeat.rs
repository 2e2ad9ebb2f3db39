//! `interfere --repeat N`: what N runs of the whole comparison agree on. One run's winner can be
//! the disk's own variation (stalls over a second are rare single events); a mitigation that
//! wins every time can be acted on.
//!
//! Each run is an ordinary [`InterfereDoc`], saved as its own run; this summary is computed
//! from them: per scenario, the median fdatasync p99 with its range, how many runs passed, and
//! the stall counts; per run, the winner the recommendation named ([`winner`]).

use super::{ms, stall_counts, winner, InterfereDoc, ScenarioVerdict};
use serde::{Deserialize, Serialize};

/// One scenario across the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioAcross {
    pub name: String,
    pub mitigation: Option<String>,
    /// Runs in which it was measured to its end.
    pub measured: usize,
    /// Of those, runs in which etcd's p99 was within the limit.
    pub passed: usize,
    pub median_p99_ns: Option<u64>,
    pub min_p99_ns: Option<u64>,
    pub max_p99_ns: Option<u64>,
    /// The largest fdatasync of any run.
    pub max_ns: Option<u64>,
    /// fdatasyncs over etcd's heartbeat interval (100 ms) and election timeout (1 s), added over
    /// the runs.
    pub over_heartbeat: u64,
    pub over_election: u64,
}

/// What the runs agree on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatSummary {
    /// Runs that completed (an interrupted run is not counted).
    pub runs: usize,
    pub scenarios: Vec<ScenarioAcross>,
    /// Each run's winner: the mitigation its recommendation named as the best worst case, or
    /// null when none won.
    pub winners: Vec<Option<String>>,
    /// "stable" when every run named the same winner (or every run named none), "unstable"
    /// otherwise.
    pub verdict: String,
    pub sentence: String,
}

fn median(v: &mut [u64]) -> Option<u64> {
    v.sort_unstable();
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some(((u128::from(v[n / 2 - 1]) + u128::from(v[n / 2])) / 2) as u64),
    }
}

/// The summary of completed runs (the caller leaves out an interrupted one).
pub fn summarize(docs: &[InterfereDoc]) -> RepeatSummary {
    let mut names: Vec<(String, Option<String>)> = Vec::new();
    for d in docs {
        for s in &d.scenarios {
            if !names.iter().any(|(n, _)| *n == s.name) {
                names.push((s.name.clone(), s.mitigation.clone()));
            }
        }
    }
    let scenarios = names
        .into_iter()
        .map(|(name, mitigation)| {
            let runs: Vec<_> = docs
                .iter()
                .filter_map(|d| d.scenarios.iter().find(|s| s.name == name))
                .filter(|s| s.available && s.probe.is_some() && !s.interrupted)
                .collect();
            let mut p99: Vec<u64> = runs.iter().filter_map(|s| s.p(99.0)).collect();
            let (el, hb) = runs
                .iter()
                .map(|s| stall_counts(s))
                .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
            ScenarioAcross {
                measured: runs.len(),
                passed: runs
                    .iter()
                    .filter(|s| s.verdict == ScenarioVerdict::Pass)
                    .count(),
                min_p99_ns: p99.iter().min().copied(),
                max_p99_ns: p99.iter().max().copied(),
                median_p99_ns: median(&mut p99),
                max_ns: runs.iter().filter_map(|s| s.max()).max(),
                over_heartbeat: hb,
                over_election: el,
                name,
                mitigation,
            }
        })
        .collect();
    let winners: Vec<Option<String>> = docs.iter().map(winner).collect();
    let (verdict, sentence) = judge(&winners);
    RepeatSummary {
        runs: docs.len(),
        scenarios,
        winners,
        verdict: verdict.into(),
        sentence,
    }
}

/// "stable" or "unstable", and the sentence a user acts on.
fn judge(winners: &[Option<String>]) -> (&'static str, String) {
    let n = winners.len();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for w in winners {
        let name = w.as_deref().unwrap_or("no winner");
        match counts.iter_mut().find(|(k, _)| *k == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    match counts.as_slice() {
        [] => ("stable", "No run completed: nothing to compare.".into()),
        [(_, _)] if n == 1 => (
            "stable",
            "One run: pass --repeat 3 or more to see whether its winner holds.".into(),
        ),
        [("no winner", _)] => (
            "stable",
            format!("No mitigation won in any of the {n} runs: none improved the worst case over `none` beyond noise."),
        ),
        [(w, _)] => (
            "stable",
            format!("{w} had the best worst case in all {n} runs: act on it."),
        ),
        many => (
            "unstable",
            format!(
                "The winner changed between runs ({}): no mitigation wins every time on this disk; look at the scenarios' stall counts above, or repeat with a longer --duration.",
                many.iter()
                    .map(|(w, c)| format!("{w} in {c} of {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// The summary as text: one row a scenario, each run's winner, the sentence.
pub fn render_summary(s: &RepeatSummary) -> String {
    let mut rows = vec![[
        "scenario".to_string(),
        "p99 median".into(),
        "p99 range".into(),
        "passed".into(),
        "max".into(),
        ">100ms".into(),
        ">1s".into(),
    ]];
    for sc in &s.scenarios {
        rows.push([
            sc.mitigation.clone().unwrap_or_else(|| sc.name.clone()),
            ms(sc.median_p99_ns),
            format!("{} - {}", ms(sc.min_p99_ns), ms(sc.max_p99_ns)),
            format!("{} of {}", sc.passed, sc.measured),
            ms(sc.max_ns),
            sc.over_heartbeat.to_string(),
            sc.over_election.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("across {} runs:\n", s.runs);
    for r in &rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c == 0 {
                line.push_str(&format!("{cell:<w$}", w = widths[c]));
            } else {
                line.push_str(&format!("  {cell:>w$}", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let winners: Vec<String> = s
        .winners
        .iter()
        .enumerate()
        .map(|(i, w)| format!("{}: {}", i + 1, w.as_deref().unwrap_or("no winner")))
        .collect();
    out.push_str(&format!("best worst case by run: {}\n", winners.join(", ")));
    out.push_str(&format!("{}: {}\n", s.verdict.to_uppercase(), s.sentence));
    out
}
