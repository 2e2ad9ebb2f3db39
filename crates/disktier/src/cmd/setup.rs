//! `disktier setup`: make a filesystem on the node's local ephemeral disks (or the given ones)
//! and mount it, safely and idempotently; the options here are what the user typed,
//! `app::setup::set_up` checks them (`disktier_disks::setup::SetupRequest::check`) and runs it.

use super::{print_json, Ctx, Outcome};
use crate::app::setup::{nothing_set_up, set_up, undo, UndoOptions};
use disktier_cmd::StoppableRunner;
use disktier_disks::setup::undo::BindChoice;
use disktier_disks::setup::{FsType, LayoutChoice, Persist, Report, SetupRequest};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  disktier setup --mount /var/lib/containers          # all eligible local ephemeral disks
  disktier setup --devices /dev/disk/by-id/X --mount /data --owner ec2-user:ec2-user
  disktier setup --mount /mnt/disks/ssd --bind /var/lib/containerd,/var/lib/kubelet --dry-run
  disktier setup --undo --mount /mnt/disks/ssd --binds copy-back --wipe   # reverse it

Only blank, unmounted, unpartitioned disks that open exclusively are written to; a disk holding
disktier's label is remounted, never reformatted. Re-running is safe: it does only what is missing.

Exit status: 0 set up (or nothing was missing, or undone), 1 no eligible disk: nothing was set up, 2 usage or runtime error (a disk refused, a step failed).")]
pub struct Args {
    /// Mount point (with --layout separate: DIR/0, DIR/1, ... one per disk).
    #[arg(long, value_name = "DIR")]
    pub mount: PathBuf,
    /// Use exactly these whole disks (comma-separated; /dev/disk/by-id paths are stable).
    /// Default: every eligible instance store, GCP local SSD and Azure temp NVMe disk.
    #[arg(long, value_delimiter = ',', value_name = "DEV,...")]
    pub devices: Vec<String>,
    /// auto: one disk direct, several RAID0 (mdadm); separate: one filesystem per disk.
    #[arg(long, value_enum, default_value_t = LayoutArg::Auto)]
    pub layout: LayoutArg,
    /// Filesystem to make.
    #[arg(long, value_enum, default_value_t = FsArg::Xfs)]
    pub fs: FsArg,
    /// Filesystem label (and md array name): how later runs recognise the disks.
    #[arg(long, default_value = "disktier")]
    pub label: String,
    /// Mount options added to defaults,noatime (comma-separated), e.g. prjquota,discard; an
    /// atime option (relatime, strictatime, ...) replaces the noatime.
    #[arg(long, value_delimiter = ',', value_name = "OPT,...")]
    pub options: Vec<String>,
    /// Owner of the mount point, user:group (e.g. ec2-user:ec2-user).
    #[arg(long, value_name = "USER:GROUP")]
    pub owner: Option<String>,
    /// Mode of the mount point, octal (e.g. 0755).
    #[arg(long, value_name = "OCTAL")]
    pub mode: Option<String>,
    /// Directories to move onto the new filesystem: their content is copied in, then the
    /// filesystem's copy is bind-mounted over them (comma-separated), parent before child.
    #[arg(long, value_delimiter = ',', value_name = "DIR,...")]
    pub bind: Vec<PathBuf>,
    /// Make the mounts survive reboots: systemd mount units or fstab lines (by UUID, nofail).
    #[arg(long, value_enum, default_value_t = PersistArg::None)]
    pub persist: PersistArg,
    /// Print the exact commands it would run, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --persist systemd: let the boot-time unit run this binary even from a build,
    /// temporary or home directory (normally refused: install it, e.g. to /usr/local/bin).
    #[arg(long)]
    pub allow_build_binary: bool,
    /// Mount over a --mount directory that is not empty, hiding what it holds until it is
    /// unmounted (normally refused).
    #[arg(long)]
    pub allow_nonempty: bool,
    /// Read the node below DIR (fixture trees; only with --dry-run).
    #[arg(long, hide = true, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    /// Write persisted units / fstab below DIR instead of / (tests).
    #[arg(long, hide = true, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Reverse what setup did at --mount: unmount its binds and filesystem, remove the units and
    /// fstab lines it wrote (only those). Journaled: a re-run completes a killed undo.
    #[arg(long, conflicts_with_all = ["devices", "bind", "persist", "owner", "mode", "options", "allow_nonempty", "layout", "fs", "allow_build_binary"])]
    pub undo: bool,
    /// With --undo, required when binds exist: copy-back copies what the binds show back into
    /// the directories underneath; keep leaves those directories as they were before setup.
    #[arg(long, value_enum, requires = "undo", value_name = "CHOICE")]
    pub binds: Option<BindsArg>,
    /// With --undo: also erase the filesystem signature (wipefs) of the device setup made,
    /// after re-checking it is that filesystem, unmounted and unused.
    #[arg(long, requires = "undo")]
    pub wipe: bool,
    /// Mount table read by --undo (tests).
    #[arg(
        long,
        hide = true,
        value_name = "FILE",
        default_value = "/proc/self/mountinfo"
    )]
    pub mountinfo: PathBuf,
}

value_enum! {
    pub enum BindsArg => BindChoice { CopyBack, Keep }
}

value_enum! {
    pub enum LayoutArg => LayoutChoice { Auto, Raid0, Separate }
}

value_enum! {
    /// `--fs` of setup and render.
    pub enum FsArg => FsType { Xfs, Ext4 }
}

value_enum! {
    pub enum PersistArg => Persist { None, Systemd, Fstab }
}

impl Args {
    fn into_request(self) -> SetupRequest {
        let mut c = SetupRequest::new(self.mount);
        c.devices = (!self.devices.is_empty()).then_some(self.devices);
        c.layout = self.layout.into();
        c.fs = self.fs.into();
        c.label = self.label;
        c.options = self.options;
        c.owner = self.owner;
        c.mode = self.mode;
        c.bind = self.bind;
        c.persist = self.persist.into();
        c.persist_root = self.root;
        c.dry_run = self.dry_run;
        c.allow_build_binary = self.allow_build_binary;
        c.allow_nonempty = self.allow_nonempty;
        c
    }

    fn into_undo(self) -> UndoOptions {
        UndoOptions {
            mount: self.mount,
            label: self.label,
            binds: self.binds.map(BindChoice::from),
            wipe: self.wipe,
            persist_root: self.root,
            mountinfo: self.mountinfo,
            dry_run: self.dry_run,
            sysfs_root: self.sysfs_root,
        }
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    if args.undo {
        return run_undo(ctx, args);
    }
    undo_only_flags(&args)?;
    let sysfs_root = args.sysfs_root.clone();
    // The boot-time unit of --persist systemd runs this very binary again (see `boot_binary`).
    let exe = std::env::current_exe().ok();
    let report = set_up(args.into_request(), sysfs_root.as_deref(), exe, runner)?;
    if ctx.json() {
        print_json(&report)?;
    } else {
        print_text(ctx, &report)?;
    }
    if let Some(why) = nothing_set_up(&report) {
        ctx.note(why);
        return Ok(Outcome::Fail);
    }
    Ok(Outcome::Pass)
}

/// Refuses `--wipe` and `--binds` without `--undo`. clap's `requires = "undo"` says so only
/// when no flag that conflicts with `--undo` is given: with `--devices` (or `--options`,
/// `--bind`, ...) it let them through, and setup ran as if they were not there (found by QA:
/// `setup --devices D --mount M --wipe --dry-run` planned a setup).
fn undo_only_flags(args: &Args) -> anyhow::Result<()> {
    let given: Vec<&str> = [("--wipe", args.wipe), ("--binds", args.binds.is_some())]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(flag, _)| *flag)
        .collect();
    if !given.is_empty() {
        let flags = given.join(" and ");
        let (go, say) = if given.len() == 1 {
            ("goes", "it says")
        } else {
            ("go", "they say")
        };
        anyhow::bail!(
            "{flags} only {go} with --undo ({say} how the setup at --mount is reversed): add --undo to reverse it, or drop {flags} to set up"
        );
    }
    Ok(())
}

fn run_undo(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let r = undo(args.into_undo(), runner)?;
    if ctx.json() {
        print_json(&r)?;
        return Ok(Outcome::Pass);
    }
    for n in &r.notes {
        note(ctx, n);
    }
    for s in &r.steps {
        if r.dry_run {
            print_script(&s.description, &s.commands)?;
        } else {
            outln!("{:<9} {}", s.status, s.description)?;
        }
    }
    if !r.dry_run {
        if r.changed {
            outln!("{}: setup undone", r.mount)?;
        } else {
            outln!("{}: nothing to undo", r.mount)?;
        }
    }
    Ok(Outcome::Pass)
}

/// The runner for setup's tools. SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the tool running
/// (with its process group: it runs in one of its own, which a terminal's Ctrl-C does not
/// reach) and setup at the next safe point, which says what state the disk is in (QA: Ctrl-C
/// left mkfs running detached). A second signal does not end the process: it would leave the
/// tool running.
fn runner() -> StoppableRunner {
    let flag = super::progress::restoring_stop_flag();
    acknowledge_stop(std::sync::Arc::clone(&flag));
    StoppableRunner::new(flag)
}

/// Says at once that a stop was heard: the tool running can take a while to exit (a throttled
/// or slow disk: QA saw 52 s of silence after Ctrl-C while a stopped mkfs finished its writes),
/// and a user who hears nothing presses Ctrl-C again or kills the process.
fn acknowledge_stop(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    std::thread::spawn(move || {
        while !flag.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let signal = super::progress::restoring_signal().unwrap_or("a signal");
        errln!(
            "{signal}: stopping: the tool running is stopped and waited for, then setup says what state the disk is in (on a slow disk this can take a while; another signal does not skip it)"
        );
    });
}

/// A note of setup's or its undo's. Notes quote what the node holds (mount points from the
/// mount table, which the kernel writes with their escape characters, process names): no
/// control character of theirs reaches the terminal (found by QA).
fn note(ctx: &Ctx, n: &str) {
    ctx.note(crate::text::printable(&format!("note: {n}"), false));
}

/// A dry run's step: its description as a shell comment, then its commands.
fn print_script(description: &str, commands: &[String]) -> anyhow::Result<()> {
    outln!("# {description}")?;
    for c in commands {
        outln!("{c}")?;
    }
    Ok(())
}

fn print_text(ctx: &Ctx, r: &Report) -> anyhow::Result<()> {
    for n in &r.notes {
        note(ctx, n);
    }
    if r.dry_run {
        if r.steps.is_empty() {
            ctx.note("dry run: nothing to change");
        }
        for s in &r.steps {
            print_script(&s.description, &s.commands)?;
        }
        return Ok(());
    }
    for s in &r.steps {
        match &s.note {
            Some(n) => outln!("{:<9} {} ({n})", s.status, s.description)?,
            None => outln!("{:<9} {}", s.status, s.description)?,
        }
    }
    if r.layout.is_some() && !r.changed {
        outln!("{} is set up: nothing to change", r.mount)?;
    } else if r.layout.is_some() {
        let devs: Vec<&str> = r.devices.iter().map(|d| d.path.as_str()).collect();
        outln!(
            "{} is set up on {} ({})",
            r.mount,
            devs.join(", "),
            r.fs.as_str()
        )?;
    }
    Ok(())
}
