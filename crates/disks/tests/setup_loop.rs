//! `setup` on real loop devices with real mkfs.xfs/mkfs.ext4, mount, bind mounts, blkid and
//! wipefs: first run, re-run (changes nothing), stop/start (wipefs, then everything again),
//! crashes at each step (a re-run completes), and a persisted unit checked by
//! `systemd-analyze verify`. Loop devices are class `loop`, so `--devices` names them.

use disktier_cmd::{Cmd, CmdError, CommandRunner, Output, RealRunner, RecordingRunner};
use disktier_disks::setup::{
    persist, plan::derived_uuid, setup, FsType, Persist, Report, SetupConfig,
};
use disktier_testkit::cli::assert_any_starts_with;
use disktier_testkit::{
    blkid, have, is_mount_point, loop_with_mount_point, require, require_loop_xfs, LoopDev, Unmount,
};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

mod support;
use support::{killed_at, mp, request_on, xfs_loop, xfs_mount, XFS_SIZE};

fn run(c: &SetupConfig, runner: &dyn CommandRunner) -> Report {
    setup(c, Path::new("/"), runner).unwrap_or_else(|e| panic!("setup failed: {e:#?}"))
}

fn did(rep: &Report, what: &str) -> bool {
    rep.steps
        .iter()
        .any(|s| s.status == "done" && s.commands.iter().any(|c| c.starts_with(what)))
}

/// Runs the checker `args` (`systemd-analyze verify`, `findmnt --verify`) on `file` and asserts it
/// passes; returns its stdout and stderr.
fn passes(args: &[&str], file: &Path) -> (String, String) {
    let o = Command::new(args[0])
        .args(&args[1..])
        .arg(file)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "{} {}: {out}{err}",
        args.join(" "),
        file.display()
    );
    (out, err)
}

#[test]
fn xfs_with_binds_rerun_stop_start_and_persisted_units() {
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("mnt");
    let app = tmp.path().join("data/app");
    let cache = app.join("cache");
    let _guard = Unmount(vec![mnt.clone(), app.clone(), cache.clone()]);
    // Pre-existing content that must survive: a file with owner and mode, and a child dir.
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(app.join("image.tar"), b"pre-pulled layer").unwrap();
    std::fs::write(cache.join("blob"), b"cached").unwrap();
    std::os::unix::fs::chown(app.join("image.tar"), Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(
        app.join("image.tar"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();

    let mut c = request_on(&dev, &mnt);
    c.bind = vec![cache.clone(), app.clone()];
    c.owner = Some("1234:1235".into());
    c.mode = Some("0750".into());
    c.persist = Persist::Systemd;
    c.persist_root = tmp.path().join("root");
    // No boot-time unit: a loop device has only its kernel name, which the unit must not name
    // (see a_kernel_name_is_never_persisted).
    let c = c.check().unwrap();

    let rep = run(&c, &RealRunner);
    assert!(
        rep.changed && did(&rep, "mkfs.xfs -K -L disktier"),
        "{rep:#?}"
    );
    assert_eq!(blkid(&dev.path, "LABEL"), "disktier");
    assert_eq!(blkid(&dev.path, "UUID"), derived_uuid("disktier", &mnt));
    assert!(is_mount_point(&mnt) && is_mount_point(&app) && is_mount_point(&cache));
    let m = std::fs::metadata(&mnt).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1234, 1235, 0o750));
    // The content is visible through the bind, and lives on the new filesystem.
    let img = std::fs::metadata(app.join("image.tar")).unwrap();
    assert_eq!(
        std::fs::read(app.join("image.tar")).unwrap(),
        b"pre-pulled layer"
    );
    assert_eq!(
        (img.uid(), img.gid(), img.mode() & 0o777),
        (4321, 4322, 0o640)
    );
    assert_eq!(std::fs::read(cache.join("blob")).unwrap(), b"cached");
    let on_fs = mnt.join(app.strip_prefix("/").unwrap());
    assert_eq!(
        std::fs::read(on_fs.join("image.tar")).unwrap(),
        b"pre-pulled layer"
    );
    assert_eq!(
        std::fs::metadata(&app).unwrap().dev(),
        std::fs::metadata(&mnt).unwrap().dev(),
        "the bind shows the new filesystem"
    );
    // Persisted units: names as systemd-escape makes them, accepted by systemd-analyze.
    let units = tmp.path().join("root/etc/systemd/system");
    let main_unit = units.join(persist::mount_unit_name(&mp(&mnt)));
    let text = std::fs::read_to_string(&main_unit).unwrap();
    assert!(text.contains(&format!(
        "What=/dev/disk/by-uuid/{}",
        derived_uuid("disktier", &mnt)
    )));
    // `systemctl --root` links to the unit's path as seen from that root: check the link itself.
    assert!(std::fs::symlink_metadata(
        units
            .join("local-fs.target.wants")
            .join(persist::mount_unit_name(&mp(&mnt)))
    )
    .is_ok());
    if have("systemd-analyze") {
        for u in [
            main_unit.clone(),
            units.join(persist::mount_unit_name(&mp(&app))),
        ] {
            let (_, err) = passes(&["systemd-analyze", "verify"], &u);
            assert!(!err.contains("Refusing"), "{err}");
        }
    }

    // Re-run after success: nothing planned, nothing run.
    let rec = Recorder::default();
    let rep2 = run(&c, &rec);
    assert!(!rep2.changed && rep2.steps.is_empty(), "{:#?}", rep2.steps);
    assert!(!rec.log().contains("mkfs"), "{}", rec.log());

    // Stop/start: the disk comes back blank, the root-side directories still hold the old
    // content under the (now gone) binds.
    drop(_guard);
    assert!(!is_mount_point(&mnt));
    Command::new("wipefs")
        .arg("-a")
        .arg(&dev.path)
        .output()
        .unwrap();
    assert_eq!(blkid(&dev.path, "TYPE"), "");
    let _guard = Unmount(vec![mnt.clone(), app.clone(), cache.clone()]);
    let rep3 = run(&c, &RealRunner);
    assert!(
        did(&rep3, "mkfs.xfs"),
        "re-created after stop/start: {rep3:#?}"
    );
    assert_eq!(
        blkid(&dev.path, "UUID"),
        derived_uuid("disktier", &mnt),
        "same UUID: the units stay valid"
    );
    assert_eq!(
        std::fs::read(app.join("image.tar")).unwrap(),
        b"pre-pulled layer"
    );
    assert!(
        !rep3
            .steps
            .iter()
            .any(|s| s.description.starts_with("write")),
        "units unchanged: {:#?}",
        rep3.steps
    );
}

/// Real runner that records what it runs, for "the second run ran no mkfs".
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<String>>);
impl Recorder {
    fn log(&self) -> String {
        self.0.lock().unwrap().join("\n")
    }
}
impl CommandRunner for Recorder {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        self.0.lock().unwrap().push(cmd.to_string());
        RealRunner.output(cmd)
    }
    fn has_program(&self, p: &str) -> bool {
        RealRunner.has_program(p)
    }
}

/// Real runner that "crashes" (fails) at the first command of one program.
fn crash_at(program: &'static str) -> impl CommandRunner {
    let answer = Ok(Output {
        status: 137,
        stdout: String::new(),
        stderr: "killed".into(),
    });
    killed_at(move |cmd| cmd.program == program, answer)
}

#[test]
fn a_crash_at_any_step_is_completed_by_the_next_run() {
    if !require_loop_xfs() {
        return;
    }
    let dev = LoopDev::new(XFS_SIZE);
    for (i, program) in ["mkfs.xfs", "mount", "chown", "cp", "mv", "systemctl"]
        .iter()
        .enumerate()
    {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let mnt = tmp.path().join(format!("mnt{i}"));
        let dir = tmp.path().join("state");
        let _guard = Unmount(vec![mnt.clone(), dir.clone()]);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keep"), b"keep me").unwrap();
        let mut c = request_on(&dev, &mnt);
        c.bind = vec![dir.clone()];
        c.owner = Some("0:0".into());
        c.persist = Persist::Systemd;
        c.persist_root = tmp.path().join("root");
        let c = c.check().unwrap();
        let crash = crash_at(program);
        let e = setup(&c, Path::new("/"), &crash).unwrap_err();
        assert!(e.to_string().contains("re-run setup"), "{e}");
        let crashed_after_mkfs = *program != "mkfs.xfs";
        let rec = Recorder::default();
        let rep = run(&c, &rec);
        assert_eq!(
            rec.log().contains("mkfs"),
            !crashed_after_mkfs,
            "crash at {program}: {}",
            rec.log()
        );
        assert!(
            is_mount_point(&mnt) && is_mount_point(&dir),
            "crash at {program}"
        );
        assert_eq!(
            std::fs::read(dir.join("keep")).unwrap(),
            b"keep me",
            "crash at {program}"
        );
        assert!(tmp
            .path()
            .join("root/etc/systemd/system")
            .join(persist::mount_unit_name(&mp(&mnt)))
            .exists());
        assert!(rep.changed);
        // And a third run has nothing left to do.
        let rep = run(&c, &RealRunner);
        assert!(rep.steps.is_empty(), "crash at {program}: {:#?}", rep.steps);
        drop(_guard);
        Command::new("wipefs")
            .arg("-a")
            .arg(&dev.path)
            .output()
            .unwrap();
    }
}

#[test]
fn ext4_on_request_with_label_and_noatime() {
    if !require_loop_xfs() || !require(have("mkfs.ext4"), "mkfs.ext4") {
        return;
    }
    let (dev, tmp, mnt, _guard) = loop_with_mount_point(64 << 20, "m");
    let mut c = request_on(&dev, &mnt);
    c.fs = FsType::Ext4;
    c.label = "scratch-ext4".into();
    c.persist = Persist::Fstab;
    c.persist_root = tmp.path().join("root");
    let rep = run(&c.check().unwrap(), &RealRunner);
    assert!(did(&rep, "mkfs.ext4 -L scratch-ext4"));
    assert_eq!(blkid(&dev.path, "TYPE"), "ext4");
    assert_eq!(blkid(&dev.path, "LABEL"), "scratch-ext4");
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = mi
        .lines()
        .find(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap()))
        .unwrap();
    assert!(line.contains("noatime"), "{line}");
    // The fstab line resolves (UUID -> this device) and checks out with findmnt --verify.
    let fstab = tmp.path().join("root/etc/fstab");
    let text = std::fs::read_to_string(&fstab).unwrap();
    assert!(
        text.starts_with(&format!("UUID={} ", derived_uuid("scratch-ext4", &mnt))),
        "{text}"
    );
    assert!(text.contains("defaults,noatime,nofail"), "{text}");
    // --devices named the kernel name /dev/loopN: never persisted, and a warning says so.
    assert!(!text.contains(&dev.path.display().to_string()), "{text}");
    assert!(
        rep.notes
            .iter()
            .any(|n| n.starts_with("warning:") && n.contains("kernel name")),
        "{:?}",
        rep.notes
    );
    if have("findmnt") {
        let (out, _) = passes(&["findmnt", "--verify", "--verbose", "--tab-file"], &fstab);
        assert!(
            out.contains(&format!("translated to {}", dev.path.display())),
            "{out}"
        );
    }
}

/// `--persist systemd` with a boot-time unit and `--devices /dev/loopN`: the unit would have to
/// name the kernel name (a loop device has no /dev/disk/by-id/ link), so setup refuses before
/// changing anything; the mount units alone (no boot unit) name the UUID, with a warning.
#[test]
fn a_kernel_name_is_never_persisted() {
    let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
    let mut c = request_on(&dev, &mnt);
    c.persist = Persist::Systemd;
    c.persist_root = tmp.path().join("root");
    c.boot_binary = Some(std::env::current_exe().unwrap());
    c.allow_build_binary = true;
    let e = setup(&c.clone().check().unwrap(), Path::new("/"), &RealRunner).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("kernel name") && msg.contains("/dev/disk/by-id/"),
        "{msg}"
    );
    assert_eq!(blkid(&dev.path, "TYPE"), "", "refused before mkfs");
    // Nothing persisted: no unit, no fstab; only the lock every changing run holds.
    let root = tmp.path().join("root");
    assert!(!root.join("etc").exists(), "nothing persisted");
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        left,
        ["var"],
        "only the setup lock below {}",
        root.display()
    );
    assert!(root.join("var/lib/disktier/setup.lock").is_file());

    c.boot_binary = None;
    let rep = run(&c.check().unwrap(), &RealRunner);
    assert_any_starts_with(&rep.notes, "warning:");
    let units = tmp.path().join("root/etc/systemd/system");
    let unit = std::fs::read_to_string(units.join(persist::mount_unit_name(&mp(&mnt)))).unwrap();
    assert!(
        unit.contains(&format!(
            "What=/dev/disk/by-uuid/{}",
            derived_uuid("disktier", &mnt)
        )),
        "{unit}"
    );
    for e in std::fs::read_dir(&units).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let t = std::fs::read_to_string(&p).unwrap();
            assert!(
                !t.contains(&dev.path.display().to_string()),
                "{}: {t}",
                p.display()
            );
        }
    }
}

#[test]
fn dry_run_on_a_real_device_changes_nothing() {
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let before = dev.checksum();
    let mut c = request_on(&dev, tmp.path().join("m"));
    c.dry_run = true;
    let rec = Recorder::default();
    let rep = run(&c.check().unwrap(), &rec);
    assert!(rep
        .steps
        .iter()
        .any(|s| s.commands[0].starts_with("mkfs.xfs -K")));
    assert!(
        rec.log().lines().all(|l| l.starts_with("blkid -p")),
        "{}",
        rec.log()
    );
    assert!(!tmp.path().join("m").exists());
    assert_eq!(dev.checksum(), before);
    let _ = RecordingRunner::new();
}

/// A real runner that lets an intruder act on `dev` after discovery's `blkid -p` of it found it
/// blank, at the step loop's look for a stop (`stopped`) right before the mkfs step: the disk
/// changes after it was planned as blank and before the re-check claims and probes it. (An
/// intruder that claims the disk during the re-check is kept out: setup_concurrent_loop.rs.)
struct IntrudeBeforeRecheck {
    dev: String,
    seen: std::sync::atomic::AtomicUsize,
    intrude: Box<dyn Fn() + Send + Sync>,
}
impl CommandRunner for IntrudeBeforeRecheck {
    fn stopped(&self) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        // After the first blkid of the device (seen 1), once (seen 2 after).
        if self.seen.compare_exchange(1, 2, SeqCst, SeqCst).is_ok() {
            (self.intrude)();
        }
        false
    }
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        if cmd.program == "blkid" && cmd.args.last() == Some(&self.dev) {
            let _ = self.seen.compare_exchange(
                0,
                1,
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
            );
        }
        assert!(
            !(cmd.program.starts_with("mkfs")
                && cmd
                    .args
                    .iter()
                    .any(|a| a == "-f" || a == "-F" || a == "--force")),
            "a force flag reached mkfs: {cmd}"
        );
        RealRunner.output(cmd)
    }
    fn has_program(&self, p: &str) -> bool {
        RealRunner.has_program(p)
    }
}

fn refused_step(c: &SetupConfig, runner: &dyn CommandRunner) -> String {
    match setup(c, Path::new("/"), runner) {
        Ok(rep) => panic!("setup went ahead: {:?}", rep.steps),
        Err(disktier_disks::setup::SetupError::Step { source, .. }) => source.to_string(),
        Err(e) => panic!("unexpected error: {e:#?}"),
    }
}

#[test]
fn a_disk_formatted_between_plan_and_mkfs_is_left_alone() {
    if !require_loop_xfs() || !require(have("mkfs.ext4"), "mkfs.ext4") {
        return;
    }
    let (dev, _tmp, mnt, _guard) = loop_with_mount_point(XFS_SIZE, "m");
    let c = request_on(&dev, &mnt);
    let c = c.check().unwrap();
    let path = dev.path.clone();
    let runner = IntrudeBeforeRecheck {
        dev: dev.path.display().to_string(),
        seen: Default::default(),
        intrude: Box::new(move || {
            let ok = Command::new("mkfs.ext4")
                .args(["-q", "-L", "theirs"])
                .arg(&path)
                .status()
                .unwrap()
                .success();
            assert!(ok, "the intruder's mkfs.ext4 failed");
        }),
    };
    let e = refused_step(&c, &runner);
    assert!(
        e.contains("changed since it was planned") && e.contains("ext4"),
        "{e}"
    );
    // The intruder's filesystem is intact: mkfs.xfs never ran.
    assert_eq!(blkid(&dev.path, "TYPE"), "ext4");
    assert_eq!(blkid(&dev.path, "LABEL"), "theirs");
    assert!(!is_mount_point(&mnt));
}

#[test]
fn a_disk_opened_exclusively_between_plan_and_mkfs_is_left_alone() {
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let before = dev.checksum();
    let c = request_on(&dev, tmp.path().join("m"));
    let c = c.check().unwrap();
    let holder: std::sync::Arc<std::sync::Mutex<Option<std::fs::File>>> = Default::default();
    let (h, path) = (holder.clone(), dev.path.clone());
    let runner = IntrudeBeforeRecheck {
        dev: dev.path.display().to_string(),
        seen: Default::default(),
        intrude: Box::new(move || {
            use std::os::unix::fs::OpenOptionsExt;
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_EXCL)
                .open(&path)
                .unwrap();
            *h.lock().unwrap() = Some(f);
        }),
    };
    let e = refused_step(&c, &runner);
    assert!(e.contains("exclusively"), "{e}");
    drop(holder.lock().unwrap().take());
    assert_eq!(dev.checksum(), before, "nothing was written");
}
