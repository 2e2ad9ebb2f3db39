//! `disktier setup --undo --mount DIR`: reverses what setup did at DIR. It unmounts the bind
//! mounts (copying their content back to the root disk, or keeping it on the disk: an explicit
//! choice) and the filesystem, removes the units and fstab lines setup wrote for DIR (only
//! those: units carrying setup's header, fstab lines carrying its tag), and with `--wipe` erases
//! the filesystem signature of the device setup made.
//!
//! Only a filesystem setup made is undone: its UUID must be the one setup derives from the label
//! and the mount point ([`crate::setup::plan::derived_uuid`]).
//!
//! Crash-safe like `interfere`'s journal: before the first change, what is to be undone (the
//! device, its UUID, the bind targets, the choices) is written to a journal file and fsynced
//! (file and directory: [`super::journal`]); every step is idempotent (an unmounted target, a
//! removed unit, a blank device count as done), so a re-run after a kill or a failed step reads
//! the journal and completes the undo, even when the mount that identified the device is
//! already gone. The journal is removed last. What would make a step fail for certain (a mount
//! someone made below the mount point, the device mounted elsewhere with `--wipe`) is refused
//! before the journal is written ([`undo_checks`]).

use super::journal::write_journal;
pub use super::journal::{journal_path, read_journal, BindChoice, Journal};
use super::persist;
use super::plan::derived_uuid;
use super::stop;
use super::undo_checks::{self, uuid_of};
use super::SetupError;
use crate::discover::mountinfo::{self, MountEntry};
use crate::valid::MountPath;
use disktier_cmd::{Cmd, CommandRunner};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// An undo request.
#[derive(Debug, Clone)]
pub struct UndoRequest {
    pub mount: MountPath,
    /// The filesystem label setup used (default `disktier`).
    pub label: String,
    pub binds: Option<BindChoice>,
    pub wipe: bool,
    /// Where units, fstab and the journal live (`/` on the node; a temp dir in tests).
    pub persist_root: PathBuf,
    /// The mount table to read (`/proc/self/mountinfo` on the node).
    pub mountinfo: PathBuf,
    pub dry_run: bool,
    /// Whether removing units or fstab lines is followed by `systemctl daemon-reload`, so that
    /// systemd drops the removed units at once rather than at the next reload or boot: on the
    /// node (persist root `/`) when systemd is the running manager (`/run/systemd/system`, as
    /// sd_booted(3) tests), as setup reloads after enabling its units.
    pub reload_systemd: bool,
}

impl UndoRequest {
    pub fn new(mount: MountPath) -> UndoRequest {
        UndoRequest {
            mount,
            label: "disktier".into(),
            binds: None,
            wipe: false,
            persist_root: PathBuf::from("/"),
            mountinfo: PathBuf::from("/proc/self/mountinfo"),
            dry_run: false,
            reload_systemd: persist::node_systemd(Path::new("/")),
        }
    }
}

/// One step of an undo.
#[derive(Debug, Clone, Serialize)]
pub struct UndoStep {
    pub description: String,
    pub commands: Vec<String>,
    /// `done`, `planned` (dry run) or `already` (nothing to do: a re-run).
    pub status: &'static str,
}

/// What an undo did (`--format json`, schema 1, as setup's own report).
#[derive(Debug, Clone, Serialize)]
pub struct UndoReport {
    pub schema_version: u32,
    pub mount: String,
    pub dry_run: bool,
    pub changed: bool,
    /// Whether this run completed an undo a killed run had started (its journal was found).
    pub resumed: bool,
    pub device: Option<String>,
    pub steps: Vec<UndoStep>,
    pub notes: Vec<String>,
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> SetupError {
    let path = p.to_path_buf();
    move |source| SetupError::Io { path, source }
}

fn mounts(req: &UndoRequest) -> Result<Vec<MountEntry>, SetupError> {
    mountinfo::read(&req.mountinfo).map_err(io(&req.mountinfo))
}

fn top<'a>(m: &'a [MountEntry], target: &str) -> Option<&'a MountEntry> {
    m.iter().rev().find(|e| e.mount_point == target)
}

/// The UUIDs a filesystem setup made for `mount` can have: the one derived from the label and
/// the mount point, and for `--layout separate`'s `DIR/N` also the one derived from `LABEL-N`
/// (setup labels each disk so), so that `--undo --mount DIR/0` works with the label setup was
/// given, as the docs say (found by QA: it needed `--label disktier-0`).
fn setup_uuids(label: &str, mount: &MountPath) -> Vec<String> {
    let at = Path::new(mount.as_str());
    let mut v = vec![derived_uuid(label, at)];
    let last = mount.as_str().rsplit('/').next().unwrap_or_default();
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
        v.push(derived_uuid(&format!("{label}-{last}"), at));
    }
    v
}

/// Units in `dir` that setup wrote for `mount`: the mount unit, the boot unit, and bind units
/// whose source lies on `mount`.
fn our_units(dir: &Path, mount: &MountPath) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mine = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|t| t.starts_with("# Written by `disktier setup`"))
            .unwrap_or(false)
    };
    for name in [
        persist::mount_unit_name(mount),
        persist::boot_unit_name(mount),
    ] {
        let p = dir.join(name);
        if mine(&p) {
            out.push(p);
        }
    }
    let what = format!("What={}/", mount.as_str());
    if let Ok(rd) = std::fs::read_dir(dir) {
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "mount"))
            .filter(|p| !out.contains(p) && mine(p))
            .filter(|p| {
                std::fs::read_to_string(p)
                    .map(|t| t.lines().any(|l| l.starts_with(&what)))
                    .unwrap_or(false)
            })
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

/// The fstab with setup's lines for `mount` (and its binds) removed.
fn fstab_without(existing: &str, mount: &MountPath) -> String {
    let mut out = String::new();
    for line in existing.lines() {
        if !persist::setup_line_for(line, mount) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Undoes setup at `req.mount`.
pub fn undo(req: &UndoRequest, runner: &dyn CommandRunner) -> Result<UndoReport, SetupError> {
    let mount = &req.mount;
    let jpath = journal_path(&req.persist_root, mount);
    let mut report = UndoReport {
        schema_version: 1,
        mount: mount.to_string(),
        dry_run: req.dry_run,
        changed: false,
        resumed: false,
        device: None,
        steps: Vec::new(),
        notes: Vec::new(),
    };
    // One setup or undo at a time: the mount table read below must still be true when acted on.
    let _lock = if req.dry_run {
        None
    } else {
        Some(super::lock::take(&req.persist_root, runner, "the undo")?)
    };
    let table = mounts(req)?;
    let journal = match read_journal(&jpath, mount)? {
        Some(j) => {
            report.resumed = true;
            report.notes.push(format!(
                "completing the undo a previous run started ({})",
                jpath.display()
            ));
            j
        }
        None => {
            let candidates = setup_uuids(&req.label, mount);
            let mut uuid = candidates[0].clone();
            let (device, binds) = match top(&table, mount.as_str()) {
                Some(m) => {
                    let dev = m.source.clone();
                    let found = uuid_of(&dev, runner)?;
                    if !candidates.contains(&found) {
                        let hint = match undo_checks::label_hint(&dev, &found, mount, runner) {
                            Some(l) => format!(
                                "; its label says setup was given --label {l}: pass --label {l}"
                            ),
                            None => "; if setup was given --label, pass the same --label, else unmount it yourself".to_string(),
                        };
                        return Err(SetupError::Config(format!(
                            "{mount} is mounted from {dev} (UUID {}), which disktier setup did not make with --label {} (its filesystem would have UUID {}): undo only reverses setup{hint}",
                            if found.is_empty() { "none" } else { &found },
                            req.label,
                            candidates.join(" or, from --layout separate, ")
                        )));
                    }
                    uuid = found;
                    let mut binds: Vec<String> = table
                        .iter()
                        .filter(|e| {
                            e.maj_min == m.maj_min
                                && e.mount_point != m.mount_point
                                && e.root != "/"
                                && e.root == e.mount_point
                        })
                        .map(|e| e.mount_point.clone())
                        .collect();
                    binds.sort_by_key(|b| std::cmp::Reverse(b.matches('/').count()));
                    binds.dedup();
                    (Some(dev), binds)
                }
                None => {
                    undo_checks::refuse_separate_parent(
                        mount,
                        &req.label,
                        req.wipe,
                        &req.persist_root,
                        &table,
                        runner,
                    )?;
                    (None, Vec::new())
                }
            };
            if !binds.is_empty() && req.binds.is_none() {
                return Err(SetupError::Config(format!(
                    "{mount} has bind mounts ({}): choose what happens to their content: pass --binds copy-back (copy it back to the directories underneath) or --binds keep (leave them as they were before setup)",
                    binds.join(", ")
                )));
            }
            Journal {
                mount: mount.to_string(),
                device,
                uuid,
                binds,
                bind_choice: req.binds,
                wipe: req.wipe,
            }
        }
    };
    report.device = journal.device.clone();
    let units_dir = req.persist_root.join("etc/systemd/system");
    let units = our_units(&units_dir, mount);
    let fstab_path = req.persist_root.join("etc/fstab");
    let fstab = std::fs::read_to_string(&fstab_path).ok();
    let new_fstab = fstab.as_deref().map(|f| fstab_without(f, mount));
    let fstab_changes = fstab.is_some() && fstab != new_fstab;
    let mounted = |t: &str| top(&table, t).is_some();
    let anything = journal.binds.iter().any(|b| mounted(b))
        || mounted(mount.as_str())
        || !units.is_empty()
        || fstab_changes
        || (journal.wipe && journal.device.is_some());
    if !anything && !report.resumed {
        if top(&table, mount.as_str()).is_none() && !jpath.exists() {
            report.notes.push(format!(
                "nothing of disktier setup at {mount}: nothing to undo"
            ));
        }
        return Ok(report);
    }
    // What would stop it half-way is refused before anything changes (a dry run says so too).
    let fs = top(&table, mount.as_str()).filter(|m| journal.device.as_ref() == Some(&m.source));
    undo_checks::refuse_foreign_mounts(
        mount,
        fs,
        journal.device.as_deref(),
        &journal.binds,
        journal.wipe,
        &table,
    )?;
    if req.dry_run {
        report.steps.extend(plan_steps(
            &journal,
            &units,
            fstab_changes,
            &fstab_path,
            req.reload_systemd,
        ));
        return Ok(report);
    }
    if !report.resumed {
        write_journal(&jpath, &journal)?;
    }
    match execute(req, runner, &journal, &mut report) {
        Ok(()) => {}
        // A signal: the journal stays, so running the undo again completes it.
        Err(e) if stop::is_stop(&e) || runner.stopped() => {
            let done = report.steps.iter().filter(|s| s.status == "done");
            let done = done.map(|s| s.description.as_str());
            return Err(stop::undo_interrupted(mount, done, &jpath));
        }
        // A failure after the journal was written: what was done, and how to finish.
        Err(e) => {
            let done = report.steps.iter().filter(|s| s.status == "done");
            let done = done.map(|s| s.description.as_str());
            return Err(stop::undo_failed(mount, done, &jpath, e));
        }
    }
    let _ = std::fs::remove_file(&jpath);
    Ok(report)
}

/// The undo's steps, once its journal is written; each is recorded in `report` as it is done.
fn execute(
    req: &UndoRequest,
    runner: &dyn CommandRunner,
    journal: &Journal,
    report: &mut UndoReport,
) -> Result<(), SetupError> {
    let mount = &req.mount;
    let units_dir = req.persist_root.join("etc/systemd/system");
    let fstab_path = req.persist_root.join("etc/fstab");
    let mut step = |s: UndoStep, did: bool| {
        report.changed |= did;
        report.steps.push(UndoStep {
            status: if did { "done" } else { "already" },
            ..s
        });
    };
    // 1. Binds, deepest first: unmount, then copy back while the filesystem is still mounted.
    for b in &journal.binds {
        stop::check(runner)?;
        let is = mounts(req)?.iter().any(|e| e.mount_point == *b);
        if is {
            runner.run(&Cmd::new("umount").arg(b.as_str()))?;
        }
        step(unmount_bind_step(b), is);
        if journal.bind_choice == Some(BindChoice::CopyBack) {
            let src = format!("{}{b}", mount.as_str());
            let fs_there = top(&mounts(req)?, mount.as_str()).is_some();
            if fs_there && Path::new(&src).is_dir() {
                let cmd = Cmd::new("cp").args(["-a", "--", &format!("{src}/."), &format!("{b}/")]);
                runner.run(&cmd)?;
                step(copy_back_step(&src, b), true);
            }
        }
    }
    stop::check(runner)?;
    // 2. The filesystem.
    let is = top(&mounts(req)?, mount.as_str()).is_some();
    if is {
        runner.run(&Cmd::new("umount").arg(mount.as_str()))?;
    }
    step(unmount_step(mount), is);
    stop::check(runner)?;
    // 3. Units and their enablement links.
    let mut reload = false;
    for u in our_units(&units_dir, mount) {
        reload = true;
        let name = u.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        let wants = units_dir.join("local-fs.target.wants").join(&name);
        let _ = std::fs::remove_file(&wants);
        std::fs::remove_file(&u).map_err(io(&u))?;
        step(remove_unit_step(&u), true);
    }
    // The enablement directory goes too when our links were all it held (remove_dir fails on a
    // directory that holds anything else).
    let _ = std::fs::remove_dir(units_dir.join("local-fs.target.wants"));
    stop::check(runner)?;
    // 4. fstab lines (atomic rewrite, old content kept as .disktier.bak).
    if let Ok(existing) = std::fs::read_to_string(&fstab_path) {
        let new = fstab_without(&existing, mount);
        if new != existing {
            persist::write_atomic(&fstab_path, &new)?;
            step(fstab_step(mount, &fstab_path), true);
            reload = true;
        }
    }
    // systemd keeps a removed unit (and the mount unit its fstab generator made of a removed
    // line) loaded until it reloads: done now, as setup does after enabling its units.
    if reload && req.reload_systemd {
        runner.run(&Cmd::new("systemctl").arg("daemon-reload"))?;
        step(reload_step(), true);
    }
    stop::check(runner)?;
    // 5. Wipe: re-checked right before, like setup's destructive steps.
    if journal.wipe {
        if let Some(dev) = &journal.device {
            let now = uuid_of(dev, runner)?;
            if now.is_empty() {
                // Blank already: nothing to run.
                step(
                    UndoStep {
                        commands: vec![],
                        ..wipe_step(dev)
                    },
                    false,
                );
            } else if now != journal.uuid {
                return Err(SetupError::Config(format!(
                    "{dev} now holds a filesystem with UUID {now}, not the one setup made ({}): not wiped",
                    journal.uuid
                )));
            } else {
                recheck_unused(dev, req)?;
                runner.run(&Cmd::new("wipefs").args(["-a", dev.as_str()]))?;
                step(wipe_step(dev), true);
            }
        } else {
            report.notes.push(format!(
                "--wipe: {mount} was not mounted, so the device setup made is unknown: nothing wiped"
            ));
        }
    }
    Ok(())
}

/// Right before wipefs: the device is mounted nowhere, no one holds it open exclusively and
/// nothing else uses it ([`crate::discover::probe::users`]).
fn recheck_unused(dev: &str, req: &UndoRequest) -> Result<(), SetupError> {
    if mounts(req)?.iter().any(|e| e.source == dev) {
        return Err(SetupError::Config(format!(
            "{dev} is mounted again: not wiped; unmount it and re-run the undo"
        )));
    }
    // O_EXCL on a block device: the open fails while it is mounted or held (open(2)).
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
        .map_err(|e| {
            SetupError::Config(format!(
                "{dev} is in use ({e}): not wiped; stop what holds it and re-run the undo"
            ))
        })?;
    let by = crate::discover::probe::users(Path::new(dev));
    if !by.is_empty() {
        return Err(SetupError::Config(format!(
            "{dev} is in use ({}): not wiped; stop what uses it and re-run the undo",
            by.join(", ")
        )));
    }
    Ok(())
}

fn plan_steps(
    j: &Journal,
    units: &[PathBuf],
    fstab: bool,
    fstab_path: &Path,
    reload_systemd: bool,
) -> Vec<UndoStep> {
    let mut v = Vec::new();
    for b in &j.binds {
        v.push(unmount_bind_step(b));
        if j.bind_choice == Some(BindChoice::CopyBack) {
            v.push(copy_back_step(&format!("{}{b}", j.mount), b));
        }
    }
    v.push(unmount_step(&j.mount));
    v.extend(units.iter().map(|u| remove_unit_step(u)));
    if fstab {
        v.push(fstab_step(&j.mount, fstab_path));
    }
    if reload_systemd && (fstab || !units.is_empty()) {
        v.push(reload_step());
    }
    if let (true, Some(d)) = (j.wipe, &j.device) {
        v.push(wipe_step(d));
    }
    v
}

// Each kind of step, said once for the plan (`--dry-run`) and the run: what it does and the
// command it runs. They are `planned`; the run marks each `done` or `already`.

fn planned(description: String, commands: Vec<String>) -> UndoStep {
    UndoStep {
        description,
        commands,
        status: "planned",
    }
}

fn unmount_bind_step(b: &str) -> UndoStep {
    planned(
        format!("unmount the bind on {b}"),
        vec![format!("umount {b}")],
    )
}

fn copy_back_step(src: &str, b: &str) -> UndoStep {
    planned(
        format!("copy {src} back to {b}"),
        vec![format!("cp -a {src}/. {b}/")],
    )
}

fn unmount_step(mount: &str) -> UndoStep {
    planned(format!("unmount {mount}"), vec![format!("umount {mount}")])
}

fn remove_unit_step(u: &Path) -> UndoStep {
    planned(
        format!("remove {}", u.display()),
        vec![format!("rm {}", u.display())],
    )
}

fn fstab_step(mount: &str, fstab_path: &Path) -> UndoStep {
    planned(
        format!(
            "remove disktier's lines for {mount} from {}",
            fstab_path.display()
        ),
        vec![],
    )
}

fn reload_step() -> UndoStep {
    planned(
        "reload systemd's units".to_string(),
        vec!["systemctl daemon-reload".to_string()],
    )
}

fn wipe_step(dev: &str) -> UndoStep {
    planned(format!("wipe {dev}"), vec![format!("wipefs -a {dev}")])
}
