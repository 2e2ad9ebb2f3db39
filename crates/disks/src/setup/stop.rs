//! What setup and its undo do when a signal stops them (the caller's runner is a
//! `disktier_cmd::StoppableRunner`): the command running is stopped with its process group and
//! waited for, no further step runs, and the error says what is done, what is not, what the
//! stopped step left on the disk, and how to go on. An undo whose step fails part-way is
//! reported the same way ([`undo_failed`]).
//!
//! A stopped `mkfs` leaves part of a filesystem: mke2fs writes its superblocks last (a killed
//! one leaves the disk blank), but mkfs.xfs writes a superblock marked "in progress" first,
//! which blkid reports as an xfs with our label and UUID that no kernel mounts ("Structure
//! needs cleaning"). A re-run would take it for a filesystem setup made and fail to mount it,
//! so its signature is erased (`wipefs -a`) when it carries the UUID this run was making: the
//! disk was checked blank and free right before mkfs ([`super::recheck`]), so what is erased
//! is only what the stopped mkfs wrote. The disk is then blank again, and a re-run makes the
//! filesystem anew.

use super::step::Step;
use super::{SetupError, StepRecord};
use crate::valid::MountPath;
use disktier_cmd::{Cmd, CmdError, CommandRunner};

/// Whether `e` is a stop (a signal), not a failure.
pub fn is_stop(e: &SetupError) -> bool {
    matches!(e, SetupError::Command(c) if c.is_stop())
}

/// After `step` was stopped: clears what it left half done when that is safe, and says what
/// the disk holds now.
fn clean_up(step: &Step, runner: &dyn CommandRunner) -> String {
    match step {
        Step::Mkfs { device, uuid, .. } => {
            let probe = Cmd::new("blkid")
                .args(["-p", "-s", "UUID", "-o", "value", device.as_str()])
                .even_when_stopped();
            let now = match runner.output(&probe) {
                Ok(o) => o.stdout.trim().to_string(),
                Err(e) => return format!("{device} could not be probed after the stop ({e}): check it with `blkid -p {device}` before re-running"),
            };
            if now.is_empty() {
                return format!("{device} holds no filesystem signature (the stopped mkfs had not written one)");
            }
            if now != *uuid {
                return format!("{device} now holds a filesystem with UUID {now}, not the one this run was making: it was left as it is");
            }
            let wipe = Cmd::new("wipefs")
                .args(["-a", device.as_str()])
                .even_when_stopped();
            match runner.run(&wipe) {
                Ok(_) => format!("the partly made filesystem on {device} was erased (wipefs -a): the disk is blank again"),
                Err(e) => format!("{device} holds a partly made filesystem that could not be erased ({e}): erase it with `wipefs -a {device}` before re-running"),
            }
        }
        Step::CreateRaid { members, .. } => format!(
            "{} may hold the superblocks of a half-made array: check `cat /proc/mdstat` and `mdadm --examine` on them before re-running",
            members.join(", ")
        ),
        Step::CopyIn { staging, .. } => format!(
            "the copy was left half done in {staging}, which a re-run removes and copies again"
        ),
        _ => "a re-run does this step again".to_string(),
    }
}

/// The error for setup stopped before `left[0]` ran (`stopped`: it was running, and its
/// command was stopped), after the steps in `done`; with no step left, while it read the
/// disks' state.
pub fn setup_interrupted(
    mount: &MountPath,
    done: &[StepRecord],
    left: &[Step],
    stopped: bool,
    runner: &dyn CommandRunner,
) -> SetupError {
    let n = done.len() + 1;
    let total = done.len() + left.len();
    let mut state = Vec::new();
    let during = match (left.first(), stopped) {
        (Some(s), true) => {
            state.push(format!(
                "its command was stopped and waited for; {}",
                clean_up(s, runner)
            ));
            format!("during step {n} of {total} ({})", s.describe())
        }
        (Some(s), false) => format!("before step {n} of {total} ({})", s.describe()),
        (None, _) => "while it read the disks' state".to_string(),
    };
    let changed: Vec<String> = done
        .iter()
        .filter(|r| r.status == "done")
        .map(|r| r.description.clone())
        .collect();
    if changed.is_empty() {
        state.push("nothing else was changed".into());
    } else {
        state.push(format!("done before it: {}", changed.join("; ")));
    }
    let skip = usize::from(stopped);
    if left.len() > skip {
        let not: Vec<String> = left[skip..].iter().map(Step::describe).collect();
        state.push(format!("not run: {}", not.join("; ")));
    }
    let mounted = done
        .iter()
        .any(|r| r.status == "done" && matches!(r.step, Step::Mount { .. }));
    let mut next =
        "run the same `disktier setup` command again to finish (it goes on from the disks' state)"
            .to_string();
    if mounted {
        next.push_str(&format!(
            ", or `disktier setup --undo --mount {mount}` to reverse what was done"
        ));
    }
    state.push(next);
    SetupError::Interrupted {
        during,
        state: sentences(&state),
    }
}

/// The parts joined as sentences: the first goes on the message's first line, as it is; the
/// others start with a capital.
fn sentences(parts: &[String]) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(". ");
            let mut c = p.chars();
            if let Some(first) = c.next() {
                out.extend(first.to_uppercase());
                out.push_str(c.as_str());
            }
        } else {
            out.push_str(p);
        }
    }
    out
}

/// Before each step of the undo: a stop asked for (a signal) starts no further step.
pub fn check(runner: &dyn CommandRunner) -> Result<(), SetupError> {
    if runner.stopped() {
        return Err(SetupError::Command(CmdError::NotStarted {
            cmd: "the next step of the undo".into(),
        }));
    }
    Ok(())
}

/// What an undo stopped part-way did and how to finish it: the steps `done`, the journal kept,
/// the command that completes it.
fn undo_state<'a>(
    mount: &MountPath,
    done: impl Iterator<Item = &'a str>,
    journal: &std::path::Path,
    fix: &str,
) -> String {
    let done: Vec<&str> = done.collect();
    let done = if done.is_empty() {
        "nothing was undone yet".to_string()
    } else {
        format!("done: {}", done.join("; "))
    };
    format!(
        "{done}. Its journal {} is kept: {fix}run `disktier setup --undo --mount {}` again to complete it",
        journal.display(),
        disktier_cmd::shell_quote(mount)
    )
}

/// The error for an undo stopped part-way, after the steps `done` (its journal is kept, so a
/// re-run completes it).
pub fn undo_interrupted<'a>(
    mount: &MountPath,
    done: impl Iterator<Item = &'a str>,
    journal: &std::path::Path,
) -> SetupError {
    SetupError::Interrupted {
        during: "part-way through the undo".into(),
        state: format!(
            "the command running was stopped and waited for; {}",
            undo_state(mount, done, journal, "")
        ),
    }
}

/// The error for an undo whose step failed (`cause`) after the steps `done`, said the way an
/// interrupted one is (found by QA: a bare "target is busy", exit 2, with the binds already
/// unmounted and nothing said of the journal).
pub fn undo_failed<'a>(
    mount: &MountPath,
    done: impl Iterator<Item = &'a str>,
    journal: &std::path::Path,
    cause: SetupError,
) -> SetupError {
    SetupError::UndoFailed {
        mount: mount.to_string(),
        state: undo_state(mount, done, journal, "fix the cause (below), then "),
        source: Box::new(cause),
    }
}
