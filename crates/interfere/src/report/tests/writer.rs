//! Writers that did not do their work: what the ranking makes of them.

use super::*;

/// QA: a command killed by a signal it was not sent by the cap (SIGKILL from the OOM killer, a
/// crash) after 40 MiB, in every scenario, was ranked ("Best worst case: scheduler-bfq") and its
/// run passed with exit 0; it did not do its work, as a non-zero exit did not. A writer the cap
/// stopped with a signal is still ranked (its bytes per second are its cost).
#[test]
fn a_writer_killed_by_a_signal_not_the_caps_failed() {
    use crate::aggressor::command::CommandExit;
    let killed = |m: &str, s: DirStats| {
        let mut sc = scenario(m, s, 0.2, true);
        sc.aggressor.as_mut().unwrap().exit = Some(CommandExit::Signal { signal: 9 });
        sc
    };
    let doc = recommended(
        vec![
            baseline(stalled(0.48, 1.0, 2.0, 0, 0)),
            killed("none", stalled(0.9, 3.0, 36.0, 0, 0)),
            killed("scheduler-bfq", stalled(0.5, 1.1, 26.0, 0, 0)),
        ],
        &["The writer failed in none (signal 9), scheduler-bfq (signal 9)"],
        &["Best worst case"],
    );
    assert_eq!(
        doc.writer_failed_everywhere().as_deref(),
        Some("none: signal 9, scheduler-bfq: signal 9")
    );
    // Stopped at the cap: not a failure.
    let mut capped = killed("none", stalled(0.9, 3.0, 36.0, 0, 0));
    capped.aggressor.as_mut().unwrap().capped = true;
    assert!(recommend::writer_doubt(&capped).is_none());
}
