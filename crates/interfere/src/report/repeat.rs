//! `interfere --repeat N`: what N runs of the whole comparison agree on. One run's winner can be
//! the disk's own variation (stalls over a second are rare single events); a mitigation that
//! wins every time can be acted on.
//!
//! Each run is an ordinary [`InterfereDoc`], saved as its own run; this summary is computed
//! from them: per scenario, the median fdatasync p99 with its range, how many runs passed, and
//! the stall counts; per run, what its recommendation concluded ([`outcome`]).

use super::{ms, outcome, stall_counts, InterfereDoc, Outcome, ScenarioVerdict};
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
    /// What each run's recommendation concluded: the mitigation it named as the best worst
    /// case, "none" when no mitigation beat `none`, "unranked" when it could rank nothing.
    pub winners: Vec<String>,
    /// "stable" when every run concluded the same; "unstable" when runs that ranked concluded
    /// differently; "inconclusive" when fewer than two runs completed or a run ranked nothing.
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
    let scenarios: Vec<ScenarioAcross> = names
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
                .fold((0u64, 0u64), |(a, b), (c, d)| {
                    (a.saturating_add(c), b.saturating_add(d))
                });
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
    let outcomes: Vec<Outcome> = docs.iter().map(outcome).collect();
    let (verdict, sentence) = judge(&outcomes, &scenarios);
    let winners = outcomes.iter().map(|o| o.label().to_string()).collect();
    RepeatSummary {
        runs: docs.len(),
        scenarios,
        winners,
        verdict: verdict.into(),
        sentence,
    }
}

/// "all 3 runs", "both runs".
fn all(n: usize) -> String {
    if n == 2 {
        "both runs".into()
    } else {
        format!("all {n} runs")
    }
}

/// The verdict ("stable", "unstable", "inconclusive") and the sentence a user acts on.
fn judge(outcomes: &[Outcome], scenarios: &[ScenarioAcross]) -> (&'static str, String) {
    let n = outcomes.len();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for o in outcomes {
        match counts.iter_mut().find(|(k, _)| *k == o.label()) {
            Some((_, c)) => *c += 1,
            None => counts.push((o.label(), 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let listed = |c: &[(&str, usize)]| {
        c.iter()
            .map(|(w, k)| format!("{w} in {k} of {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unranked = outcomes.iter().filter(|o| **o == Outcome::Unranked).count();
    // Every scenario of every run within etcd's limit and without a fsync over 100 ms: the
    // winners then differ by maxima within the noise of a quiet disk.
    let quiet = scenarios
        .iter()
        .all(|s| s.passed == s.measured && s.over_heartbeat == 0);
    match counts.as_slice() {
        [] => ("inconclusive", "No run completed: nothing to compare.".into()),
        _ if n == 1 => (
            "inconclusive",
            "Only one run completed: whether its conclusion holds takes at least two (pass --repeat 3 or more, and let them run).".into(),
        ),
        _ if unranked == n => (
            "inconclusive",
            "No run could rank the mitigations: each run's recommendation says why (`disktier show ID`).".into(),
        ),
        _ if unranked > 0 => (
            "inconclusive",
            format!(
                "{unranked} of {n} runs could not rank the mitigations (each run's recommendation says why: `disktier show ID`); the runs concluded {}.",
                listed(&counts)
            ),
        ),
        [("none", _)] => (
            "stable",
            format!("No mitigation beat `none` in {}: none improved the worst case beyond noise.", all(n)),
        ),
        [(w, _)] => (
            "stable",
            format!("{w} had the best worst case in {}: act on it.", all(n)),
        ),
        many if quiet => (
            "unstable",
            format!(
                "The best worst case changed between runs ({}), but every scenario of every run kept etcd's p99 within its limit with no fsync over 100 ms: the differences are noise, and no mitigation is needed on this disk.",
                listed(many)
            ),
        ),
        many => (
            "unstable",
            format!(
                "The best worst case changed between runs ({}): no mitigation wins every time on this disk; compare the scenarios' stall counts and maxima above, or repeat with a longer --duration.",
                listed(many)
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
    let mut out = format!(
        "across {} run{}:\n",
        s.runs,
        if s.runs == 1 { "" } else { "s" }
    );
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
        .map(|(i, w)| format!("{}: {w}", i + 1))
        .collect();
    if !winners.is_empty() {
        out.push_str(&format!(
            "best worst case by run (none: no mitigation beat it): {}\n",
            winners.join(", ")
        ));
    }
    out.push_str(&format!("{}: {}\n", s.verdict.to_uppercase(), s.sentence));
    out
}
