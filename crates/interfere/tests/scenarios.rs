//! The whole comparison on real loop devices with a real xfs: every mitigation that can run here
//! is applied, checked from the outside while it is in place (the scheduler file, the cgroup
//! files, the aggressor's ioprio), and gone afterwards; the aggressor measurably hurts the probe
//! on a throttled, cloud-like volume.
//!
//! The aggressor runs as a separate process, as in the binary. Here that process is this test
//! binary re-executed with only `aggressor_child_entry` selected and the spec in an environment
//! variable: the entry runs the aggressor's child side when the variable is set and does
//! nothing otherwise.

use disktier_interfere::aggressor::{self, AggressorSpec};
use disktier_interfere::ioprio::{self, IoPrio};
use disktier_interfere::{
    scheduler, AggressorKind, Applied, Combo, Config, InterfereDoc, Mitigation,
};
use disktier_testkit::BlkioThrottle;
use disktier_testkit::{serial_loop_fs, serial_throttleable_fs};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SPEC_ENV: &str = "DISKTIER_TEST_AGGRESSOR_SPEC";

/// Not a test: the aggressor's side when this binary is re-executed by `launcher`.
#[test]
fn aggressor_child_entry() {
    if let Ok(spec) = std::env::var(SPEC_ENV) {
        let spec: AggressorSpec = serde_json::from_str(&spec).unwrap();
        aggressor::process::child_main(&spec).unwrap();
    }
}

/// The scenarios share the machine's cgroup root and disk: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn config(dir: &Path, run_dir: &Path, mitigations: &str, duration: Duration, size: u64) -> Config {
    Config {
        dir: dir.to_path_buf(),
        aggressor: AggressorKind::Ostree,
        aggressor_cmd: None,
        aggressor_size: size,
        mitigations: Combo::parse_list(mitigations).unwrap(),
        duration,
        threshold: Duration::from_millis(10),
        throttle_bps: 8 << 20,
        throttle_iops: 100,
        run_dir: run_dir.to_path_buf(),
        launcher: Box::new(|spec: &AggressorSpec| {
            let mut c = std::process::Command::new(std::env::current_exe().unwrap());
            c.args([
                "aggressor_child_entry",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(SPEC_ENV, serde_json::to_string(spec).unwrap());
            c
        }),
        stop: Arc::new(AtomicBool::new(false)),
        cap: Duration::from_secs(60),
        start_delay: Duration::from_millis(300),
        notes: Box::new(|n: &str| eprintln!("{n}")),
        on_applied: None,
        progress: None,
    }
}

fn blkio_line(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .unwrap_or_default()
        .lines()
        .find(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|c| c.split(',').any(|c| c == "blkio"))
        })
        .unwrap_or_default()
        .to_string()
}

fn leftovers(mount: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(mount)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".disktier-interfere-"))
        .collect();
    let prefix = format!("disktier-interfere-{}", std::process::id());
    for root in ["/sys/fs/cgroup/blkio", "/sys/fs/cgroup/unified"] {
        if let Ok(rd) = std::fs::read_dir(root) {
            v.extend(
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(&prefix)),
            );
        }
    }
    v
}

/// Runs `mitigations` (2 s each, against a 32 MiB aggressor) on `dev` mounted at `mnt`, calling
/// `check` while each scenario's changes are in place (with the device's active scheduler) for
/// the name to record. Afterwards everything must be undone: the scheduler as before, no cgroup
/// or scratch files left, the journal gone. Returns the document and the recorded names.
fn run_checked(
    dev: &disktier_testkit::LoopDev,
    mnt: &Path,
    mitigations: &str,
    check: impl Fn(&Applied, &str) -> String + 'static,
) -> (InterfereDoc, Vec<String>) {
    let sched_file = scheduler::Device::scheduler_file_in(&dev.name(), Path::new("/sys"));
    let before = scheduler::read(&sched_file).unwrap().active;
    let run_dir = tempfile::tempdir().unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut cfg = config(
        mnt,
        run_dir.path(),
        mitigations,
        Duration::from_secs(2),
        32 << 20,
    );
    let (seen2, sf) = (seen.clone(), sched_file.clone());
    cfg.on_applied = Some(Box::new(move |a: &Applied| {
        let active = scheduler::read(&sf).unwrap().active;
        seen2.lock().unwrap().push(check(a, &active));
    }));
    let doc = disktier_interfere::run(&cfg).unwrap();
    assert_eq!(scheduler::read(&sched_file).unwrap().active, before);
    assert!(leftovers(mnt).is_empty(), "{:?}", leftovers(mnt));
    assert!(!run_dir.path().join("interfere.journal").exists());
    let seen = seen.lock().unwrap().clone();
    (doc, seen)
}

#[test]
fn io_classes_and_schedulers_are_applied_read_back_and_restored() {
    let Some((_g, dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let (doc, seen) = run_checked(
        &dev,
        &mnt.dir,
        "ionice-idle,ionice-be7,scheduler-bfq,scheduler-mq-deadline",
        |a, active| {
            let prio = ioprio::get_process(a.aggressor_pid).unwrap();
            let all = |p: IoPrio| prio.iter().all(|(_, g)| *g == p);
            let ok = match a.mitigation {
                Mitigation::IoniceIdle => all(IoPrio::Idle),
                Mitigation::IoniceBe7 => all(IoPrio::BestEffort(7)),
                Mitigation::SchedulerBfq => active == "bfq",
                Mitigation::SchedulerMqDeadline => active == "mq-deadline",
                _ => false,
            };
            assert!(
                ok,
                "{:?} not in place: scheduler {active}, ioprio {prio:?}",
                a.mitigation
            );
            a.mitigation.name().to_string()
        },
    );
    assert_eq!(
        seen,
        [
            "ionice-idle",
            "ionice-be7",
            "scheduler-bfq",
            "scheduler-mq-deadline"
        ]
    );
    assert_eq!(doc.scenarios.len(), 5);
    for s in &doc.scenarios {
        assert!(s.available, "{s:?}");
        let probe = s.probe.as_ref().unwrap();
        assert!(probe.ios > 10, "{}: {} fdatasyncs", s.name, probe.ios);
        if s.name != "baseline" {
            let a = s.aggressor.as_ref().unwrap();
            assert_eq!(a.bytes, 32 << 20, "{}: {a:?}", s.name);
            assert!(!s.applied.is_empty(), "{s:?}");
        }
    }
}

#[test]
fn cgroups_and_writer_policies_are_applied_read_back_and_removed() {
    let Some((_g, dev, mnt)) = serial_throttleable_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let mm = dev.maj_min();
    let (doc, seen) = run_checked(
        &dev,
        &mnt.dir,
        "cgroup-weight,cgroup-throttle,cgroup-latency,writer-per-object-fsync,writer-no-fsync",
        move |a, active| {
            let line = blkio_line(a.aggressor_pid);
            let group = line.rsplit(':').next().unwrap_or("").to_string();
            let dir = Path::new("/sys/fs/cgroup/blkio").join(group.trim_start_matches('/'));
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            match a.mitigation {
                Mitigation::CgroupWeight => {
                    assert!(group.contains("disktier-interfere-"), "{line}");
                    assert_eq!(read("blkio.bfq.weight").trim(), "10");
                    assert_eq!(active, "bfq");
                }
                Mitigation::CgroupThrottle => {
                    assert!(group.contains("disktier-interfere-"), "{line}");
                    assert!(read("blkio.throttle.write_bps_device")
                        .contains(&format!("{mm} {}", 8 << 20)));
                    assert!(read("blkio.throttle.write_iops_device").contains(&format!("{mm} 100")));
                }
                Mitigation::WriterPerObjectFsync | Mitigation::WriterNoFsync => {
                    assert!(!group.contains("disktier-interfere-"), "{line}");
                }
                other => panic!("{other:?} should not have been applied here"),
            }
            a.mitigation.name().to_string()
        },
    );
    let latency = doc
        .scenarios
        .iter()
        .find(|s| s.mitigation.as_deref() == Some("cgroup-latency"))
        .unwrap();
    let v2_has_io = std::fs::read_to_string("/sys/fs/cgroup/unified/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "io"));
    if !v2_has_io {
        assert!(!latency.available);
        let why = latency.unavailable_reason.as_deref().unwrap();
        assert!(
            why.contains("cgroup v2") && why.contains("io controller"),
            "{why}"
        );
    }
    let mut want = vec!["cgroup-weight", "cgroup-throttle"];
    if v2_has_io {
        want.push("cgroup-latency");
    }
    want.extend(["writer-per-object-fsync", "writer-no-fsync"]);
    assert_eq!(seen, want);
    let text = disktier_interfere::render_text(&doc);
    assert!(
        text.contains("cgroup-latency: unavailable") || v2_has_io,
        "{text}"
    );
}

#[test]
fn the_aggressor_worsens_the_tail_on_a_throttled_volume() {
    let Some((_g, dev, mnt)) = serial_throttleable_fs(&SERIAL, 1 << 30, "xfs") else {
        return;
    };
    // A cloud-like volume: this process (the probe) and its children (the aggressor) share one
    // write IOPS budget on the device, as all users of an EBS volume share its provisioned IOPS.
    // The aggressor writes with O_DIRECT, so its I/O is charged to the group it runs in (v1
    // charges buffered writeback to the root group instead).
    let throttle = BlkioThrottle::new(&dev.maj_min(), 300, None);
    let me = std::process::id().to_string();
    std::fs::write(throttle.dir.join("cgroup.procs"), &me).unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let mut cfg = config(
        &mnt.dir,
        run_dir.path(),
        "none",
        Duration::from_secs(3),
        32 << 20,
    );
    cfg.aggressor = AggressorKind::RandWrite;
    let doc = disktier_interfere::run(&cfg);
    std::fs::write("/sys/fs/cgroup/blkio/cgroup.procs", &me).unwrap();
    let doc = doc.unwrap();
    let base = &doc.scenarios[0];
    let none = &doc.scenarios[1];
    let b = base.probe.as_ref().unwrap();
    let n = none.probe.as_ref().unwrap();
    eprintln!("{}", disktier_interfere::render_text(&doc));
    // Any one of three clear signs, each by a wide margin so a busy shared box does not decide it.
    let tail_worse = n.lat_ns.p(99.0).unwrap() > 2 * b.lat_ns.p(99.0).unwrap();
    let max_worse = n.lat_ns.max > 3 * b.lat_ns.max;
    let iops_lower = none.probe_iops.unwrap() < 0.5 * base.probe_iops.unwrap();
    assert!(
        tail_worse || max_worse || iops_lower,
        "the aggressor did not hurt the probe: baseline {b:?} vs {n:?}"
    );
}

/// `a+b`: both parts in place at once (scheduler file and ioprio read back; cgroup weight and
/// the writer policy), in one scenario, and both undone together afterwards.
#[test]
fn combined_mitigations_are_applied_together_and_undone_together() {
    let Some((_g, dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let with_cgroups = BlkioThrottle::available();
    let list = if with_cgroups {
        "scheduler-bfq+ionice-idle,cgroup-weight+writer-per-object-fsync"
    } else {
        "scheduler-bfq+ionice-idle"
    };
    let (doc, seen) = run_checked(&dev, &mnt.dir, list, |a, active| {
        let names: Vec<&str> = a.parts.iter().map(|m| m.name()).collect();
        if a.parts == [Mitigation::SchedulerBfq, Mitigation::IoniceIdle] {
            assert_eq!(active, "bfq");
            let prio = ioprio::get_process(a.aggressor_pid).unwrap();
            assert!(prio.iter().all(|(_, g)| *g == IoPrio::Idle), "{prio:?}");
        } else if a.parts == [Mitigation::CgroupWeight, Mitigation::WriterPerObjectFsync] {
            let line = blkio_line(a.aggressor_pid);
            let group = line.rsplit(':').next().unwrap_or("").to_string();
            assert!(group.contains("disktier-interfere-"), "{line}");
            let dir = Path::new("/sys/fs/cgroup/blkio").join(group.trim_start_matches('/'));
            let w = std::fs::read_to_string(dir.join("blkio.bfq.weight")).unwrap();
            assert_eq!(w.trim(), "10");
            assert_eq!(active, "bfq");
            assert!(
                a.readback
                    .iter()
                    .any(|l| l == "aggressor writer policy: per-object-fsync"),
                "{:?}",
                a.readback
            );
        } else {
            panic!("unexpected scenario {names:?}");
        }
        names.join("+")
    });
    let want: Vec<&str> = list.split(',').collect();
    assert_eq!(seen, want);
    assert_eq!(doc.scenarios.len(), want.len() + 1);
    for (s, w) in doc.scenarios[1..].iter().zip(&want) {
        assert!(s.available, "{s:?}");
        assert_eq!(s.mitigation.as_deref(), Some(*w));
        assert_eq!(s.name, format!("ostree/{w}"));
        assert!(
            s.applied.len() >= 2,
            "both parts read back: {:?}",
            s.applied
        );
    }
}

/// Sets `dev` to mq-deadline with settings of an admin's own (nr_requests 64, read_expire 123,
/// fifo_batch 7): returns them as the kernel reads them back (read_expire is kept in jiffies:
/// 123 ms may read 124), and a reader of any queue file.
fn admin_settings(
    queue: &Path,
    dev: &str,
) -> (Vec<(&'static str, String)>, impl Fn(&str) -> String) {
    disktier_interfere::scheduler::set(&queue.join("scheduler"), dev, "mq-deadline").unwrap();
    let set = [
        ("nr_requests", "64"),
        ("iosched/read_expire", "123"),
        ("iosched/fifo_batch", "7"),
    ];
    for (f, v) in set {
        std::fs::write(queue.join(f), v).unwrap();
    }
    let q = queue.to_path_buf();
    let read = move |f: &str| {
        std::fs::read_to_string(q.join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    let before = set.iter().map(|(f, _)| (*f, read(f))).collect();
    (before, read)
}

/// QA: a switch to bfq and back left mq-deadline's `read_expire`/`fifo_batch` and the queue's
/// `nr_requests` at the kernel's defaults (500, 16, 256) instead of what the admin had set;
/// `cgroup-weight` under cgroup v1 switches to bfq as well. Both must leave them as found.
#[test]
fn a_scheduler_switch_leaves_the_schedulers_tunables_and_nr_requests_as_found() {
    let Some((_g, dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let queue = Path::new("/sys/block").join(dev.name()).join("queue");
    let sched = queue.join("scheduler");
    let (before, read) = admin_settings(&queue, &dev.name());
    let list = if BlkioThrottle::available() {
        "scheduler-bfq,cgroup-weight"
    } else {
        "scheduler-bfq"
    };
    let (doc, seen) = run_checked(&dev, &mnt.dir, list, |a, active| {
        assert_eq!(active, "bfq", "{:?}", a.mitigation);
        a.mitigation.name().to_string()
    });
    assert_eq!(seen.join(","), list);
    for s in &doc.scenarios[1..] {
        assert!(s.available, "{s:?}");
        assert!(
            !s.notes.iter().any(|n| n.contains("refused")),
            "{:?}",
            s.notes
        );
    }
    assert_eq!(scheduler::read(&sched).unwrap().active, "mq-deadline");
    for (f, v) in &before {
        assert_eq!(read(f), *v, "{f} not restored");
    }
}

/// What a run killed while bfq was switched in leaves: `--restore` puts back the scheduler and
/// then the settings the switch reset (mq-deadline's tunables, `nr_requests`).
#[test]
fn a_restore_after_sigkill_puts_back_the_scheduler_and_its_settings() {
    // Forks (losetup) while another test holds a journal lock would hold that lock in the
    // child until exec: one at a time with the other loop-device tests.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dev) = disktier_testkit::loop_dev(64 << 20) else {
        return;
    };
    let name = dev.name();
    let queue = Path::new("/sys/block").join(&name).join("queue");
    let sched = queue.join("scheduler");
    let (before, read) = admin_settings(&queue, &name);
    let values = disktier_interfere::scheduler::read_tunables(&queue);
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // What a run killed at this point leaves: its journal, in the order it was written.
    let entries = serde_json::json!([
            {"id": 1, "what": "settings", "kind": "queue_settings", "device": name, "scheduler": "mq-deadline", "values": values},
            {"id": 2, "what": "scheduler", "kind": "scheduler", "device": name, "file": sched, "was": "mq-deadline"},
    ]);
    let doc = serde_json::json!({"schema_version": 1, "owner_pid": 1, "entries": entries});
    std::fs::write(run.join("interfere.journal"), doc.to_string()).unwrap();
    disktier_interfere::scheduler::set(&sched, &name, "bfq").unwrap();
    disktier_interfere::scheduler::set(&sched, &name, "mq-deadline").unwrap();
    assert_ne!(read("nr_requests"), "64", "the switch did not reset it");
    disktier_interfere::scheduler::set(&sched, &name, "bfq").unwrap();
    let r = disktier_interfere::journal::restore(&run).unwrap();
    assert_eq!(r.undone.len(), 2, "{r:?}");
    assert!(r.failed.is_empty(), "{r:?}");
    assert_eq!(
        disktier_interfere::scheduler::read(&sched).unwrap().active,
        "mq-deadline"
    );
    for (f, v) in &before {
        assert_eq!(read(f), *v, "{f} not restored");
    }
    assert!(!run.join("interfere.journal").exists());
}
