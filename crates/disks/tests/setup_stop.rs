//! A signal during `setup` (QA: Ctrl-C left mkfs running detached): the runner stops the
//! command running (crates/cmd's `StoppableRunner`, tested there with real processes), setup
//! runs no further step, erases the half-made filesystem that the stopped mkfs left, and says
//! what is done, what is not and how to go on. Here the stop is scripted through a runner that
//! answers from the recording runner; crates/disktier/tests/setup_signal_cli.rs sends real
//! signals to the binary on a loop device.

use disktier_cmd::{Cmd, CmdError, CommandRunner, Output, RecordingRunner};
use disktier_disks::setup::plan::derived_uuid;
use disktier_disks::setup::{setup, SetupError, SetupRequest};
use disktier_testkit::cli::sysfs_fixture as fixture;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Answers from `inner` until a command of `program` runs: that one is "stopped by a signal",
/// and from then on only clean-ups run (as `StoppableRunner` does).
struct StopAt {
    program: &'static str,
    inner: RecordingRunner,
    stopped: AtomicBool,
}

impl CommandRunner for StopAt {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        if cmd.even_when_stopped {
            return self.inner.output(cmd);
        }
        if self.stopped() {
            return Err(CmdError::NotStarted {
                cmd: cmd.to_string(),
            });
        }
        if cmd.program == self.program {
            self.inner.output(cmd)?;
            self.stopped.store(true, Ordering::SeqCst);
            return Err(CmdError::Stopped {
                cmd: cmd.to_string(),
            });
        }
        self.inner.output(cmd)
    }
    fn has_program(&self, p: &str) -> bool {
        self.inner.has_program(p)
    }
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

fn stop_at(program: &'static str) -> StopAt {
    StopAt {
        program,
        inner: RecordingRunner::new(),
        stopped: AtomicBool::new(false),
    }
}

#[test]
fn a_stop_during_mkfs_erases_its_half_made_filesystem_and_runs_nothing_after() {
    let c = SetupRequest::new("/data").check().unwrap();
    let r = stop_at("mkfs.xfs");
    // After the stop, blkid finds what the stopped mkfs.xfs wrote: our label's UUID.
    let uuid = derived_uuid("disktier", Path::new("/data"));
    r.inner
        .on("blkid", &["-p", "-s", "UUID"], 0, &format!("{uuid}\n"));
    let e = setup(&c, &fixture("aws-m6id-xlarge"), &r).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SetupError::Interrupted { .. }), "{msg}");
    let t = r.inner.transcript();
    let after: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("mkfs.xfs"))
        .collect();
    assert_eq!(after.len(), 3, "{t}");
    assert!(
        after[1].starts_with("blkid -p -s UUID -o value /dev/"),
        "{t}"
    );
    assert!(after[2].starts_with("wipefs -a /dev/"), "{t}");
    for want in [
        "interrupted by a signal during step 1 of ",
        "(make xfs labelled disktier on /dev/",
        "its command was stopped and waited for",
        "was erased (wipefs -a): the disk is blank again",
        "Nothing else was changed",
        "Not run: create directory /data; mount ",
        "Run the same `disktier setup` command again to finish",
    ] {
        assert!(msg.contains(want), "lacks {want:?}: {msg}");
    }
    // Nothing was mounted: there is nothing for --undo to reverse.
    assert!(!msg.contains("--undo"), "{msg}");
}

#[test]
fn a_filesystem_that_is_not_this_runs_is_left_alone_after_a_stop() {
    let c = SetupRequest::new("/data").check().unwrap();
    let r = stop_at("mkfs.xfs");
    r.inner.on("blkid", &["-p", "-s", "UUID"], 0, "1111-2222\n");
    let msg = setup(&c, &fixture("aws-m6id-xlarge"), &r)
        .unwrap_err()
        .to_string();
    assert!(!r.inner.transcript().contains("wipefs"));
    assert!(
        msg.contains("UUID 1111-2222, not the one this run was making: it was left as it is"),
        "{msg}"
    );
}

#[test]
fn a_stop_after_the_mount_names_the_done_steps_and_the_undo() {
    let mut req = SetupRequest::new("/data");
    req.owner = Some("0:0".into());
    let c = req.check().unwrap();
    let r = stop_at("chown");
    let msg = setup(&c, &fixture("aws-m6id-xlarge"), &r)
        .unwrap_err()
        .to_string();
    for want in [
        "(chown 0:0 /data)",
        "Done before it: make xfs labelled disktier on ",
        "; mount UUID=",
        "or `disktier setup --undo --mount /data` to reverse what was done",
    ] {
        assert!(msg.contains(want), "lacks {want:?}: {msg}");
    }
}
