//! The recommendation in words: the best mitigation by the ranking key, and what it costs.

use super::*;

/// "3 over 100 ms, 0 over 1000 ms" for a scenario.
fn stall_words(s: &Scenario) -> String {
    let (el, hb) = stall_counts(s);
    format!(
        "{} over 100 ms, {el} over 1 s",
        disktier_engine::verdict::count_noun(hb as f64, "fsync", "fsyncs")
    )
}

/// Bytes a second the scenario's writer wrote (0 without one).
fn writer_rate(s: &Scenario) -> f64 {
    s.aggressor
        .as_ref()
        .map_or(0.0, |a| a.bytes as f64 / a.seconds.max(1e-3))
}

/// How much the mitigation of `b` slowed the writer against `n` (`none`), and the words for it.
/// Writers that ran to the end wrote the same bytes, so their times compare; a writer stopped
/// at the cap did not, and then its time is the cap's, not its cost (QA: two capped commands
/// read "the aggressor took 5.0 s instead of 5.0 s (1.0x)" while one wrote 100 MiB and the other
/// 14.40 GiB): the cost is then the ratio of the bytes written per second.
fn writer_cost(b: &Scenario, n: &Scenario) -> (f64, String) {
    let (Some(ba), Some(na)) = (b.aggressor.as_ref(), n.aggressor.as_ref()) else {
        return (1.0, "the aggressor's time is not known".into());
    };
    if (ba.capped || na.capped) && ba.bytes > 0 && na.bytes > 0 {
        let slow = writer_rate(n) / writer_rate(b).max(1e-9);
        let capped = |a: &AggressorResult| {
            if a.capped {
                " (stopped at the cap)"
            } else {
                ""
            }
        };
        return (
            slow,
            format!(
                "the aggressor wrote {} in {}{} instead of {} in {}{} ({slow:.1}x slower)",
                bytes(ba.bytes),
                secs(ba.seconds),
                capped(ba),
                bytes(na.bytes),
                secs(na.seconds),
                capped(na)
            ),
        );
    }
    let slow = ba.seconds / na.seconds.max(1e-3);
    (
        slow,
        format!(
            "the aggressor took {} instead of {} ({slow:.1}x){}",
            secs(ba.seconds),
            secs(na.seconds),
            if ba.capped {
                ", and was stopped at the cap before finishing"
            } else {
                ""
            }
        ),
    )
}

/// The recommendation in words.
pub fn recommend(doc: &InterfereDoc) -> String {
    let threshold = fmt_ns(doc.threshold_ns as f64);
    let Some(base) = doc.scenarios.iter().find(|s| s.name == "baseline") else {
        return "No baseline was measured (the run was interrupted): no recommendation.".into();
    };
    let mut w = Vec::new();
    let cut: Vec<&str> = doc
        .scenarios
        .iter()
        .filter(|s| s.interrupted)
        .map(|s| s.name.as_str())
        .collect();
    if !cut.is_empty() {
        w.push(format!(
            "The run was interrupted: {} has partial figures and is not compared.",
            cut.join(", ")
        ));
    }
    w.push(format!(
        "Alone, the probe's fdatasync p99 is {} (etcd wants under {threshold}: {}), p99.9 {}, max {}, at {} IOPS.",
        ms(base.p(99.0)),
        base.verdict.name(),
        ms(base.p(99.9)),
        ms(base.max()),
        base.probe_iops.map(|i| format!("{i:.0}")).unwrap_or("-".into())
    ));
    let base_fails = base.verdict == ScenarioVerdict::Fail;
    if base_fails {
        w.push(format!(
            "The disk fails etcd's limit with no writer beside it: no mitigation of a writer can fix that. Put etcd on a faster disk (`disktier check etcd DIR` on the candidates, `disktier plan` for a volume that meets {threshold})."
        ));
    }
    let Ranked {
        measured,
        raw_none: none,
        sound_none,
        candidates,
        best,
        class_noise,
    } = ranked(doc, base);
    if let Some(n) = none {
        let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if b > 0 => format!("{:.1}x", a as f64 / b as f64),
            _ => "-".into(),
        };
        w.push(format!(
            "With the {} aggressor and no mitigation: p99 {} ({}), p99.9 {} ({} the baseline), max {}, IOPS {}; the aggressor wrote {} in {}.",
            doc.aggressor_kind,
            ms(n.p(99.0)),
            n.verdict.name(),
            ms(n.p(99.9)),
            ratio(tail(n), tail(base)),
            ms(n.max()),
            n.probe_iops.map(|i| format!("{i:.0}")).unwrap_or("-".into()),
            bytes(n.aggressor.as_ref().map(|a| a.bytes).unwrap_or(0)),
            secs(n.aggressor.as_ref().map(|a| a.seconds).unwrap_or(0.0))
        ));
    }
    if let Some(n) = none {
        let (el, hb) = stall_counts(n);
        let st = disktier_engine::Stalls {
            heartbeat_ns: ETCD_HEARTBEAT_NS,
            over_heartbeat: hb,
            election_ns: ETCD_ELECTION_TIMEOUT_NS,
            over_election: el,
        };
        w.push(format!(
            "Next to the aggressor with no mitigation, the longest fdatasync took {}; {}{}.",
            ms(n.max()),
            disktier_engine::verdict::stall_sentence("fsyncs", &st),
            if n.probe.as_ref().is_some_and(|p| p.stalls.is_none()) {
                " (counts at least, from the max: this result predates exact counts)"
            } else {
                ""
            }
        ));
    }
    w.extend(blocked_writes(&measured));
    let none = sound_none;
    match (best, none) {
        // Only a clear win is one: a max or p99.9 within noise of none's is not.
        (Some(b), Some(n)) if clearly_better(b, n) => {
            let (slow, cost) = writer_cost(b, n);
            // Ranked first by etcd's verdict or its stall counts, a mitigation can win with a
            // longer single fdatasync than none's: not a better worst case (QA: "Best worst
            // case" at max 37.9 ms against none's 14.3 ms).
            let heading = if b.max() > n.max() {
                "Best (by etcd's verdict and stall counts; its longest fdatasync is longer than with no mitigation)"
            } else {
                "Best worst case"
            };
            let mut s = format!(
                "{heading}: {} ({} instead of {}; max {} instead of {}, p99.9 {} instead of {}, p99 {}: {}); {cost}.",
                b.mitigation.as_deref().unwrap_or("?"),
                stall_words(b),
                stall_words(n),
                ms(b.max()),
                ms(n.max()),
                ms(tail(b)),
                ms(tail(n)),
                ms(b.p(99.0)),
                b.verdict.name(),
            );
            if slow >= 3.0 {
                s.push_str(" That is a trade-off: the bulk writer (an OS update) runs that many times longer.");
                // A cheaper one with no more stalls and a max within 1.5x of the best, if any.
                if let Some(c) = candidates
                    .iter()
                    .filter(|c| {
                        let (ce, ch) = stall_counts(c);
                        let (be, bh) = stall_counts(b);
                        ce <= be
                            && ch <= bh
                            && c.max().zip(b.max()).is_some_and(|(m, bm)| m as f64 <= bm as f64 * 1.5)
                            && writer_rate(c) > writer_rate(b) * 2.0
                    })
                    .max_by(|x, y| writer_rate(x).total_cmp(&writer_rate(y)))
                {
                    s.push_str(&format!(
                        " {} comes close (max {}, {}) with the aggressor {}.",
                        c.mitigation.as_deref().unwrap_or("?"),
                        ms(c.max()),
                        stall_words(c),
                        match c.aggressor.as_ref() {
                            Some(a) if a.capped => format!(
                                "writing {} in {} (stopped at the cap)",
                                bytes(a.bytes),
                                secs(a.seconds)
                            ),
                            a => format!("taking {}", secs(a.map_or(0.0, |a| a.seconds))),
                        }
                    ));
                }
            }
            w.push(s);
            // Only where none's worst case is harmless to etcd: no fdatasync over the heartbeat
            // interval, as --repeat's "no mitigation is needed" (QA on dt-s23: it followed
            // "Best worst case: scheduler-bfq+ionice-idle (0 fsyncs over 100 ms ... instead of
            // 6 ...)", none's p99.9 1.7x the baseline's).
            if !base_fails
                && n.verdict == ScenarioVerdict::Pass
                && stall_counts(n) == (0, 0)
                && tail(n).zip(tail(base)).is_some_and(|(t, bt)| t <= bt.saturating_mul(2))
            {
                w.push("The aggressor barely moves the tail here: no mitigation is needed on this disk.".into());
            }
        }
        (Some(b), Some(n)) => w.push(format!(
            "No mitigation improved the worst case over none ({}, max {}, p99.9 {}){}{}.",
            stall_words(n),
            ms(n.max()),
            ms(tail(n)),
            if rank(b) < rank(n) {
                format!(
                    "; the best, {} (max {}, p99.9 {}), is within the {:.0} % of noise",
                    b.mitigation.as_deref().unwrap_or("?"),
                    ms(b.max()),
                    ms(tail(b)),
                    NOISE * 100.0
                )
            } else {
                String::new()
            },
            if base_fails {
                ": the disk itself is too slow for etcd, with or without the writer"
            } else if n.verdict == ScenarioVerdict::Pass {
                ", and etcd's p99 stays within its limit: leave the node as it is"
            } else {
                ": move etcd to its own disk"
            }
        )),
        (None, Some(_)) if base_fails => {}
        (None, Some(n)) if candidates.len() < measured.len().saturating_sub(1) => w.push(format!(
            "No mitigation could be ranked against none (etcd {} with none): see below why this run cannot vouch for them.",
            if n.verdict == ScenarioVerdict::Pass { "passes" } else { "fails" }
        )),
        (None, Some(n)) => w.push(format!(
            "Only `none` ran with the aggressor: etcd {} with it. Add mitigations to compare (e.g. --mitigations none,ionice-idle,scheduler-bfq,writer-per-object-fsync).",
            if n.verdict == ScenarioVerdict::Pass { "passes" } else { "fails" }
        )),
        (Some(b), None) if measured.iter().any(|s| s.mitigation.as_deref() == Some("none")) => {
            w.push(format!(
                "Best worst case among the mitigations: {} ({}, max {}); `none` cannot serve as the reference in this run (below), so what it gains is not known.",
                b.mitigation.as_deref().unwrap_or("?"),
                stall_words(b),
                ms(b.max())
            ))
        }
        (Some(b), None) => w.push(format!(
            "Best worst case among the mitigations: {} ({}, max {}); add `none` to see what it gains.",
            b.mitigation.as_deref().unwrap_or("?"),
            stall_words(b),
            ms(b.max())
        )),
        (None, None) if measured.len() == 1 && measured[0].mitigation.as_deref() == Some("none") => {
            w.push(
                "Only `none` ran with the aggressor, and this run cannot vouch for it: see below why."
                    .into(),
            )
        }
        (None, None) if !measured.is_empty() => w.push(
            "No scenario could be ranked: see below why this run cannot vouch for them.".into(),
        ),
        (None, None) => {}
    }
    let worse: Vec<String> = candidates
        .iter()
        .filter(|c| {
            none.is_some_and(|n| {
                // Worse overall: clearly more stalls than none, or as many (within noise)
                // and a clearly longer p99.9 (never merely a longer p99.9 bought with fewer
                // stalls).
                let (ce, ch) = stall_counts(c);
                let (ne, nh) = stall_counts(n);
                let longer = tail(c)
                    .zip(tail(n))
                    .is_some_and(|(t, nt)| t as f64 > nt as f64 * 1.2);
                let (el, hb) = (clearly_fewer(ne, ce), clearly_fewer(nh, ch));
                rank(c) > rank(n)
                    && (el == Some(true)
                        || (el.is_none() && hb == Some(true))
                        || (el.is_none() && hb.is_none() && longer))
            })
        })
        .map(|c| c.mitigation.clone().unwrap_or_default())
        .collect();
    if !worse.is_empty() {
        w.push(format!("Worse than no mitigation: {}.", worse.join(", ")));
    }
    w.extend(class_noise_sentence(doc, &class_noise));
    w.extend(doubts(doc, base, &measured));
    if measured.iter().any(|s| stalls(s)) {
        w.push("Stalls over a second are rare single events: before acting on one run, run it again with --repeat 3 and a longer --duration and see which mitigations avoid them every time.".into());
    }
    let unavailable: Vec<String> = doc
        .scenarios
        .iter()
        .filter(|s| !s.available)
        .map(|s| s.mitigation.clone().unwrap_or_default())
        .collect();
    if !unavailable.is_empty() {
        w.push(format!(
            "Not measured (unavailable here, reasons above): {}.",
            unavailable.join(", ")
        ));
    }
    w.push("A fast local disk is no guide to a cloud volume (the OSTree-vs-etcd issue's fixes did not transfer to Azure): run this on the node's real disk.".into());
    w.join("\n")
}

/// The scenarios of a run as the recommendation weighs them.
struct Ranked<'a> {
    /// Measured beside the writer, not cut short by a signal (partial figures are not compared).
    measured: Vec<&'a Scenario>,
    /// `none` as measured.
    raw_none: Option<&'a Scenario>,
    /// `none` when the run can vouch for it (see [`doubt`]): the reference to rank against.
    sound_none: Option<&'a Scenario>,
    /// The mitigations the run can vouch for.
    candidates: Vec<&'a Scenario>,
    /// The candidate with the best worst case (by [`rank`]).
    best: Option<&'a Scenario>,
    /// Mitigations that only change the writer's I/O class under a scheduler that ignores I/O
    /// priorities (see [`class_is_noise`]): shown, neither best nor worse.
    class_noise: Vec<&'a Scenario>,
}

/// Whether scenario `s` of `doc` is only an I/O class change (`ionice-idle`, `ionice-be7`)
/// under a scheduler that ignores I/O priorities: `none` and `kyber` (docs/interfere.md; QA saw
/// "Best worst case: ionice-idle" beside the note that the active scheduler, none, ignores
/// it). Nothing else differs from `none` then, so its difference from `none` is noise, never a
/// win or a loss. Such a scenario runs under the scheduler the run found (it switches none).
fn class_is_noise(doc: &InterfereDoc, s: &Scenario) -> bool {
    let ignores = matches!(doc.scheduler_before.as_deref(), Some("none" | "kyber"));
    let class_only = s.mitigation.as_deref().is_some_and(|m| {
        m.split('+')
            .all(|p| matches!(p, "ionice-idle" | "ionice-be7"))
    });
    ignores && class_only
}

/// The sentence on the scenarios [`class_is_noise`] keeps out of the ranking.
fn class_noise_sentence(doc: &InterfereDoc, listed: &[&Scenario]) -> Option<String> {
    (!listed.is_empty()).then(|| {
        format!(
            "The active scheduler, {}, ignores I/O priorities, so {} changed nothing the disk sees: {} from none is noise, and {} not ranked (switch to bfq or mq-deadline, e.g. `scheduler-bfq+ionice-idle`, to measure an I/O class).",
            doc.scheduler_before.as_deref().unwrap_or("?"),
            listed
                .iter()
                .map(|s| format!(
                    "{} (max {})",
                    s.mitigation.as_deref().unwrap_or_default(),
                    ms(s.max())
                ))
                .collect::<Vec<_>>()
                .join(", "),
            if listed.len() == 1 { "its difference" } else { "their difference" },
            if listed.len() == 1 { "it is" } else { "they are" }
        )
    })
}

fn ranked<'a>(doc: &'a InterfereDoc, base: &Scenario) -> Ranked<'a> {
    let measured: Vec<&Scenario> = doc.scenarios.iter().filter(|s| s.beside_writer()).collect();
    let raw_none = measured
        .iter()
        .find(|s| s.mitigation.as_deref() == Some("none"))
        .copied();
    let sound_none = raw_none.filter(|n| doubt(base, n).is_none());
    let (class_noise, candidates): (Vec<&Scenario>, Vec<&Scenario>) = measured
        .iter()
        .filter(|s| s.mitigation.as_deref() != Some("none") && doubt(base, s).is_none())
        .copied()
        .partition(|s| class_is_noise(doc, s));
    let best = candidates
        .iter()
        .filter(|s| tail(s).is_some())
        .min_by_key(|s| rank(s))
        .copied();
    Ranked {
        measured,
        raw_none,
        sound_none,
        candidates,
        best,
        class_noise,
    }
}

/// The scenarios whose probe's write() itself blocked past etcd's heartbeat interval (QA: a
/// frozen filesystem stopped the probe's writes for 0.5 s while every fdatasync stayed under
/// 5 ms, and the run said "no missed heartbeats"). The ranking counts fsyncs, as etcd's
/// `wal_fsync_duration_seconds` does; this says what those counts leave out.
fn blocked_writes(measured: &[&Scenario]) -> Option<String> {
    let blocked: Vec<String> = measured
        .iter()
        .filter_map(|s| {
            let max = s.probe_write_max_ns.filter(|&m| m > ETCD_HEARTBEAT_NS)?;
            Some(format!(
                "{} ({})",
                s.mitigation.as_deref().unwrap_or_default(),
                fmt_ns(max as f64)
            ))
        })
        .collect();
    (!blocked.is_empty()).then(|| {
        format!(
            "The probe's writes themselves (each before its fdatasync) blocked for longer than etcd's heartbeat interval ({}) in {}: etcd's appends wait for them as they wait for the fsync, so heartbeats can be missed there although the fsync counts do not show it.",
            fmt_ns(ETCD_HEARTBEAT_NS as f64),
            blocked.join(", ")
        )
    })
}

/// What a run's recommendation concludes about the mitigations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// This mitigation had the best worst case, clearly better than a sound `none`.
    Best(String),
    /// The mitigations were ranked against a sound `none`, and none was clearly better.
    NoneHolds,
    /// Nothing could be ranked: no sound `none` to rank against, no mitigation the run can
    /// vouch for, or no baseline (the recommendation says which).
    Unranked,
}

impl Outcome {
    /// As the summary lists it: the mitigation, "none", or "unranked".
    pub fn label(&self) -> &str {
        match self {
            Outcome::Best(m) => m,
            Outcome::NoneHolds => "none",
            Outcome::Unranked => "unranked",
        }
    }

    /// As the line of one run says it.
    pub fn sentence(&self) -> String {
        match self {
            Outcome::Best(m) => format!("best worst case: {m}"),
            Outcome::NoneHolds => "no mitigation beat `none`".into(),
            Outcome::Unranked => "not ranked (this run cannot vouch for its scenarios)".into(),
        }
    }
}

/// What a run's recommendation concludes: the best ranked mitigation when it is clearly better
/// than a sound `none` (beyond noise), `none` holding when it is not, or nothing ranked.
pub fn outcome(doc: &InterfereDoc) -> Outcome {
    let Some(base) = doc.scenarios.iter().find(|s| s.name == "baseline") else {
        return Outcome::Unranked;
    };
    let r = ranked(doc, base);
    match (r.best, r.sound_none) {
        (Some(b), Some(n)) if clearly_better(b, n) => {
            Outcome::Best(b.mitigation.clone().unwrap_or_default())
        }
        (Some(_), Some(_)) => Outcome::NoneHolds,
        _ => Outcome::Unranked,
    }
}

/// A p99 beside the writer this much shorter than the probe's alone is the disk's own
/// variation, not the writer's effect: a writer never speeds up the fsyncs beside it.
const FASTER_THAN_ALONE: f64 = 0.75;

/// A writer that finished in less than this share of the probe's window left most of it to
/// the probe alone.
const SHORT_WRITER: f64 = 0.5;

/// Why this run cannot vouch for scenario `s` (QA, the OSTree-vs-etcd recipe's procedure on a
/// loop device), if it cannot: its writer failed or wrote nothing, or its probe did better
/// beside the writer than alone. Such a scenario is shown but not ranked.
///
/// A writer that finished early is not among them: every scenario writes the same bytes in the
/// same window, so its stall counts and maximum, which rank it, still cover the whole write
/// (its p99 is diluted, which [`doubts`] says).
fn doubt(base: &Scenario, s: &Scenario) -> Option<Doubt> {
    if let Some(d) = writer_doubt(s) {
        return Some(d);
    }
    let faster = s
        .p(99.0)
        .zip(base.p(99.0))
        .is_some_and(|(p, b)| (p as f64) < b as f64 * FASTER_THAN_ALONE);
    faster.then_some(Doubt::FasterThanAlone)
}

/// Whether scenario `s`'s writer did not do its I/O: it failed (a non-zero exit, or a signal
/// the cap did not send: the OOM killer's SIGKILL, a crash), or wrote nothing. QA: a command
/// killed by SIGKILL after 40 MiB in every scenario was ranked ("Best worst case:
/// scheduler-bfq") as if it had done its work.
pub(super) fn writer_doubt(s: &Scenario) -> Option<Doubt> {
    use crate::aggressor::command::CommandExit;
    let a = s.aggressor.as_ref()?;
    match a.exit {
        Some(e @ CommandExit::Code { code }) if code != 0 => Some(Doubt::Failed(e)),
        Some(e @ CommandExit::Signal { .. }) if !a.capped => Some(Doubt::Failed(e)),
        _ => (a.bytes == 0).then_some(Doubt::WroteNothing),
    }
}

pub(super) enum Doubt {
    Failed(crate::aggressor::command::CommandExit),
    WroteNothing,
    FasterThanAlone,
}

impl Doubt {
    /// Its place in the order the sentences are written in.
    fn kind(&self) -> usize {
        match self {
            Doubt::Failed(_) => 0,
            Doubt::WroteNothing => 1,
            Doubt::FasterThanAlone => 2,
        }
    }

    /// What is shown beside the scenario's name.
    pub(super) fn detail(&self, s: &Scenario) -> String {
        match self {
            Doubt::Failed(crate::aggressor::command::CommandExit::Code { code }) => {
                format!("exit {code}")
            }
            Doubt::Failed(crate::aggressor::command::CommandExit::Signal { signal }) => {
                format!("signal {signal}")
            }
            Doubt::WroteNothing => "0 B".into(),
            Doubt::FasterThanAlone => format!("p99 {}", ms(s.p(99.0))),
        }
    }
}

/// The sentence for doubt kind `kind` about the scenarios `listed`.
fn doubt_sentence(kind: usize, listed: &str, base: &Scenario) -> String {
    match kind {
        0 => format!("The writer failed in {listed}: its I/O is not what the command does when it succeeds, so these scenarios are not ranked."),
        1 => format!("The writer wrote nothing in {listed}: the probe had the disk to itself, so these scenarios are not ranked."),
        _ => format!(
            "Beside the writer, the probe did better than alone (p99 {}) in {listed}: this disk's own variation is larger than the writer's effect in this run, so these scenarios are not ranked. Repeat with a longer --duration.",
            ms(base.p(99.0))
        ),
    }
}

/// The doubts of this run, one sentence a kind, naming the scenarios.
fn doubts(doc: &InterfereDoc, base: &Scenario, measured: &[&Scenario]) -> Vec<String> {
    let mut by_kind: [Vec<String>; 3] = Default::default();
    for s in measured {
        if let Some(d) = doubt(base, s) {
            by_kind[d.kind()].push(format!(
                "{} ({})",
                s.mitigation.as_deref().unwrap_or_default(),
                d.detail(s)
            ));
        }
    }
    let mut w: Vec<String> = by_kind
        .iter()
        .enumerate()
        .filter(|(_, listed)| !listed.is_empty())
        .map(|(k, listed)| doubt_sentence(k, &listed.join(", "), base))
        .collect();
    // Writers done early: still ranked (see `doubt`), but their p99s say little.
    let short: Vec<String> = measured
        .iter()
        .filter_map(|s| {
            let a = s.aggressor.as_ref()?;
            (!a.capped && a.seconds < doc.duration_s * SHORT_WRITER).then(|| {
                format!(
                    "{} ({})",
                    s.mitigation.as_deref().unwrap_or_default(),
                    secs(a.seconds)
                )
            })
        })
        .collect();
    if !short.is_empty() {
        w.push(format!(
            "The writer finished early in the {:.0} s probe window in {}: the rest of that window measured the probe with at most the writer's leftover writeback beside it, which dilutes those p99s (the stall counts and maxima that rank the scenarios still cover the whole write). {} so that the writer runs through the window.",
            doc.duration_s,
            short.join(", "),
            if doc.aggressor_command.is_some() {
                "Give a command that runs longer"
            } else {
                "Raise --aggressor-size"
            }
        ));
    }
    w
}
