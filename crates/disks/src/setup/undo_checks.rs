//! What `--undo` checks before it changes anything, kept apart from the undo itself: the
//! `--layout separate` mounts below a directory that is not a mount point (each is undone on its
//! own), the `--label` a refused filesystem's own label says setup was given, and the mounts
//! that would stop the undo half-way (one someone made below the mount point or a bind, the
//! device mounted elsewhere when `--wipe` is asked for).

use super::persist;
use super::plan::derived_uuid;
use super::SetupError;
use crate::discover::mountinfo::MountEntry;
use crate::valid::MountPath;
use disktier_cmd::{shell_quote, Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// The filesystem UUID of `dev` (`blkid -p`), empty when it has none.
pub(crate) fn uuid_of(dev: &str, runner: &dyn CommandRunner) -> Result<String, SetupError> {
    let out = runner.output(&Cmd::new("blkid").args(["-p", "-s", "UUID", "-o", "value", dev]))?;
    Ok(out.stdout.trim().to_string())
}

/// Whether `path` lies strictly below `dir`.
fn below(path: &str, dir: &str) -> bool {
    path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// Refuses, before anything is changed, an undo that would stop half-way on a mount it did not
/// make (found by QA: a tmpfs on `M/sub` let the binds be unmounted, then `umount M` failed
/// with a bare "target is busy"): a mount on or below `mount` or one of `binds` that is not
/// setup's; and with `wipe`, the `device` setup made (`fs`: its mount at `mount`, when it is
/// mounted) mounted elsewhere, which wipefs must not erase from under it (it unmounted `mount`,
/// then refused the wipe).
pub(crate) fn refuse_foreign_mounts(
    mount: &MountPath,
    fs: Option<&MountEntry>,
    device: Option<&str>,
    binds: &[String],
    wipe: bool,
    table: &[MountEntry],
) -> Result<(), SetupError> {
    let of_device = |e: &MountEntry| {
        fs.is_some_and(|m| e.maj_min == m.maj_min) || device.is_some_and(|d| e.source == d)
    };
    let ours = |e: &MountEntry| {
        of_device(e) && (e.mount_point == mount.as_str() || binds.contains(&e.mount_point))
    };
    // What the undo unmounts: only a directory something is mounted on can be in the way.
    let dirs: Vec<&str> = std::iter::once(mount.as_str())
        .chain(binds.iter().map(String::as_str))
        .filter(|d| table.iter().any(|e| e.mount_point == *d))
        .collect();
    let foreign: Vec<&MountEntry> = table
        .iter()
        .filter(|e| !ours(e))
        .filter(|e| {
            dirs.iter()
                .any(|d| e.mount_point == *d || below(&e.mount_point, d))
        })
        .collect();
    if !foreign.is_empty() {
        return Err(SetupError::Config(format!(
            "{mount} cannot be undone while mounts setup did not make are on or below it or its binds: {}; nothing was changed; unmount them first ({}), then run the undo again",
            listed(&foreign),
            umounts(&foreign)
        )));
    }
    if !wipe {
        return Ok(());
    }
    let elsewhere: Vec<&MountEntry> = table.iter().filter(|e| of_device(e) && !ours(e)).collect();
    if let (false, Some(dev)) = (elsewhere.is_empty(), device) {
        return Err(SetupError::Config(format!(
            "{dev}, the device setup made for {mount}, is also mounted at {}, and --wipe would erase the filesystem from under it; nothing was changed; unmount it there first ({}), or undo without --wipe",
            listed(&elsewhere),
            umounts(&elsewhere)
        )));
    }
    Ok(())
}

/// Mounts as the refusals name them: `TARGET (FSTYPE from SOURCE)`.
fn listed(v: &[&MountEntry]) -> String {
    v.iter()
        .map(|e| format!("{} ({} from {})", e.mount_point, e.fstype, e.source))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The commands that unmount `v`, deepest first, as they must be.
fn umounts(v: &[&MountEntry]) -> String {
    let depth = |p: &str| p.matches('/').count();
    let mut v: Vec<&str> = v.iter().map(|e| e.mount_point.as_str()).collect();
    v.sort_by(|a, b| depth(b).cmp(&depth(a)).then(a.cmp(b)));
    v.dedup();
    v.iter()
        .map(|p| format!("umount {}", shell_quote(p)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `--label` a setup of `mount` was given, when `dev`'s label says so: its UUID is the one
/// setup derives from that label (for `DIR/N`, from `LABEL-N`) and `mount`.
pub(crate) fn label_hint(
    dev: &str,
    uuid: &str,
    mount: &MountPath,
    runner: &dyn CommandRunner,
) -> Option<String> {
    let out = runner
        .output(&Cmd::new("blkid").args(["-p", "-s", "LABEL", "-o", "value", dev]))
        .ok()?;
    let label = out.stdout.trim();
    if label.is_empty() || derived_uuid(label, Path::new(mount.as_str())) != uuid {
        return None;
    }
    let last = mount.as_str().rsplit('/').next().unwrap_or_default();
    let base = label
        .strip_suffix(last)
        .and_then(|b| b.strip_suffix('-'))
        .filter(|b| !b.is_empty() && last.bytes().all(|c| c.is_ascii_digit()));
    Some(base.unwrap_or(label).to_string()).filter(|l| plain_label(l))
}

/// Whether `l` reads as a label setup accepts (letters, digits, `-`, `_`; not starting with
/// `-`): only such a label is repeated in a suggested command line.
fn plain_label(l: &str) -> bool {
    !l.is_empty()
        && !l.starts_with('-')
        && l.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `DIR/N` targets below `mount` that setup's `--layout separate` left: mounted, or persisted
/// (a tagged fstab line, a mount unit with setup's header) below the persist root; each with
/// how it was found.
fn separate_targets(
    mount: &MountPath,
    persist_root: &Path,
    table: &[MountEntry],
) -> Vec<(String, &'static str)> {
    let prefix = format!("{}/", mount.as_str().trim_end_matches('/'));
    let index_of = |t: &str| {
        t.strip_prefix(&prefix)
            .filter(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_string)
    };
    let mut found: Vec<(String, &'static str)> = Vec::new();
    let mut add = |t: String, how: &'static str| {
        if !found.iter().any(|(f, _)| *f == t) {
            found.push((t, how));
        }
    };
    for e in table {
        if index_of(&e.mount_point).is_some() {
            add(e.mount_point.clone(), "mounted");
        }
    }
    let fstab = std::fs::read_to_string(persist_root.join("etc/fstab")).unwrap_or_default();
    for l in fstab.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if l.trim_end().ends_with(persist::FSTAB_TAG) && f.len() > 2 && f[2] != "none" {
            let t = persist::fstab_path(f[1]);
            if index_of(&t).is_some() {
                add(t, "in fstab");
            }
        }
    }
    let units = persist_root.join("etc/systemd/system");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(units)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    for p in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "mount"))
    {
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        if !text.starts_with("# Written by `disktier setup`") {
            continue;
        }
        if let Some(t) = text.lines().find_map(|l| l.strip_prefix("Where=")) {
            if index_of(t).is_some() {
                add(t.to_string(), "a mount unit");
            }
        }
    }
    let n = |t: &str| index_of(t).and_then(|i| i.parse::<u64>().ok());
    found.sort_by_key(|(t, _)| n(t));
    found
}

/// Refuses the undo of a directory that is not a mount point but holds `--layout separate`'s
/// mounts (`DIR/0`, `DIR/1`, ...): those are undone one at a time, each with its own
/// `--undo --mount DIR/N` (found by QA: the undo of DIR said "setup undone" and left them all).
pub(crate) fn refuse_separate_parent(
    mount: &MountPath,
    label: &str,
    wipe: bool,
    persist_root: &Path,
    table: &[MountEntry],
    runner: &dyn CommandRunner,
) -> Result<(), SetupError> {
    let found = separate_targets(mount, persist_root, table);
    if found.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = found
        .iter()
        .map(|(t, how)| format!("{t} ({how})"))
        .collect();
    // The label setup was given, as the filesystem mounted there says (found by QA: the
    // suggestion lacked the `--label ab` setup was given); else the one this undo was given.
    let label_of = |t: &str| {
        table
            .iter()
            .rev()
            .find(|e| e.mount_point == t)
            .and_then(|e| {
                let at = MountPath::parse("--mount", t).ok()?;
                let uuid = uuid_of(&e.source, runner).ok()?;
                label_hint(&e.source, &uuid, &at, runner)
            })
            .unwrap_or_else(|| label.to_string())
    };
    let runs: Vec<String> = found
        .iter()
        .map(|(t, _)| {
            let mut run = format!("disktier setup --undo --mount {}", shell_quote(t));
            let label = label_of(t);
            if label != super::config::DEFAULT_LABEL && plain_label(&label) {
                run.push_str(&format!(" --label {}", shell_quote(&label)));
            }
            if wipe {
                run.push_str(" --wipe");
            }
            run
        })
        .collect();
    let boot = persist_root
        .join("etc/systemd/system")
        .join(persist::boot_unit_name(mount));
    let then = if boot.exists() {
        format!(
            "; then disktier setup --undo --mount {} removes the boot-time unit {}",
            shell_quote(mount),
            boot.display()
        )
    } else {
        String::new()
    };
    Err(SetupError::Config(format!(
        "{mount} is not a mount point: setup made one filesystem per disk below it (--layout separate): {}; nothing was undone; undo each in turn: {}{then}",
        listed.join(", "),
        runs.join(", then ")
    )))
}
