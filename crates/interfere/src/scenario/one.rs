//! One scenario: the mitigation applied for real (journalled first, read back), the probe
//! run beside the aggressor, and everything undone.

use super::context::{combo_unavailable, Ctx};
use super::probe::{run_probe, settle};
use super::{Applied, V1_WEIGHT, V2_WEIGHT};
use crate::aggressor::process::Aggressor;
use crate::aggressor::AggressorSpec;
use crate::cgroup::{self, Version};
use crate::error::{InterfereError, Result};
use crate::ioprio::{self, IoPrio};
use crate::journal::{self, Change, Journal, CGROUP_PREFIX};
use crate::mitigation::{Combo, Mitigation};
use crate::report::{AggressorResult, Scenario};
use crate::scheduler::{self, Device};
use std::path::Path;
use std::time::Duration;

pub(super) fn run_one(cx: &mut Ctx, combo: &Combo) -> Result<Scenario> {
    let name = format!("{}/{}", cx.cfg.aggressor.name(), combo.name());
    if let Some(why) = combo_unavailable(cx, combo) {
        (cx.cfg.notes)(&format!("  unavailable: {why}"));
        return Ok(Scenario::unavailable(&name, combo.name(), why));
    }
    let has = |m: Mitigation| combo.has(m);
    let mut applied: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut undo_ids: Vec<u64> = Vec::new();

    // The scheduler first: it must be in place before any I/O of the scenario.
    let want_sched = if has(Mitigation::SchedulerBfq) {
        Some("bfq")
    } else if has(Mitigation::SchedulerMqDeadline) {
        Some("mq-deadline")
    } else if has(Mitigation::CgroupWeight)
        && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
    {
        Some("bfq")
    } else {
        None
    };
    let result = (|| -> Result<Scenario> {
        if let Some(s) = want_sched {
            let switched = switch_scheduler(cx, s, &mut applied, &mut undo_ids)?;
            if switched && has(Mitigation::CgroupWeight) && !has(Mitigation::SchedulerBfq) {
                notes.push("cgroup v1 weights act only under bfq: the scheduler was switched to bfq for this scenario".into());
            }
        }
        let active = cx
            .sched_file
            .as_ref()
            .and_then(|f| scheduler::read(f).ok())
            .map(|s| s.active);
        if has(Mitigation::IoniceIdle) || has(Mitigation::IoniceBe7) {
            match active.as_deref() {
                Some("none") | Some("kyber") => notes.push(format!(
                    "the active scheduler is {}, which ignores I/O priorities: expect no effect (the OSTree-vs-etcd issue, machine-config-operator #1897, saw the same under none)",
                    active.as_deref().unwrap_or("?")
                )),
                _ => {}
            }
            notes.push("buffered writes reach the disk from the kernel's flusher threads, which do not carry the writer's I/O class; only its fsync-driven and direct writes do".into());
        }
        if (has(Mitigation::CgroupThrottle) || has(Mitigation::CgroupWeight))
            && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
            && cx.cfg.aggressor.has_writer_policy()
        {
            notes.push("cgroup v1 charges background writeback to the root group (blkio-controller.rst): only the writeback the aggressor's own fsyncs issue is limited".into());
        }

        if has(Mitigation::WriterNoFsync) {
            notes.push("without fsync the writer ends with data still dirty in the page cache (up to vm.dirty_ratio of RAM): its time excludes that writeback, and whatever is still unwritten when the probe ends is never counted (the scratch files are deleted)".into());
        }
        // The aggressor process, waiting for `go`.
        let adir = cx.work.join(format!("aggressor-{}", combo.name()));
        std::fs::create_dir(&adir).map_err(|e| InterfereError::io(&adir, e))?;
        let spec = AggressorSpec {
            kind: cx.cfg.aggressor,
            dir: adir.clone(),
            size: cx.cfg.aggressor_size,
            policy: combo.writer_policy(),
            seed: 0x0057_2ee5,
            command: cx.cfg.aggressor_cmd.clone(),
        };
        let mut launch = (cx.cfg.launcher)(&spec);
        let group = spec.command.is_some();
        if group {
            // The user's command and all it starts share this group, so that every way out
            // (the cap, an error, Ctrl-C, a restore after SIGKILL) can stop them together.
            std::os::unix::process::CommandExt::process_group(&mut launch, 0);
        }
        let mut agg = Aggressor::spawn(launch)?;
        let start_time = journal::process_start_time(agg.pid).unwrap_or(0);
        let proc_id = cx.journal.record(Change::Process {
            pid: agg.pid,
            start_time,
            group,
        })?;
        if spec.policy != crate::mitigation::WriterPolicy::SyncfsAtEnd {
            applied.push(format!("aggressor writer policy: {}", spec.policy.name()));
        }

        // Cgroups and I/O class on the aggressor, each read back.
        // A combination applies each of its parts: first the I/O class, then the cgroup.
        let io_class = combo
            .parts()
            .iter()
            .copied()
            .find(|m| matches!(m, Mitigation::IoniceIdle | Mitigation::IoniceBe7));
        let group = combo.parts().iter().copied().find(|m| {
            matches!(
                m,
                Mitigation::CgroupWeight | Mitigation::CgroupThrottle | Mitigation::CgroupLatency
            )
        });
        if let Some(m) = io_class {
            {
                let p = if m == Mitigation::IoniceIdle {
                    IoPrio::Idle
                } else {
                    IoPrio::BestEffort(7)
                };
                ioprio::set_process(agg.pid, p)?;
                let got = ioprio::get_process(agg.pid)?;
                if let Some((tid, other)) = got.iter().find(|(_, g)| *g != p) {
                    return Err(InterfereError::NotApplied {
                        file: format!("ioprio of thread {tid}").into(),
                        wanted: p.to_string(),
                        got: other.to_string(),
                    });
                }
                applied.push(format!("ioprio_get({}) = {p}", agg.pid));
            }
        }
        match group {
            Some(m @ (Mitigation::CgroupWeight | Mitigation::CgroupThrottle)) => {
                let (ver, root) = cx.cgroups.preferred().map_err(InterfereError::BadInput)?;
                let dev = device(&cx.device)?;
                let gname = format!("{CGROUP_PREFIX}{}-aggressor", std::process::id());
                let gpath = root.join(&gname);
                undo_ids.push(cx.journal.record(Change::Cgroup {
                    path: gpath.clone(),
                })?);
                if ver == Version::V2 {
                    enable_io_subtree(&mut cx.journal, &root, &mut undo_ids)?;
                }
                let g = cgroup::Group::create(&root, &gname, ver)?;
                if m == Mitigation::CgroupWeight {
                    let w = if ver == Version::V1 {
                        V1_WEIGHT
                    } else {
                        V2_WEIGHT
                    };
                    let (file, got) = g.set_weight(w)?;
                    applied.push(format!("{}/{file} = {got}", g.path.display()));
                    if ver == Version::V2 {
                        notes.push(
                            "io.weight is enforced only with iocost (io.cost.qos) or bfq".into(),
                        );
                    }
                } else {
                    for (file, got) in g.set_write_throttle(
                        &dev.maj_min,
                        cx.cfg.throttle_bps,
                        cx.cfg.throttle_iops,
                    )? {
                        applied.push(format!("{}/{file} = {got}", g.path.display()));
                    }
                }
                g.add_process(agg.pid)?;
                applied.push(format!(
                    "{}/cgroup.procs holds {}",
                    g.path.display(),
                    agg.pid
                ));
            }
            Some(Mitigation::CgroupLatency) => {
                // Only reached with a cgroup v2 io controller (see `unavailable`).
                let (_, root) = cx.cgroups.preferred().map_err(InterfereError::BadInput)?;
                let dev = device(&cx.device)?;
                let top_name = format!("{CGROUP_PREFIX}{}", std::process::id());
                let top = root.join(&top_name);
                undo_ids.push(cx.journal.record(Change::Cgroup { path: top.clone() })?);
                enable_io_subtree(&mut cx.journal, &root, &mut undo_ids)?;
                let t = cgroup::Group::create(&root, &top_name, Version::V2)?;
                cgroup::enable_io_subtree(&t.path)?;
                let probe_g = cgroup::Group::create(&t.path, "probe", Version::V2)?;
                let agg_g = cgroup::Group::create(&t.path, "aggressor", Version::V2)?;
                let target_us = cx.cfg.threshold.as_micros() as u64;
                let (file, got) = probe_g.set_latency_target(&dev.maj_min, target_us)?;
                applied.push(format!("{}/{file} = {got}", probe_g.path.display()));
                agg_g.add_process(agg.pid)?;
                // The probe runs in this process: move it, and move it back afterwards
                // (journaled first, so every way out moves it back before the group goes).
                let me = std::process::id() as i32;
                let home = cgroup::v2_path_of(me)
                    .map(|p| root.join(p.trim_start_matches('/')))
                    .ok_or_else(|| {
                        InterfereError::BadInput(format!(
                            "cannot read the cgroup v2 of this process (pid {me}) from /proc/{me}/cgroup"
                        ))
                    })?;
                undo_ids.push(cx.journal.record(Change::Rehome {
                    pid: me,
                    start_time: journal::process_start_time(me).unwrap_or(0),
                    home,
                })?);
                probe_g.add_process(me)?;
                applied.push(format!(
                    "probe (pid {}) in {}",
                    std::process::id(),
                    probe_g.path.display()
                ));
            }
            _ => {}
        }
        if let Some(cb) = &cx.cfg.on_applied {
            cb(&Applied {
                mitigation: combo.parts()[0],
                parts: combo.parts().to_vec(),
                aggressor_pid: agg.pid,
                readback: applied.clone(),
            });
        }

        // Run: the probe starts, the aggressor follows shortly after.
        let probe_dir = cx.work.join(format!("probe-{}", combo.name()));
        std::fs::create_dir(&probe_dir).map_err(|e| InterfereError::io(&probe_dir, e))?;
        let measured = run_probe(cx.cfg, &probe_dir, Some(&mut agg))?;
        let probe_s = measured.doc.duration_s;
        // After Ctrl-C (before or while it finishes) the aggressor is stopped at once rather
        // than left to finish, and the scenario is marked interrupted, not capped.
        let fin = agg.finish(cx.cfg.cap, &cx.cfg.stop)?;
        let interrupted = measured.doc.interrupted || fin.interrupted;
        drop(agg);
        cx.journal.forget(proc_id)?;
        let _ = std::fs::remove_dir_all(&adir);
        let _ = std::fs::remove_dir_all(&probe_dir);
        if interrupted {
            notes.push(interrupted_note(
                probe_s,
                cx.cfg.duration,
                Some((&fin, spec.size, spec.command.is_some())),
            ));
        }
        if let Some(c) = &spec.command {
            if fin.interrupted {
                notes.push(format!(
                    "the command was stopped when the run was interrupted{}",
                    fin.exit.map(|e| format!(" ({e})")).unwrap_or_default()
                ));
            } else if fin.capped {
                notes.push(format!(
                    "the command was stopped at the timeout (--aggressor-cap {}), {}",
                    cap_words(cx.cfg.cap),
                    fin.exit
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| "killed".into())
                ));
            } else if let Some(e) = fin.exit.filter(|e| !e.success()) {
                let tail = fin.stderr_tail.trim();
                let tail: String = tail
                    .char_indices()
                    .rev()
                    .nth(300)
                    .map(|(i, _)| &tail[i..])
                    .unwrap_or(tail)
                    .into();
                // "ended with exit status 3", "was killed by signal 9" (it read "ended with
                // killed by signal 9").
                let ended = match e {
                    crate::aggressor::command::CommandExit::Code { .. } => {
                        format!("ended with {e}")
                    }
                    crate::aggressor::command::CommandExit::Signal { .. } => format!("was {e}"),
                };
                notes.push(format!(
                    "the command {:?} {ended}: its time is not that of a full run{}",
                    c.line,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" (stderr: {tail})")
                    }
                ));
            }
        } else if fin.capped {
            notes.push(capped_note(
                &cap_words(cx.cfg.cap),
                fin.tally.bytes,
                spec.size,
            ));
        }
        let mut s = Scenario::measured(
            &name,
            Some(combo.name()),
            measured,
            Some(AggressorResult::from_finish(&fin, spec.size)),
            applied.clone(),
            Some(notes.clone()),
            cx.cfg.threshold,
        );
        s.interrupted = interrupted;
        Ok(s)
    })();
    // Undo this scenario's changes, newest first, whatever happened.
    let mut undo_err = None;
    let mut undo_notes = Vec::new();
    for id in undo_ids.into_iter().rev() {
        match cx.journal.undo(id) {
            Ok(n) => undo_notes.extend(n),
            Err(e) => {
                undo_err.get_or_insert(e);
            }
        }
    }
    settle(&cx.work);
    for n in &undo_notes {
        (cx.cfg.notes)(&format!("  not put back: {n}"));
    }
    let mut s = result?;
    if let Some(e) = undo_err {
        return Err(e);
    }
    s.notes.extend(undo_notes);
    Ok(s)
}

/// Switches the scheduler to `want` unless it is active, journaling first the queue settings
/// the switch resets (`nr_requests`, the old scheduler's `iosched/*`) and then the scheduler, so
/// that undoing newest first restores the scheduler and then its settings. Their ids go to
/// `undo_ids`; `true` when the scheduler was switched.
fn switch_scheduler(
    cx: &mut Ctx,
    want: &str,
    applied: &mut Vec<String>,
    undo_ids: &mut Vec<u64>,
) -> Result<bool> {
    let dev = device(&cx.device)?;
    let file = dev.scheduler_file();
    let now = scheduler::read(&file)?;
    if now.active == want {
        applied.push(format!("{} already {want}", file.display()));
        return Ok(false);
    }
    let values = scheduler::read_tunables(&dev.queue_dir());
    if !values.is_empty() {
        undo_ids.push(cx.journal.record(Change::QueueSettings {
            device: dev.name.clone(),
            scheduler: now.active.clone(),
            values,
            disk: scheduler::diskseq(&dev.name),
        })?);
    }
    undo_ids.push(cx.journal.record(Change::Scheduler {
        device: dev.name.clone(),
        file: file.clone(),
        was: now.active.clone(),
        disk: scheduler::diskseq(&dev.name),
    })?);
    scheduler::set(&file, &dev.name, want)?;
    applied.push(format!(
        "{} = {} (was {})",
        file.display(),
        scheduler::read(&file)?.active,
        now.active
    ));
    Ok(true)
}

/// The device under test, or why there is none.
fn device(device: &std::result::Result<Device, String>) -> Result<&Device> {
    device
        .as_ref()
        .map_err(|e| InterfereError::BadInput(e.clone()))
}

/// Switches on the io controller for the children of `root` unless it is on: journaled before
/// it is switched on, like every change.
fn enable_io_subtree(journal: &mut Journal, root: &Path, undo_ids: &mut Vec<u64>) -> Result<()> {
    if !cgroup::io_subtree_enabled(root)? {
        undo_ids.push(journal.record(Change::SubtreeControl {
            file: root.join("cgroup.subtree_control"),
            controller: "io".into(),
        })?);
        cgroup::enable_io_subtree(root)?;
    }
    Ok(())
}

/// The cap as a note says it, with its fractions (QA: a cap of 1.5 s read "1 s", one of 1 ms
/// "0 s").
fn cap_words(cap: Duration) -> String {
    disktier_units::fmt_ns(cap.as_nanos() as f64)
}

/// The note on a scenario that Ctrl-C or a signal stopped: how much of it ran, and what the
/// aggressor (`fin`, its target bytes, whether it is the user's command) had done by then.
pub(super) fn interrupted_note(
    probe_s: f64,
    duration: Duration,
    aggressor: Option<(&crate::aggressor::process::Finish, u64, bool)>,
) -> String {
    let agg = match aggressor {
        Some((f, _, true)) => format!(
            ", the command was stopped after {:.1} s having written {}",
            f.tally.seconds,
            disktier_units::Bytes(f.tally.bytes)
        ),
        Some((f, size, false)) if f.interrupted => format!(
            ", the aggressor was stopped after {:.1} s having written {} of {}",
            f.tally.seconds,
            disktier_units::Bytes(f.tally.bytes),
            disktier_units::Bytes(size)
        ),
        _ => String::new(),
    };
    format!(
        "interrupted (Ctrl-C or a signal): the probe ran {probe_s:.1} s of its {:.0} s{agg}; these figures are partial and left out of the recommendation",
        duration.as_secs_f64()
    )
}

/// The note on a writer stopped at the cap. One that had written everything was stopped in its
/// final sync, with its data still in the page cache: "after writing 629145600 of 629145600
/// bytes" read as if it had finished.
fn capped_note(cap: &str, written: u64, size: u64) -> String {
    if written >= size {
        format!("the aggressor was stopped at the cap ({cap}) in its final sync: it had written all {written} bytes, not all of them yet on disk")
    } else {
        format!(
            "the aggressor was stopped at the cap ({cap}) after writing {written} of {size} bytes"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_said_with_its_fractions() {
        assert_eq!(cap_words(Duration::from_millis(1500)), "1.50 s");
        assert_eq!(cap_words(Duration::from_millis(1)), "1.00 ms");
        assert_eq!(cap_words(Duration::from_secs(600)), "600.00 s");
    }

    #[test]
    fn a_writer_capped_in_its_final_sync_is_said_so() {
        let n = capped_note("4.00 s", 600 << 20, 600 << 20);
        assert!(n.contains("in its final sync"), "{n}");
        let n = capped_note("4.00 s", 27_039_678, 64 << 20);
        assert!(
            n.ends_with("after writing 27039678 of 67108864 bytes"),
            "{n}"
        );
    }
}
