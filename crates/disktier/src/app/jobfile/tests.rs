//! Job files read through the command line's option parser.

use super::*;
use disktier_engine::jobfile;
use disktier_engine::{IoEngineKind, Rw};

#[test]
fn every_job_file_option_is_a_command_line_option() {
    for k in jobfile::JOB_OPTIONS {
        let v = match *k {
            "rw" => "write",
            "ioengine" => "psync",
            "cpus_allowed" => "0",
            "runtime" | "ramp_time" => "1s",
            "bs" | "size" | "offset" => "4k",
            "direct" | "time_based" | "norandommap" => "1",
            "verify" => "0",
            _ => "1",
        };
        let arg = format!("--{}={v}", k.replace('_', "-"));
        assert_eq!(FileOptions.check(&arg), Ok(()), "{arg}");
    }
}

fn parse(text: &str) -> anyhow::Result<Vec<Job>> {
    let f = jobfile::parse(text, "t.fio")?;
    f.jobs
        .iter()
        .map(|j| to_job("t.fio", j, false, &FileOptions).map(|(j, _)| j))
        .collect()
}

#[test]
fn sections_become_jobs_with_fios_defaults() {
    let jobs = parse(
        "[global]\nbs=4k\nsize=1m\ndirectory=/tmp\n[a]\nrw=randread\nnumjobs=3\ndirect\n[b]\nrw=write\nfdatasync=1\nioengine=sync\nruntime=2\n",
    )
    .unwrap();
    assert_eq!(jobs[0].name, "a");
    assert_eq!(jobs[0].numjobs, 3);
    assert!(jobs[0].direct);
    assert_eq!(
        jobs[0].ioengine,
        IoEngineKind::Psync,
        "fio's default engine"
    );
    assert_eq!(jobs[0].target, Path::new("/tmp"));
    assert_eq!(jobs[1].fdatasync, 1);
    assert_eq!(jobs[1].runtime, Some(std::time::Duration::from_secs(2)));
    assert_eq!(jobs[1].size, Some(1 << 20));
}

/// QA: with `--engine fio` (lenient), `size=40KiB` was dropped (the native reader refuses IEC
/// units, which fio reads as powers of 1,000), so the checks before fio ran saw no size and a
/// directory target was refused with "pass --size". They now see fio's 40,000 bytes.
#[test]
fn iec_sizes_are_read_as_fio_reads_them_when_fio_runs_the_file() {
    let f = jobfile::parse_for_fio("[a]\nrw=write\nbs=4KiB\nsize=40KiB\n", "t").unwrap();
    let (j, _) = to_job("t", &f.jobs[0], true, &FileOptions).unwrap();
    assert_eq!((j.bs, j.size), (4000, Some(40_000)));
    let f = jobfile::parse("[a]\nrw=write\nsize=40KiB\n", "t").unwrap();
    let e = to_job("t", &f.jobs[0], false, &FileOptions).unwrap_err();
    assert!(
        e.to_string().contains("fio reads KiB as a power of 1,000"),
        "{e}"
    );
}

#[test]
fn libaio_runs_through_io_uring() {
    let f = jobfile::parse("[a]\nioengine=libaio\niodepth=32\n", "t").unwrap();
    let (j, libaio) = to_job("t", &f.jobs[0], false, &FileOptions).unwrap();
    assert!(libaio);
    assert_eq!((j.ioengine, j.iodepth), (IoEngineKind::IoUring, 32));
}

#[test]
fn bad_values_name_their_line() {
    let e = parse("[a]\n\nbs=4q\n").unwrap_err().to_string();
    assert!(e.starts_with("t.fio line 3: bs=4q"), "{e}");
    let e = parse("[a]\nioengine=posixaio\n").unwrap_err().to_string();
    assert!(e.contains("line 2: ioengine=posixaio"), "{e}");
    // Checked after reading: the engine's own check, with the option's line.
    let e = parse("[a]\nrw=write\nbs=2300\ndirect=1\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3: job [a]") && e.contains("bs=2300"),
        "{e}"
    );
    let e = parse("[a]\nfsync=1\nfdatasync=1\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3"), "{e}");
}

/// QA: with `--engine fio`, `rw=trim` was dropped, the checks took fio's default read, and fio
/// trimmed away a device's partition table without --destructive. A trim is checked as the
/// write it is to the data; fio's `:N` suffix changes no direction.
#[test]
fn fios_rw_values_are_checked_as_what_they_do_to_the_data() {
    for (rw, want) in [
        ("trim", Rw::Write),
        ("trimwrite", Rw::Write),
        ("randtrim", Rw::RandWrite),
        ("randrw:8", Rw::RandRw),
        ("rw", Rw::ReadWrite),
        ("read", Rw::Read),
    ] {
        let f = jobfile::parse_for_fio(&format!("[a]\nrw={rw}\nsize=1m\n"), "t").unwrap();
        let (j, _) = to_job("t", &f.jobs[0], true, &FileOptions).unwrap();
        assert_eq!(j.rw, want, "rw={rw}");
    }
}

/// QA: a job the engine's own checks refused was told what to change in the command line's
/// words: `time_based` without a runtime "pass --runtime (e.g. --runtime 60s)", `fsync=1` with
/// `fdatasync=1` "pass either --fsync or --fdatasync". A job file sets `runtime=`.
#[test]
fn a_job_the_engine_refuses_is_told_the_fix_in_the_files_words() {
    for (text, line, want) in [
        (
            "[a]\nrw=write\nsize=1m\ntime_based\n",
            "line 4",
            "time_based needs a runtime: set runtime= (e.g. runtime=60s)",
        ),
        (
            "[a]\nrw=write\nfsync=1\nfdatasync=1\n",
            "line 4",
            "set either fsync= or fdatasync=, not both",
        ),
    ] {
        let e = parse(text).unwrap_err().to_string();
        assert!(e.contains(line) && e.contains(want), "{e}");
        assert!(!e.contains("--"), "{e}");
    }
}

/// With `--engine fio` (lenient), a value only fio reads is left to fio, unless the checks
/// before fio starts read the option (QA: `numjobs=$ncpus` was dropped, and fio wrote files the
/// checks never saw).
#[test]
fn a_value_only_fio_reads_is_left_to_it_unless_the_checks_read_it() {
    let job = |text: &str| {
        let f = jobfile::parse_for_fio(text, "t").unwrap();
        to_job("t", &f.jobs[0], true, &FileOptions).map(|(j, _)| j)
    };
    let j = job("[a]\nrw=write\nsize=1m\nioengine=posixaio\nverify=md5\n").unwrap();
    assert_eq!((j.rw, j.size), (Rw::Write, Some(1 << 20)));
    for option in [
        "numjobs=$ncpus",
        "size=8*$mb_memory",
        "offset=(4*1024)",
        "rw=$RW",
    ] {
        let e = job(&format!("[a]\nrw=write\nsize=1m\n{option}\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("t line 4: {option}: ")) && e.contains("with --engine fio"),
            "{e}"
        );
    }
}

/// QA: `runtime=0`, fio's default (no limit), was refused with `--engine fio` as a runtime
/// under 1 ms, in a file fio runs. fio reads it as no runtime, and so do the checks; the native
/// engine still refuses it, as `bench --runtime 0`.
#[test]
fn runtime_0_is_no_runtime_when_fio_runs_the_file() {
    for zero in ["0", "0s", "0ms"] {
        let text = format!("[a]\nrw=write\nsize=1m\nruntime={zero}\n");
        let f = jobfile::parse_for_fio(&text, "t").unwrap();
        let (j, _) = to_job("t", &f.jobs[0], true, &FileOptions).unwrap();
        assert_eq!(j.runtime, None, "runtime={zero}");
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains("leave it out for no limit"), "{e}");
    }
}

/// QA (session 29): `filename=/var/tmp` ran the job in a file disktier made in /var/tmp, where
/// fio fails the job ("Is a directory"); it is refused naming `directory=`, as `directory=` on a
/// file is refused naming `filename=`.
#[test]
fn a_directory_named_by_filename_is_refused_as_fio_refuses_it() {
    let e = parse("[a]\nrw=write\nsize=1m\nfilename=/tmp\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.fio line 4: filename=/tmp: a directory (fio refuses it too")
            && e.contains("name it with directory="),
        "{e}"
    );
    // The same directory named as one, and a file that does not exist yet, are targets.
    assert!(parse("[a]\nrw=write\nsize=1m\ndirectory=/tmp\n").is_ok());
    assert!(parse("[a]\nrw=write\nsize=1m\nfilename=/tmp/disktier-no-such-file\n").is_ok());
}
