//! Unit tests of `job.rs`.

use super::*;

#[test]
fn cpu_lists_parse_like_fios_cpus_allowed() {
    assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
    assert_eq!(parse_cpu_list("0-3,6"), Ok(vec![0, 1, 2, 3, 6]));
    assert_eq!(parse_cpu_list(" 2 , 1-2 "), Ok(vec![1, 2]));
    assert!(parse_cpu_list("3-1").unwrap_err().contains("backwards"));
    assert!(parse_cpu_list("x")
        .unwrap_err()
        .contains("not a CPU number"));
    assert!(parse_cpu_list("").is_err());
    assert!(parse_cpu_list("1024").unwrap_err().contains("above"));
    let j = Job {
        cpus_allowed: "0-".into(),
        ..Job::default()
    };
    let e = j.validate().unwrap_err().to_string();
    assert!(e.contains("cpus_allowed") && e.contains("0-3,6"), "{e}");
}

fn job() -> Job {
    Job {
        target: "/tmp/x".into(),
        ..Job::default()
    }
}

#[test]
fn defaults_are_fios() {
    let j = Job::default();
    assert_eq!(j.rw, Rw::Read);
    assert_eq!(j.bs, 4096);
    assert_eq!((j.numjobs, j.iodepth, j.rwmixread), (1, 1, 50));
    assert_eq!(j.ioengine, IoEngineKind::IoUring);
    assert!(!j.direct);
    assert!(job().validate().is_ok());
}

#[test]
fn names_round_trip() {
    for rw in Rw::ALL {
        assert_eq!(Rw::from_name(rw.name()), Some(rw));
        let v = serde_json::to_value(rw).unwrap();
        assert_eq!(v, serde_json::json!(rw.name()));
    }
    for e in [
        IoEngineKind::IoUring,
        IoEngineKind::Psync,
        IoEngineKind::Sync,
    ] {
        assert_eq!(IoEngineKind::from_name(e.name()), Some(e));
        assert_eq!(
            serde_json::to_value(e).unwrap(),
            serde_json::json!(e.name())
        );
    }
    assert_eq!(Rw::from_name("trim"), None);
}

#[test]
fn serializes_with_fio_names_and_back() {
    let j = Job {
        rw: Rw::RandRw,
        runtime: Some(Duration::from_secs(60)),
        ramp_time: Duration::from_millis(1500),
        time_based: true,
        ..job()
    };
    let v = j.to_json();
    assert_eq!(v["rw"], "randrw");
    assert_eq!(v["runtime"], "60s");
    assert_eq!(v["ramp_time"], "1500ms");
    assert_eq!(v["ioengine"], "io_uring");
    let back: Job = serde_json::from_value(v).unwrap();
    assert_eq!(back, j);
    // Numbers are seconds, missing fields take the defaults.
    let k: Job = serde_json::from_str(r#"{"target":"/x","runtime":2,"bs":2300}"#).unwrap();
    assert_eq!(k.runtime, Some(Duration::from_secs(2)));
    assert_eq!(k.bs, 2300);
    assert_eq!(k.numjobs, 1);
}

#[test]
fn rejects_bad_options() {
    let cases: Vec<(Job, &str)> = vec![
        (Job { bs: 0, ..job() }, "bs"),
        (
            Job {
                numjobs: 0,
                ..job()
            },
            "numjobs",
        ),
        (
            Job {
                iodepth: 0,
                ..job()
            },
            "iodepth",
        ),
        (
            Job {
                rwmixread: 101,
                ..job()
            },
            "rwmixread",
        ),
        (
            Job {
                fsync: 1,
                fdatasync: 1,
                ..job()
            },
            "fdatasync",
        ),
        (
            Job {
                size: Some(100),
                bs: 4096,
                ..job()
            },
            "size",
        ),
        (
            Job {
                time_based: true,
                ..job()
            },
            "time_based",
        ),
        (
            Job {
                runtime: Some(Duration::ZERO),
                ..job()
            },
            "runtime",
        ),
        // QA: 1us and 1ns ran, completed no I/O and were saved as a success.
        (
            Job {
                runtime: Some(Duration::from_micros(999)),
                ..job()
            },
            "runtime",
        ),
        (
            Job {
                runtime: Some(Duration::from_nanos(1)),
                ..job()
            },
            "runtime",
        ),
        (
            Job {
                bs: 256 << 20,
                iodepth: 16,
                ..job()
            },
            "iodepth",
        ),
        (
            Job {
                name: "a/b".into(),
                ..job()
            },
            "name",
        ),
    ];
    for (j, opt) in cases {
        let e = j.validate().unwrap_err();
        assert!(
            matches!(&e, EngineError::BadOption { option, .. } if *option == opt),
            "{opt}: {e}"
        );
    }
}

#[test]
fn direct_needs_alignment_but_buffered_takes_any_bs() {
    assert!(Job { bs: 2300, ..job() }.validate().is_ok());
    let e = Job {
        bs: 2300,
        direct: true,
        ..job()
    }
    .validate()
    .unwrap_err();
    assert!(matches!(
        e,
        EngineError::DirectAlignment { value: 2300, .. }
    ));
    assert!(e.to_string().contains("--direct=false"), "{e}");
    let e = Job {
        offset: 100,
        direct: true,
        ..job()
    }
    .validate()
    .unwrap_err();
    assert!(matches!(
        e,
        EngineError::DirectAlignment {
            option: "offset",
            ..
        }
    ));
}

#[test]
fn direction_helpers() {
    assert!(Rw::RandRw.reads() && Rw::RandRw.writes() && Rw::RandRw.random());
    assert!(!Rw::Write.reads() && Rw::Write.writes() && !Rw::Write.random());
    assert!(Rw::ReadWrite.mixed() && !Rw::RandRead.mixed());
    let j = Job {
        rw: Rw::Write,
        fdatasync: 1,
        ..job()
    };
    assert!(j.syncs());
    assert!(!Job {
        rw: Rw::Read,
        fdatasync: 1,
        ..job()
    }
    .syncs());
}

#[test]
fn runtime_minimum_is_a_millisecond_and_short_ones_print_in_their_unit() {
    let ok = Job {
        runtime: Some(MIN_RUNTIME),
        ..Job::default()
    };
    assert!(ok.validate().is_ok());
    let e = Job {
        runtime: Some(Duration::from_nanos(1)),
        ..Job::default()
    }
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("runtime=1ns is not valid") && e.contains("1ms"),
        "{e}"
    );
}

/// QA: a target whose path is not UTF-8 turned the whole job into `null` (so `compare` lost
/// "fdatasync" and the JSON lost rw and bs); the path is now written lossily, as
/// `target.path` is.
#[test]
fn a_target_that_is_not_utf8_keeps_the_job() {
    use std::os::unix::ffi::OsStrExt;
    let j = Job {
        target: std::ffi::OsStr::from_bytes(b"/tmp/bad\xff\xfename").into(),
        fdatasync: 1,
        ..job()
    };
    let v = j.to_json();
    assert_eq!(v["target"], "/tmp/bad\u{fffd}\u{fffd}name", "{v}");
    assert_eq!(v["fdatasync"], 1);
    assert_eq!(v["rw"], j.rw.name());
}

/// The options' checks advise in the caller's spelling: the command line's as before, a job
/// file's for `bench FILE.fio` (QA: a job file with time_based and no runtime was told "pass
/// --runtime (e.g. --runtime 60s)").
#[test]
fn the_checks_advice_is_spelled_as_the_caller_spells_options() {
    use crate::advice::Render;
    use crate::advice::Spelling::{CommandLine, JobFile};
    let cases = [
        (
            Job {
                time_based: true,
                ..job()
            },
            "time_based=true is not valid: time_based needs a runtime: pass --runtime (e.g. --runtime 60s)",
            "time_based=true is not valid: time_based needs a runtime: set runtime= (e.g. runtime=60s)",
        ),
        (
            Job {
                fsync: 1,
                fdatasync: 1,
                ..job()
            },
            "fdatasync=1 is not valid: pass either --fsync or --fdatasync, not both",
            "fdatasync=1 is not valid: set either fsync= or fdatasync=, not both",
        ),
        (
            Job {
                numjobs: 1024,
                iodepth: 4,
                bs: 1 << 20,
                ..job()
            },
            "iodepth=4 is not valid: numjobs=1024 x iodepth=4 x bs=1048576 = 4096 MiB of I/O buffers held at once: keep it at 2 GiB or less (lower --numjobs, --iodepth or --bs)",
            "iodepth=4 is not valid: numjobs=1024 x iodepth=4 x bs=1048576 = 4096 MiB of I/O buffers held at once: keep it at 2 GiB or less (lower numjobs=, iodepth= or bs=)",
        ),
    ];
    for (j, command_line, job_file) in cases {
        let e = j.validate().unwrap_err();
        assert_eq!(e.render(CommandLine), command_line);
        assert_eq!(e.to_string(), command_line);
        assert_eq!(e.render(JobFile), job_file);
    }
}
