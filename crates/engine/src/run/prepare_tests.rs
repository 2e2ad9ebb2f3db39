//! The checks of [`super`]: files and regions as fio resolves them, the advice on tmpfs, the
//! io_uring fallback.

use super::*;
use std::path::Path;

#[test]
fn falls_back_to_psync_with_the_reason() {
    let job = Job::default();
    let mut w = Vec::new();
    assert_eq!(
        engine_after_probe(&job, Ok(()), &mut w),
        IoEngineKind::IoUring
    );
    assert!(w.is_empty());
    let why = "the sysctl kernel.io_uring_disabled is 2".to_string();
    assert_eq!(
        engine_after_probe(&job, Err(why), &mut w),
        IoEngineKind::Psync
    );
    assert_eq!(w.len(), 1);
    assert!(
        w[0].contains("io_uring_disabled is 2") && w[0].contains("psync"),
        "{}",
        w[0]
    );
    let sync = Job {
        ioengine: IoEngineKind::Sync,
        ..Job::default()
    };
    assert_eq!(
        engine_after_probe(&sync, Err("x".into()), &mut w),
        IoEngineKind::Sync
    );
    // io_uring works on this kernel (6.18, not disabled).
    assert!(uring::probe().is_ok());
}

/// Buffered (the default) time-based reads of a 1 MiB file in `dir`, which fits in RAM.
fn buffered_time_based_reads(dir: &Path) -> Job {
    Job {
        target: dir.to_path_buf(),
        size: Some(1 << 20),
        time_based: true,
        runtime: Some(std::time::Duration::from_secs(1)),
        ..Job::default()
    }
}

/// QA: buffered time-based reads on tmpfs were told "pass --direct", which tmpfs refuses.
#[test]
fn reads_on_tmpfs_are_told_they_measure_ram_not_to_pass_direct() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("skipped: no /dev/shm");
        return;
    };
    if target::classify(d.path()).ok().and_then(|c| c.info.fs_type) != Some("tmpfs".into()) {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    let job = buffered_time_based_reads(d.path());
    let p = prepare(&job, &RunOptions::default()).unwrap();
    let w = p.warnings.join("\n");
    assert!(w.contains("is on tmpfs: its data is in RAM"), "{w}");
    assert!(!w.contains("pass --direct"), "{w}");
}

/// Left item of session 25: the engine's warnings kept the command line's words in a job
/// file's run ("pass --direct"); they now name the option as the caller spells it. Buffered
/// time-based reads of a small file on a disk filesystem (not tmpfs) get the advice.
#[test]
fn the_page_cache_warning_names_direct_as_the_caller_spells_it() {
    // /var/tmp: on disk where /tmp may be a tmpfs.
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let fs = target::classify(d.path()).ok().and_then(|c| c.info.fs_type);
    if fs
        .as_deref()
        .is_some_and(|f| crate::verdict::RAM_FILESYSTEMS.contains(&f))
    {
        eprintln!("skipped: the target directory is on {fs:?}");
        return;
    }
    let job = buffered_time_based_reads(d.path());
    let warned = |spelling| {
        let opts = RunOptions {
            spelling,
            ..RunOptions::default()
        };
        prepare(&job, &opts).unwrap().warnings.join("\n")
    };
    let cli = warned(crate::Spelling::CommandLine);
    assert!(
        cli.ends_with("they measure the page cache, not the disk; pass --direct"),
        "{cli}"
    );
    let file = warned(crate::Spelling::JobFile);
    assert!(
        file.ends_with("they measure the page cache, not the disk; set direct=1"),
        "{file}"
    );
}

#[test]
fn resolves_files_and_regions_like_fio() {
    let d = tempfile::tempdir().unwrap();
    let job = |t: &Path| Job {
        target: t.to_path_buf(),
        name: "j".into(),
        numjobs: 2,
        size: Some(1 << 20),
        offset: 4096,
        ..Job::default()
    };
    let mut w = Vec::new();
    // A directory: one file per job, named as fio names them.
    let j = job(d.path());
    let u = plan_files(&j, &target::classify(d.path()).unwrap(), &mut w).unwrap();
    let names: Vec<_> = u
        .iter()
        .map(|u| u.path.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["j.0.0", "j.1.0"]);
    assert!(u
        .iter()
        .all(|u| u.start == 4096 && u.len == 1 << 20 && !u.existed));
    // An existing file without a size: from the offset to its end, shared by the jobs.
    let f = d.path().join("f");
    std::fs::write(&f, vec![1u8; 64 * 1024]).unwrap();
    let j = Job {
        size: None,
        ..job(&f)
    };
    let u = plan_files(&j, &target::classify(&f).unwrap(), &mut w).unwrap();
    assert_eq!(u.len(), 1);
    assert_eq!(
        (u[0].start, u[0].len, u[0].existed),
        (4096, 60 * 1024, true)
    );
    // A directory without a size says so (QA: it said "does not exist yet").
    let j = Job {
        size: None,
        ..job(d.path())
    };
    let e = plan_files(&j, &target::classify(d.path()).unwrap(), &mut w).unwrap_err();
    assert!(
        matches!(e, EngineError::DirectorySizeRequired { .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("is a directory") && !e.to_string().contains("does not exist"),
        "{e}"
    );
    // A new file without a size cannot be resolved.
    let n = d.path().join("new");
    let j = Job {
        size: None,
        ..job(&n)
    };
    let e = plan_files(&j, &target::classify(&n).unwrap(), &mut w).unwrap_err();
    assert!(matches!(e, EngineError::SizeRequired { .. }), "{e}");
    // An empty file without a size: a size is what it needs, not a smaller offset.
    let empty = d.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let j = Job {
        size: None,
        offset: 0,
        ..job(&empty)
    };
    let e = plan_files(&j, &target::classify(&empty).unwrap(), &mut w).unwrap_err();
    assert!(e.to_string().contains("give --size"), "{e}");
    assert!(!e.to_string().contains("smaller --offset"), "{e}");
    // An offset past the end of a file leaves nothing to do.
    let j = Job {
        size: None,
        offset: 1 << 20,
        ..job(&f)
    };
    let e = plan_files(&j, &target::classify(&f).unwrap(), &mut w).unwrap_err();
    assert!(matches!(e, EngineError::EmptyRegion { .. }), "{e}");
    assert!(w.is_empty());
}

/// The advice of the checks here, in both spellings: on the command line as it read when it
/// was text, in a job file's words (`bench FILE.fio`).
#[test]
fn the_checks_advice_names_its_options_in_either_spelling() {
    use crate::advice::Render;
    use crate::advice::Spelling::{CommandLine, JobFile};
    let both = |e: &EngineError| (e.render(CommandLine), e.render(JobFile));
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    let job = |size, offset, bs| Job {
        target: f.clone(),
        size,
        offset,
        bs,
        ..Job::default()
    };
    let plan = |j: &Job| plan_files(j, &target::classify(&j.target).unwrap(), &mut Vec::new());
    let e = plan(&job(None, 1 << 20, 4096)).unwrap_err();
    let (cl, jf) = both(&e);
    assert!(
        cl.ends_with(": pass a smaller --offset or a larger target"),
        "{cl}"
    );
    assert!(
        jf.ends_with(": set a smaller offset= or a larger target"),
        "{jf}"
    );
    let e = plan(&job(Some(4096), u64::MAX - 10, 4096)).unwrap_err();
    let (cl, jf) = both(&e);
    assert!(
        cl.ends_with("with size 4096: pass a smaller --offset or --size"),
        "{cl}"
    );
    assert!(
        jf.ends_with("with size 4096: set a smaller offset= or size="),
        "{jf}"
    );
    let e = plan(&job(None, 4096, 8192)).unwrap_err();
    let (cl, jf) = both(&e);
    assert!(
        cl.ends_with("bs=8192: pass a larger --size or smaller --bs"),
        "{cl}"
    );
    assert!(
        jf.ends_with("bs=8192: set a larger size= or smaller bs="),
        "{jf}"
    );
    let empty = d.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let e = plan(&Job {
        target: empty,
        ..job(None, 0, 4096)
    })
    .unwrap_err();
    let (cl, jf) = both(&e);
    assert!(cl.ends_with(": give --size for the bytes to run on (an existing file also needs --destructive to be grown), or pick another target"), "{cl}");
    assert!(jf.ends_with(": give size= for the bytes to run on (an existing file also needs --destructive to be grown), or pick another target"), "{jf}");
    // A directory where a per-job file would be.
    std::fs::create_dir(d.path().join("j.0.0")).unwrap();
    let e = plan(&Job {
        target: d.path().to_path_buf(),
        name: "j".into(),
        ..job(Some(4096), 0, 4096)
    })
    .unwrap_err();
    let (cl, jf) = both(&e);
    assert!(cl.ends_with(": remove it or pass another --name"), "{cl}");
    assert!(jf.ends_with(": remove it or set another name="), "{jf}");
}

/// QA: `as u64` kept the low 64 bits of a duration's nanoseconds: a runtime of 18446744074 s
/// (2^64 ns and a little) became 0.29 s.
#[test]
fn durations_past_u64_nanoseconds_saturate() {
    let job = Job {
        runtime: Some(std::time::Duration::from_secs(18_446_744_074)),
        ramp_time: std::time::Duration::from_secs(18_446_744_073),
        time_based: true,
        ..Job::default()
    };
    let uses = [FileUse {
        path: "/x".into(),
        start: 0,
        len: 1 << 20,
        existed: false,
        cur_len: 0,
    }];
    let s = Setup::new(&job, &uses, None);
    assert_eq!(s.runtime_ns, Some(u64::MAX));
    assert_eq!(s.ramp_ns, 18_446_744_073_000_000_000);
    assert_eq!(nanos(std::time::Duration::MAX), u64::MAX);
}
