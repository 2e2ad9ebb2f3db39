//! Fuzz targets (bolero) for what `interfere` reads from outside: the journal a killed run left
//! (the one file a restore acts on), a block device's scheduler line, and `/proc/self/mountinfo`
//! as the cgroup detection reads it.
//!
//! In `cargo test` each target replays its checked-in corpus (`tests/__fuzz__/<name>/corpus`)
//! and runs random inputs for two seconds; `bench/fuzz.sh TARGET MINUTES` (or
//! `BOLERO_RANDOM_TEST_TIME_MS=...`) runs one long. One input must finish within
//! [`WATCHDOG_LIMIT`](disktier_testkit::fuzz::WATCHDOG_LIMIT) (a watchdog aborts otherwise) and is at most [`MAX_INPUT`](disktier_testkit::fuzz::MAX_INPUT) bytes.

use disktier_interfere::journal::{self, Change};
use disktier_testkit::bolero_check;
use disktier_testkit::fuzz::guarded;
use std::path::{Component, Path};

/// Memory is capped as in the other crates' targets (docs/fuzzing.md, "Limits in the harness"):
/// an input that allocates past it aborts the run instead of taking the machine's memory.
#[global_allocator]
static ALLOC: disktier_testkit::fuzz::CappedAlloc =
    disktier_testkit::fuzz::CappedAlloc::new(1 << 30);

/// Whether the last component of `p` starts with `prefix` (a name disktier gives).
fn named(p: &Path, prefix: &str) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

fn clean(p: &Path) -> bool {
    p.is_absolute()
        && p.components()
            .skip(1)
            .all(|c| matches!(c, Component::Normal(_)))
}

#[test]
fn fuzz_journal_entries() {
    // Entries of the right shape with fuzz-chosen fields (random bytes seldom make JSON): the
    // same property as `fuzz_journal`, reached far more often.
    bolero_check!()
        .with_type::<Vec<(u8, String, String, i32, u64)>>()
        .for_each(|entries| {
            guarded(|| {
                let list: Vec<serde_json::Value> = entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, a, b, pid, t))| {
                        let base = ["/sys/block/", "/sys/fs/cgroup/", "/tmp/", "", "/"][*k as usize / 6 % 5];
                        let path = format!("{base}{a}");
                        match k % 6 {
                            0 => serde_json::json!({"id": i, "what": "w", "kind": "scheduler", "device": a, "file": format!("/sys/block/{a}/queue/scheduler"), "was": b}),
                            1 => serde_json::json!({"id": i, "what": "w", "kind": "cgroup", "path": path}),
                            2 => serde_json::json!({"id": i, "what": "w", "kind": "subtree_control", "file": path, "controller": b}),
                            3 => serde_json::json!({"id": i, "what": "w", "kind": "dir", "path": path}),
                            4 => serde_json::json!({"id": i, "what": "w", "kind": "process", "pid": pid, "start_time": t}),
                            _ => serde_json::json!({"id": i, "what": "w", "kind": "rehome", "pid": pid, "start_time": t, "home": path}),
                        }
                    })
                    .collect();
                let doc = serde_json::json!({"schema_version": 1, "owner_pid": 1, "entries": list});
                check_journal(doc.to_string().as_bytes());
            })
        });
}

#[test]
fn fuzz_journal() {
    // Whatever a journal file holds, parsing never panics, and what it accepts is only ever
    // what disktier itself records.
    bolero_check!().for_each(|input: &[u8]| guarded(|| check_journal(input)));
}

fn check_journal(input: &[u8]) {
    {
        {
            let Ok(changes) = journal::parse(input) else {
                return;
            };
            for c in changes {
                match &c {
                    Change::Scheduler {
                        device, file, was, ..
                    } => {
                        assert_eq!(
                            *file,
                            Path::new("/sys/block").join(device).join("queue/scheduler")
                        );
                        assert!(!device.contains('/') && device != ".." && device != ".");
                        assert!(!was.is_empty() && !was.contains(char::is_whitespace));
                    }
                    Change::Cgroup { path } => {
                        assert!(clean(path) && named(path, journal::CGROUP_PREFIX));
                    }
                    Change::SubtreeControl { file, controller } => {
                        assert!(clean(file) && controller == "io");
                        assert!(file.ends_with("cgroup.subtree_control"));
                    }
                    Change::Dir { path } => {
                        assert!(clean(path) && named(path, journal::DIR_PREFIX));
                    }
                    Change::Process {
                        pid, start_time, ..
                    } => {
                        assert!(*pid > 1 && *start_time > 0)
                    }
                    Change::Rehome { pid, home, .. } => assert!(*pid > 1 && clean(home)),
                    Change::QueueSettings {
                        device,
                        scheduler,
                        values,
                        ..
                    } => {
                        assert!(!device.contains('/') && device != ".." && device != ".");
                        assert!(!scheduler.is_empty() && !scheduler.contains(char::is_whitespace));
                        for (k, v) in values {
                            // Only files of the queue directory, never a path out of it.
                            assert!(k == "nr_requests" || k.starts_with("iosched/"), "{k}");
                            assert!(!k.contains("..") && k.matches('/').count() <= 1, "{k}");
                            assert!(!v.contains('\n'), "{v:?}");
                        }
                    }
                }
                // Its words never carry a line break into --restore's output.
                assert!(!c.to_string().contains('\n'), "{c}");
            }
        }
    }
}

#[test]
fn fuzz_scheduler_line() {
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            let s = disktier_interfere::scheduler::parse(&String::from_utf8_lossy(input));
            assert!(s.active.is_empty() || s.available.contains(&s.active));
        })
    });
}

#[test]
fn fuzz_mountinfo() {
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            let s = disktier_interfere::cgroup::Support::from_mountinfo(&String::from_utf8_lossy(
                input,
            ));
            let _ = s.preferred();
            // The mount holding a path (btrfs's block device is its mount's source).
            let text = String::from_utf8_lossy(input);
            for path in ["/", "/var/lib/etcd", "/srv/etcd data"] {
                let _ = disktier_interfere::scheduler::mount_of(&text, std::path::Path::new(path));
            }
        })
    });
}
