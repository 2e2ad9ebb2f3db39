use super::*;
use crate::report::repeat::{summarize, RepeatSummary, ScenarioAcross};

/// A run in which `winner` has clearly fewer stalls than `none` (or, with None, in which
/// nothing beats `none`).
fn run(winner: Option<&str>, none_p99_ms: f64) -> InterfereDoc {
    let quiet = || stalled(2.0, 5.0, 50.0, 0, 0);
    let noisy = || stalled(none_p99_ms, 90.0, 1500.0, 20, 2);
    let mut d = doc(vec![
        baseline(stats(1.0, 2.0, 3.0)),
        scenario("none", noisy(), 7.0, none_p99_ms < 10.0),
        scenario(
            "ionice-idle",
            if winner == Some("ionice-idle") {
                quiet()
            } else {
                noisy()
            },
            7.5,
            true,
        ),
        scenario(
            "scheduler-bfq",
            if winner == Some("scheduler-bfq") {
                quiet()
            } else {
                noisy()
            },
            8.0,
            true,
        ),
    ]);
    d.finish();
    d
}

/// Asserts the verdict of `s` and that its sentence begins with `start`.
fn assert_verdict(s: &RepeatSummary, verdict: &str, start: &str) {
    assert_eq!(s.verdict, verdict, "{}", s.sentence);
    assert!(s.sentence.starts_with(start), "{}", s.sentence);
}

/// Scenario `name` across the runs of `s`.
fn across<'a>(s: &'a RepeatSummary, name: &str) -> &'a ScenarioAcross {
    s.scenarios.iter().find(|x| x.name == name).unwrap()
}

#[test]
fn the_same_winner_every_time_is_stable() {
    let runs = [
        run(Some("ionice-idle"), 6.0),
        run(Some("ionice-idle"), 12.0),
        run(Some("ionice-idle"), 8.0),
    ];
    assert_eq!(
        crate::report::outcome(&runs[0]),
        crate::report::Outcome::Best("ionice-idle".into())
    );
    let s = summarize(&runs);
    assert_eq!(s.runs, 3);
    assert_eq!(s.verdict, "stable");
    assert_eq!(
        s.sentence,
        "ionice-idle had the best worst case in all 3 runs: act on it."
    );
    let none = across(&s, "ostree/none");
    assert_eq!(none.measured, 3);
    assert_eq!(none.passed, 2, "12 ms fails etcd's 10 ms");
    assert_eq!(none.median_p99_ns, Some(8_000_000));
    assert_eq!(
        (none.min_p99_ns, none.max_p99_ns),
        (Some(6_000_000), Some(12_000_000))
    );
    assert_eq!((none.over_heartbeat, none.over_election), (60, 6));
    assert_eq!(none.max_ns, Some(1_500_000_000));
    assert_eq!(s.scenarios[0].name, "baseline");
    let text = crate::report::repeat::render_summary(&s);
    assert!(text.starts_with("across 3 runs:\n"), "{text}");
    assert!(
        text.contains("best worst case by run (none: no mitigation beat it): 1: ionice-idle, 2: ionice-idle, 3: ionice-idle"),
        "{text}"
    );
    assert!(text.contains("STABLE: ionice-idle"), "{text}");
}

#[test]
fn a_winner_that_changes_is_unstable_and_none_holding_is_said_as_such() {
    let s = summarize(&[
        run(Some("ionice-idle"), 6.0),
        run(Some("scheduler-bfq"), 6.0),
        run(None, 6.0),
        run(Some("ionice-idle"), 6.0),
    ]);
    assert_eq!(
        s.winners,
        ["ionice-idle", "scheduler-bfq", "none", "ionice-idle"]
    );
    assert_verdict(
        &s,
        "unstable",
        "The best worst case changed between runs (ionice-idle in 2 of 4, scheduler-bfq in 1 of 4, none in 1 of 4): no mitigation wins every time",
    );
    let s = summarize(&[run(None, 6.0), run(None, 6.0)]);
    assert_verdict(&s, "stable", "No mitigation beat `none` in both runs");
}

/// QA (session 15): no run completed, one run, or runs that ranked nothing were called STABLE
/// ("No mitigation won in any of the 2 runs" of two runs whose writer failed).
#[test]
fn too_few_runs_or_runs_that_rank_nothing_are_inconclusive() {
    let s = summarize(&[]);
    assert_eq!((s.verdict.as_str(), s.runs), ("inconclusive", 0));
    let text = crate::report::repeat::render_summary(&s);
    assert!(text.starts_with("across 0 runs:\n"), "{text}");
    assert!(!text.contains("by run"), "{text}");
    let s = summarize(&[run(Some("ionice-idle"), 6.0)]);
    assert_verdict(&s, "inconclusive", "Only one run completed");
    assert!(crate::report::repeat::render_summary(&s).starts_with("across 1 run:\n"));
    // A writer that failed: nothing is ranked in that run.
    let failed = || {
        let mut d = run(Some("ionice-idle"), 6.0);
        for sc in d.scenarios.iter_mut().skip(1) {
            sc.aggressor.as_mut().unwrap().exit =
                Some(crate::aggressor::command::CommandExit::Code { code: 3 });
        }
        d.finish();
        d
    };
    assert_eq!(
        crate::report::outcome(&failed()),
        crate::report::Outcome::Unranked
    );
    let s = summarize(&[failed(), failed()]);
    assert_eq!(s.winners, ["unranked", "unranked"]);
    assert_verdict(&s, "inconclusive", "No run could rank the mitigations");
    let s = summarize(&[failed(), run(Some("ionice-idle"), 6.0)]);
    assert_verdict(
        &s,
        "inconclusive",
        "1 of 2 runs could not rank the mitigations",
    );
    assert!(
        s.sentence
            .ends_with("the runs concluded unranked in 1 of 2, ionice-idle in 1 of 2."),
        "{}",
        s.sentence
    );
}

/// Winners that differ while every scenario passes without a stall are noise on a quiet disk.
#[test]
fn winners_that_differ_on_a_quiet_disk_are_noise() {
    let quiet = |w: &str| {
        let ok = |max| stalled(2.0, 5.0, max, 0, 0);
        let mut d = doc(vec![
            baseline(stats(1.0, 2.0, 3.0)),
            scenario("none", ok(60.0), 7.0, true),
            scenario(
                "ionice-idle",
                ok(if w == "ionice-idle" { 15.0 } else { 60.0 }),
                7.5,
                true,
            ),
            scenario(
                "scheduler-bfq",
                ok(if w == "scheduler-bfq" { 15.0 } else { 60.0 }),
                8.0,
                true,
            ),
        ]);
        d.finish();
        d
    };
    let runs = [quiet("ionice-idle"), quiet("scheduler-bfq")];
    let s = summarize(&runs);
    // A max of 15 ms against 60 ms is clearly better: each run names its own winner.
    assert_eq!(s.winners, ["ionice-idle", "scheduler-bfq"]);
    assert_eq!(s.verdict, "unstable");
    assert!(
        s.sentence
            .contains("the differences are noise, and no mitigation is needed"),
        "{}",
        s.sentence
    );
}

/// A scenario cut short or not available counts in no run's figures.
#[test]
fn interrupted_and_unavailable_scenarios_are_not_counted() {
    let mut a = run(Some("ionice-idle"), 6.0);
    a.scenarios[2].interrupted = true;
    a.scenarios.push(Scenario::unavailable(
        "ostree/cgroup-latency",
        "cgroup-latency".into(),
        "no v2 io".into(),
    ));
    let s = summarize(&[a, run(Some("ionice-idle"), 6.0)]);
    let idle = across(&s, "ostree/ionice-idle");
    assert_eq!(idle.measured, 1);
    let lat = across(&s, "ostree/cgroup-latency");
    assert_eq!((lat.measured, lat.median_p99_ns), (0, None));
    assert!(crate::report::repeat::render_summary(&s).contains("0 of 0"));
}
