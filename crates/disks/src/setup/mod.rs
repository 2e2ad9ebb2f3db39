//! Safe, idempotent, convergent provisioning of local disks: RAID0 or not, mkfs, mount by UUID,
//! owner/mode, SELinux labels, bind mounts with the old content copied in, persistence.
//!
//! Every run decides from the disks' real state (sysfs holders, `blkid -p`, mountinfo), never
//! from a marker file: a re-run after success plans nothing; a re-run after a stop/start (disks
//! blank again) re-creates everything; a re-run after a crash finishes the job; a disk holding
//! disktier's label is remounted, never reformatted. Only blank disks are ever written to, and
//! nothing is forced (`mkfs` without `-f`, `mdadm` without `--force`/`--run`).
//!
//! The steps are planned as data ([`step::Step`]) and executed through a
//! [`CommandRunner`], so `--dry-run` prints them and tests compare them with golden transcripts.

pub mod config;
pub mod fstab;
mod journal;
pub mod kernel;
pub mod live;
pub mod lock;
mod options_probe;
pub mod persist;
pub mod plan;
pub mod recheck;
pub mod step;
pub mod stop;
pub mod undo;
mod undo_checks;

pub use config::{DevicePath, FsType, LayoutChoice, Persist, SetupConfig, SetupRequest};
pub use plan::{DeviceReport, Layout, Skipped};
pub use step::Step;

use crate::discover::{self, DiskError};
use disktier_cmd::{CmdError, CommandRunner};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Invalid(#[from] crate::valid::Invalid),
    #[error("{device}: no such block device: see `disktier disks` for the node's disks")]
    NoSuchDevice { device: String },
    #[error("{device} has a size of 0 (no medium, or a loop device over an empty file): there is nothing to make a filesystem on; see `disktier disks` for the node's disks")]
    EmptyDevice { device: String },
    #[error("{device} is a partition of {disk}: disktier takes whole disks")]
    Partition { device: String, disk: String },
    #[error("refusing {device}: {}; {}", .reasons.join("; "), refusal_fix(.reasons))]
    Refused {
        device: String,
        reasons: Vec<String>,
    },
    #[error("this kernel has no md RAID support (no /proc/mdstat and no md_mod module): cannot stripe {disks} disks into RAID0; use --layout separate for one mount per disk")]
    NoMd { disks: usize },
    #[error("this kernel has no quota support ({why}): {option} cannot be mounted; drop it or use a kernel with {needs}")]
    NoQuota {
        option: String,
        why: String,
        /// The kernel options the filesystem's quotas need ([`kernel::quota_needs`]).
        needs: &'static str,
    },
    #[error("{} is already a mount point of {source_dev} ({fstype}): unmount it or choose another directory", .target.display())]
    TargetBusy {
        target: PathBuf,
        source_dev: String,
        fstype: String,
    },
    #[error("cannot write {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("step {n} ({what}) failed; fix the cause and re-run setup: it continues from the disks' state")]
    Step {
        n: usize,
        what: String,
        #[source]
        source: Box<SetupError>,
    },
    /// A signal stopped setup or its undo at a safe point ([`stop`]): `state` says what is
    /// done, what is not, what the disk holds and how to go on.
    #[error("interrupted by a signal {during}: {state}")]
    Interrupted { during: String, state: String },
    /// A step of an undo failed after others were done ([`stop::undo_failed`]): `state` says
    /// which, that the journal is kept and that a re-run completes the undo.
    #[error("the undo of {mount} failed part-way: {state}")]
    UndoFailed {
        mount: String,
        state: String,
        #[source]
        source: Box<SetupError>,
    },
    #[error(transparent)]
    Discover(#[from] DiskError),
    #[error(transparent)]
    Command(#[from] CmdError),
}

/// A step and what became of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepRecord {
    #[serde(flatten)]
    pub step: Step,
    pub description: String,
    /// The exact shell lines (what `--dry-run` prints).
    pub commands: Vec<String>,
    /// `planned` (dry run), `done`, or `unchanged` (found done at execution time).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What `setup` planned and did (`--format json`, schema 1).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub dry_run: bool,
    pub mount: crate::valid::MountPath,
    pub fs: FsType,
    pub label: crate::valid::Label,
    pub options: String,
    /// None when there was nothing to set up.
    pub layout: Option<Layout>,
    pub devices: Vec<DeviceReport>,
    pub skipped: Vec<Skipped>,
    pub steps: Vec<StepRecord>,
    /// Whether anything was changed on the node (always false for a dry run).
    pub changed: bool,
    pub notes: Vec<String>,
}

/// What to do about a refused disk. The system disk is never to be wiped (QA: refusing /dev/vda
/// ended with "wipe it yourself if you mean it").
fn refusal_fix(reasons: &[String]) -> &'static str {
    if reasons.iter().any(|r| r.starts_with("system disk")) {
        "it holds this node's operating system: give disktier a local data disk instead (`disktier disks` lists them)"
    } else if reasons.iter().any(|r| r.contains("in use: ")) {
        // Wiping would not help: something reads or writes it now.
        "stop what uses it (the process named; losetup -d for a loop device) and re-run setup"
    } else {
        "disktier only takes blank, unused disks (wipe it yourself if you mean it)"
    }
}

/// Most rounds of observe-plan-execute: one, plus one after assembling an array, plus slack.
const MAX_ROUNDS: usize = 3;

fn fixture_root(root: &Path) -> bool {
    root != Path::new("/")
}

/// Refuses a mount point or bind directory that exists as anything but a directory: `mkdir -p`
/// fails on it, after mkfs has run (found by QA).
fn not_a_file(flag: &str, p: &crate::valid::MountPath) -> Result<(), SetupError> {
    match std::fs::metadata(p.as_path()) {
        Ok(m) if !m.is_dir() => Err(SetupError::Config(format!(
            "{flag} {p} is a file, not a directory: pass a directory (setup creates it when it is missing)"
        ))),
        _ => Ok(()),
    }
}

/// Refuses a mount point or bind directory that is missing and cannot be made: its nearest
/// existing ancestor is not a directory, or is on a read-only filesystem. `mkdir -p` failed on
/// it after mkfs had written to the disk (found by QA: `--mount /ro/x` where /ro is a read-only
/// mount). A directory that exists may be on a read-only filesystem: mounting on it writes
/// nothing there.
fn creatable(flag: &str, p: &crate::valid::MountPath) -> Result<(), SetupError> {
    let path = p.as_path();
    if path.symlink_metadata().is_ok() {
        return Ok(());
    }
    let Some(parent) = path
        .ancestors()
        .skip(1)
        .find(|a| a.symlink_metadata().is_ok())
    else {
        return Ok(());
    };
    let refuse = |why: String| {
        Err(SetupError::Config(format!(
            "{flag} {p} does not exist and cannot be created: {why}"
        )))
    };
    match std::fs::metadata(parent) {
        Ok(m) if !m.is_dir() => {
            return refuse(format!(
                "{} is not a directory: pass a path under a directory",
                parent.display()
            ))
        }
        Err(_) => return Ok(()),
        Ok(_) => {}
    }
    match rustix::fs::statvfs(parent) {
        Ok(st) if st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) => refuse(format!(
            "{} is on a read-only filesystem: create {p} first (remount it read-write), or pass a directory on a writable filesystem",
            parent.display()
        )),
        _ => Ok(()),
    }
}

/// Runs (or with `dry_run`, plans) setup on the node whose state is read below `root` (`/` for
/// the real node; a fixture tree in tests).
pub fn setup(
    cfg: &SetupConfig,
    root: &Path,
    runner: &dyn CommandRunner,
) -> Result<Report, SetupError> {
    // The owner must exist where it is applied: on the node, its user database; in a fixture
    // tree, its etc/passwd when it has one.
    if let Some(o) = &cfg.owner {
        if root == Path::new("/") || root.join("etc/passwd").exists() {
            o.check_exists("--owner", root)?;
        }
    }
    if !fixture_root(root) {
        cfg.mount.check_no_symlink("--mount")?;
        not_a_file("--mount", &cfg.mount)?;
        creatable("--mount", &cfg.mount)?;
        for b in &cfg.bind {
            b.check_no_symlink("--bind")?;
            not_a_file("--bind", b)?;
            creatable("--bind", b)?;
        }
        if let Some((o, why)) =
            options_probe::refused(cfg.fs, cfg.options.iter(), kernel::is_quota_option)
        {
            return Err(SetupError::Config(format!(
                "--options {o} is refused by this kernel's {fs} (it says \"{why}\"): drop it or correct it (the kernel's Documentation/admin-guide/{fs}.rst lists {fs}'s mount options)",
                fs = cfg.fs.as_str()
            )));
        }
    }
    // One setup or undo at a time (a fixture tree is only ever planned, never changed).
    let _lock = if cfg.dry_run || fixture_root(root) {
        None
    } else {
        Some(lock::take(&cfg.persist_root, runner, "setup")?)
    };
    let mut report = Report {
        schema_version: 1,
        dry_run: cfg.dry_run,
        mount: cfg.mount.clone(),
        fs: cfg.fs,
        label: cfg.label.clone(),
        options: cfg.options_string(),
        layout: None,
        devices: Vec::new(),
        skipped: Vec::new(),
        steps: Vec::new(),
        changed: false,
        notes: Vec::new(),
    };
    // A fixture tree describes another node: whether this machine has mdadm says nothing of it.
    let fixture = root != Path::new("/");
    let has = |p: &str| fixture || runner.has_program(p);
    let mut last_replan: Option<Step> = None;
    for round in 0..MAX_ROUNDS {
        // Exclusive-open checks only on the disks this run may take.
        let explicit: Option<Vec<String>> = cfg
            .devices
            .as_ref()
            .map(|l| l.iter().filter_map(|g| plan::given_name(root, g)).collect());
        let stopped_reading = |report: &Report| {
            stop::setup_interrupted(&cfg.mount, &report.steps, &[], false, runner)
        };
        if !cfg.dry_run && runner.stopped() {
            return Err(stopped_reading(&report));
        }
        let node = discover::scan_only(root, runner, &|name, class| {
            let may_take = match &explicit {
                Some(names) => names.iter().any(|n| n == name),
                None => class.is_ephemeral(),
            };
            if may_take {
                discover::InUse::Exclusive
            } else {
                discover::InUse::Unchecked
            }
        })
        .map_err(|e| {
            if !cfg.dry_run && runner.stopped() {
                stopped_reading(&report)
            } else {
                e.into()
            }
        })?;
        let kernel = kernel::Kernel::read(root, cfg.fs);
        let plan = plan::plan(cfg, &node, &kernel, root, &has)?;
        if round == 0 {
            report.layout = plan.layout;
            report.devices = plan.devices.clone();
            report.skipped = plan.skipped.clone();
        }
        for n in &plan.notes {
            if !report.notes.contains(n) {
                report.notes.push(n.clone());
            }
        }
        let mut replan = false;
        if let Some(again) = plan.steps.iter().find(|s| s.replan_after()) {
            if last_replan.as_ref() == Some(again) {
                return Err(SetupError::Config(format!(
                    "`{}` ran, but the array did not appear: check `cat /proc/mdstat` and the kernel log, then re-run setup",
                    again.shell().join(" ")
                )));
            }
            last_replan = Some(again.clone());
        }
        let steps = plan.steps;
        for (k, step) in steps.iter().enumerate() {
            // A signal: stop before the next step (the runner stopped the command running).
            let interrupted = |report: &Report, stopped: bool| {
                stop::setup_interrupted(&cfg.mount, &report.steps, &steps[k..], stopped, runner)
            };
            if !cfg.dry_run && runner.stopped() {
                return Err(interrupted(&report, false));
            }
            let mut rec = StepRecord {
                description: step.describe(),
                commands: step.shell(),
                status: "planned",
                note: None,
                step: step.clone(),
            };
            if !cfg.dry_run {
                let n = report.steps.len() + 1;
                let step_err = |e| SetupError::Step {
                    n,
                    what: step.describe(),
                    source: Box::new(e),
                };
                // The last look before writing to a disk (a fixture tree describes another
                // node: there is no device to look at).
                // Each device stays claimed (O_EXCL) from its probe until the step starts, so
                // no other mkfs, mdadm or mount can write to it in between.
                let mut claims = Vec::new();
                if !fixture {
                    for dev in step.destructive_devices() {
                        claims.push(recheck::claim_blank_and_free(dev, runner).map_err(|e| {
                            if runner.stopped() {
                                interrupted(&report, false)
                            } else {
                                step_err(e)
                            }
                        })?);
                    }
                }
                // Let go right before the step: its command claims the devices itself.
                claims.into_iter().for_each(recheck::Claim::release);
                let note = match step.execute(runner) {
                    Ok(note) => note,
                    Err(e) if stop::is_stop(&e) => return Err(interrupted(&report, true)),
                    Err(e) => return Err(step_err(e)),
                };
                rec.status = if note.is_some() { "unchanged" } else { "done" };
                rec.note = note;
                report.changed |= rec.status == "done";
            }
            report.steps.push(rec);
            if step.replan_after() {
                replan = true;
                break;
            }
        }
        if !replan || cfg.dry_run {
            break;
        }
    }
    Ok(report)
}
