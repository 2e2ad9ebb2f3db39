//! `disktier bench JOBFILE` on a real xfs loop device, side by side with fio on the same small
//! job file: the same jobs, groups, stonewall order, numjobs counts and group_reporting
//! aggregation. (How close the figures are is a benchmark's question: bench/jobfile-vs-fio.sh.)
//! Also the errors (an unsupported option names its line, exit 2) and `import fio --jobs`.

use assert_cmd::Command;
use disktier_testkit::cli::Succeeds;
use disktier_testkit::{have, require, require_loop, LoopDev};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_disktier"))
}

/// disktier with `args`, then `file` (a job file or fio's JSON of one).
fn on_file(args: &[&str], file: &Path) -> Command {
    let mut c = Command::new(bin());
    c.args(args).arg(file);
    c
}

/// Two readers (numjobs=2) and an fdatasync writer together; after a stonewall, a libaio
/// random writer at iodepth 4 reported as its group.
fn job_file(dir: &Path) -> String {
    format!(
        "; written for disktier's tests\n[global]\ndirectory={}\nsize=8m\nbs=4k\ndirect=1\nruntime=1\ntime_based\n\n[reader]\nrw=randread\nnumjobs=2\n\n[writer]\nrw=write\nfdatasync=1\nioengine=sync\n\n[after]\nstonewall\ngroup_reporting\nrw=randwrite\nioengine=libaio\niodepth=4\n",
        dir.display()
    )
}

/// Writes the job file `file` with `text`, `{dir}` in it standing for `dir`.
fn write_job(file: &Path, dir: &Path, text: &str) {
    std::fs::write(file, text.replace("{dir}", &dir.display().to_string())).unwrap();
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn job_file_runs_groups_like_fio() {
    if !require_loop() || !require(have("fio"), "fio") {
        return;
    }
    let dev = LoopDev::new(400 << 20);
    let m = dev.mkfs_mount("xfs");
    let data = m.dir.join("data");
    std::fs::create_dir(&data).unwrap();
    let file = m.dir.join("groups.fio");
    std::fs::write(&file, job_file(&data)).unwrap();

    // Native.
    let v = on_file(&["--format", "json", "--no-save", "bench"], &file).json_ok();
    assert_eq!(v["kind"], "jobfile");
    assert_eq!(v["engine"], "disktier");
    let jobs = v["jobs"].as_array().unwrap();
    let job_names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(job_names, ["reader", "writer", "after"]);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(names(&groups[0]["jobs"]), ["reader", "writer"]);
    assert_eq!(names(&groups[1]["jobs"]), ["after"]);
    assert_eq!(groups[0]["group_reporting"], false);
    assert_eq!(groups[1]["group_reporting"], true);
    assert_eq!(jobs[0]["job"]["numjobs"], 2);
    assert_eq!(
        jobs[2]["job"]["ioengine"], "io_uring",
        "libaio runs through io_uring"
    );
    assert_eq!(jobs[2]["job"]["iodepth"], 4);
    assert!(v["notes"][0].as_str().unwrap().contains("libaio"));
    // The writer synced, the readers did not; each result is shaped as bench's.
    assert!(jobs[1]["results"]["sync"]["ios"].as_u64().unwrap() > 0);
    assert!(jobs[0]["results"]["write"].is_null());
    for j in jobs {
        assert!(j["results"]["cpu"].is_object(), "{j}");
    }
    // Jobs of one group started together; the stonewalled one after both had finished.
    let start = |i: usize| f64_of(&jobs[i]["start_s"]);
    let dur = |i: usize| f64_of(&jobs[i]["duration_s"]);
    assert_eq!(start(0), start(1));
    assert!(
        start(2) >= start(0) + dur(0).max(dur(1)) - 0.05,
        "stonewall: {} vs {} + {}",
        start(2),
        start(0),
        dur(0)
    );
    // Regression (QA): the run's duration added up jobs that ran at the same time; it is
    // summed over the run sets, each its longest job.
    assert_eq!(f64_of(&v["duration_s"]), dur(0).max(dur(1)) + dur(2));
    // Group 0 is the sum of its jobs (counts add, latencies merge).
    let g0 = &groups[0]["results"];
    assert_eq!(
        g0["read"]["ios"].as_u64().unwrap(),
        jobs[0]["results"]["read"]["ios"].as_u64().unwrap()
    );
    assert_eq!(
        g0["write"]["ios"].as_u64().unwrap(),
        jobs[1]["results"]["write"]["ios"].as_u64().unwrap()
    );
    let g1 = &groups[1]["results"]["write"];
    assert_eq!(g1["ios"], jobs[2]["results"]["write"]["ios"]);
    // The table says which job is which and folds the group_reporting group.
    let text = on_file(&["--no-save", "bench"], &file).stdout_ok();
    assert!(text.contains("group 0: reader, writer"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("writer ") && l.contains("sync")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("group 1 ") && l.contains("write")),
        "{text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("after ")), "{text}");

    // The same file through fio: the same structure. Without group_reporting fio reports each
    // numjobs clone on its own; with it, one entry for the group.
    let f = on_file(
        &["--format", "json", "--no-save", "bench", "--engine", "fio"],
        &file,
    )
    .json_ok();
    assert_eq!(f["engine"], "fio");
    let fjobs = f["jobs"].as_array().unwrap();
    let count = |n: &str| fjobs.iter().filter(|j| j["name"] == n).count();
    assert_eq!(
        (count("reader"), count("writer"), count("after")),
        (2, 1, 1)
    );
    let fgroups = f["groups"].as_array().unwrap();
    assert_eq!(fgroups.len(), 2);
    // fio's JSON has no start times: each group counts as its longest entry.
    let longest = |g: u64| {
        fjobs
            .iter()
            .filter(|j| j["group"] == g)
            .map(|j| f64_of(&j["duration_s"]))
            .fold(0.0, f64::max)
    };
    assert_eq!(f64_of(&f["duration_s"]), longest(0) + longest(1));
    assert_eq!(names(&fgroups[0]["jobs"]), ["reader", "writer"]);
    assert_eq!(names(&fgroups[1]["jobs"]), ["after"]);
    assert!(
        f["notes"].as_array().unwrap().is_empty(),
        "fio runs libaio itself"
    );
    let fr: u64 = fjobs
        .iter()
        .filter(|j| j["name"] == "reader")
        .map(|j| j["results"]["read"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(fgroups[0]["results"]["read"]["ios"].as_u64().unwrap(), fr);
    assert!(fjobs[2]["results"]["sync"]["ios"].as_u64().unwrap() > 0);
    // Regression (QA): fio's files (reader.0.0, reader.1.0, ...) stayed behind; the native
    // engine removes its own, and now the fio path too.
    let left: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // fio's own JSON of the file imports the same way.
    let fio_json = m.dir.join("fio.json");
    let st = std::process::Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--output={}", fio_json.display()))
        .arg(&file)
        .status()
        .unwrap();
    assert!(st.success());
    let i = on_file(
        &["--format", "json", "--no-save", "import", "fio", "--jobs"],
        &fio_json,
    )
    .json_ok();
    assert_eq!(i["kind"], "jobfile");
    let ig = i["groups"].as_array().unwrap();
    assert_eq!(ig.len(), 2);
    assert_eq!(ig[1]["group_reporting"], true);
    assert_eq!(names(&ig[0]["jobs"]), ["reader", "writer"]);
    assert_eq!(i["jobs"].as_array().unwrap().len(), 4);
}

#[test]
fn unsupported_options_name_their_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("bad.fio");
    write_job(
        &file,
        d.path(),
        "[global]\ndirectory={dir}\nsize=1m\n[a]\nrw=write\nrate_iops=100\n",
    );
    on_file(&["--no-save", "bench"], &file).stderr_of_exit_naming(
        "an unsupported option",
        2,
        &["line 6", "`rate_iops`", "--engine fio"],
    );
    // verify is read (verify=0, fio's default, changes nothing); a verification is refused
    // with the reason, on its line.
    write_job(
        &file,
        d.path(),
        "[global]\ndirectory={dir}\nsize=1m\n[a]\nrw=write\nverify=crc32c\n",
    );
    on_file(&["--no-save", "bench"], &file).stderr_of_exit_naming(
        "a verification",
        2,
        &["line 6", "verify=crc32c", "does not verify", "--engine fio"],
    );
    // Job options on the command line do not mix with a job file.
    let good = d.path().join("good.fio");
    std::fs::write(&good, "[a]\nrw=read\nsize=1m\n").unwrap();
    on_file(&["--no-save", "bench", "--bs", "8k"], &good).stderr_of_exit_naming(
        "a job option beside a job file",
        2,
        &["--bs", "[global]"],
    );
    // --repeat repeats one job: refused with a job file, not run once in silence (QA).
    on_file(&["--no-save", "bench", "--repeat", "2"], &good).stderr_of_exit_naming(
        "--repeat beside a job file",
        2,
        &["--repeat", "fio job file", "drop --repeat"],
    );
    // An IEC size is refused: fio reads 4KiB as 4,000 bytes, disktier as 4,096 (QA).
    std::fs::write(&good, "[a]\nrw=read\nsize=1m\nbs=4KiB\n").unwrap();
    on_file(&["--no-save", "bench"], &good).stderr_of_exit_naming(
        "an IEC size in a job file",
        2,
        &["line 4", "4KiB", "power of 1,000", "kb_base"],
    );
    // A bad value names its line too.
    std::fs::write(&good, "[a]\nrw=read\n\nbs=4q\n").unwrap();
    on_file(&["--no-save", "bench"], &good).stderr_of_exit_naming(
        "a bad value",
        2,
        &["line 4: bs=4q"],
    );
}

/// QA ([recipe-gke-local-ssd], [recipe-bcache-ebs]): the recipes' fio options — `ioengine=libaio`, `verify=0`,
/// `group_reporting=1`, `iodepth_batch_complete_max` — run in a job file as on the command line.
#[test]
fn a_job_file_takes_the_recipes_options() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("gke.fio");
    write_job(
        &file,
        d.path(),
        "[global]\ndirectory={dir}\nsize=4m\nbs=4k\nruntime=500ms\ntime_based\nverify=0\ngroup_reporting=1\n[write_iops]\nrw=randwrite\nioengine=libaio\niodepth=8\niodepth_batch_submit=8\niodepth_batch_complete_max=8\n",
    );
    let v = on_file(&["--format", "json", "--no-save", "bench"], &file).json_ok();
    assert_eq!(v["jobs"][0]["job"]["ioengine"], "io_uring");
    assert!(v["notes"][0].as_str().unwrap().contains("libaio"), "{v:#}");
    // Below iodepth the engine would reap differently: refused with the reason and the line.
    write_job(
        &file,
        d.path(),
        "[global]\ndirectory={dir}\nsize=1m\n[a]\nrw=randread\niodepth=8\niodepth_batch_complete_max=2\n",
    );
    on_file(&["--no-save", "bench"], &file).stderr_of_exit_naming(
        "iodepth_batch_complete_max below iodepth",
        2,
        &["job [a]", "reaps every completed I/O"],
    );
}

/// QA: `directory=/dev/loop4` in a job file was silently taken as the device; fio refuses it
/// ("not a directory"), and so does disktier now.
#[test]
fn directory_naming_a_file_or_device_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let not_dir = d.path().join("plain");
    std::fs::write(&not_dir, b"").unwrap();
    let mut targets = vec![not_dir.display().to_string()];
    let dev = (disktier_testkit::is_root() && have("losetup")).then(|| LoopDev::new(8 << 20));
    if let Some(dev) = &dev {
        targets.push(dev.path.display().to_string());
    }
    let file = d.path().join("dir.fio");
    for t in targets {
        std::fs::write(&file, format!("[a]\nrw=read\nsize=1m\ndirectory={t}\n")).unwrap();
        on_file(&["--no-save", "bench"], &file).stderr_of_exit_naming(
            "directory= naming a non-directory",
            2,
            &[
                "line 4",
                &format!("directory={t}"),
                "not a directory",
                "filename=",
            ],
        );
    }
    // A directory that does not exist is refused too (QA: the job wrote a file of that name
    // on the parent's filesystem and measured that disk).
    let missing = d.path().join("nonexist");
    std::fs::write(&file, "[a]\nrw=write\nsize=1m\ndirectory=nonexist\n").unwrap();
    on_file(&["--no-save", "bench"], &file)
        .current_dir(d.path())
        .stderr_of_exit_naming(
            "directory= naming nothing",
            2,
            &[
                "line 4",
                "directory=",
                "no such directory",
                "create it first",
            ],
        );
    assert!(!missing.exists());
}

/// As for one job (QA: a run of 0 I/Os exited 0 and was saved): a job file whose jobs
/// completed no I/O is an error, and nothing is saved.
#[test]
fn a_job_file_that_completed_no_io_is_not_a_result() {
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = shm.path().join("z.fio");
    // One 64 MiB write cannot complete within 1 ms.
    write_job(
        &file,
        shm.path(),
        "[a]\ndirectory={dir}\nrw=write\nbs=64m\nsize=64m\nruntime=1ms\nioengine=psync\n",
    );
    let db = shm.path().join("results.db");
    let out = Command::new(bin())
        .env("DISKTIER_DB", &db)
        .arg("bench")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("completed no I/O"), "{err}");
    assert!(err.contains("give them a longer runtime="), "{err}");
    assert!(out.stdout.is_empty() && !db.exists());
}

/// QA (a left item): a job file whose target had too little room was told to pass "a smaller
/// --size", and one on tmpfs with direct=1 to pass --direct=false: a job file sets `size=` and
/// `direct=0`. The command's own --destructive keeps its name.
#[test]
fn a_job_files_errors_name_its_own_options() {
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let run = |body: &str| {
        let file = shm.path().join("t.fio");
        write_job(&file, shm.path(), body);
        let out = Command::new(bin())
            .arg("--no-save")
            .arg("bench")
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run("[big]\ndirectory={dir}\nrw=write\nbs=1m\nsize=64t\n");
    assert!(
        err.contains("set a smaller size= or pick another target"),
        "{err}"
    );
    assert!(!err.contains("--size"), "{err}");
    let err = run("[d]\ndirectory={dir}\nrw=read\nbs=4k\nsize=1m\ndirect=1\n");
    assert!(err.contains("which has no O_DIRECT: set direct=0"), "{err}");
}

/// Left item of session 25: the engine's warnings kept the command line's words in a job
/// file's run: buffered time-based reads of a file that fits in RAM were told "pass --direct".
/// In a job file they are told `set direct=1`, as its errors are. (On a disk filesystem:
/// /var/tmp, not tmpfs, where the warning says RAM instead.)
#[test]
fn a_job_files_warnings_name_its_own_options() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("w.fio");
    write_job(
        &file,
        d.path(),
        "[w]\ndirectory={dir}\nrw=randread\nbs=4k\nsize=1m\ntime_based=1\nruntime=1\nioengine=psync\n",
    );
    let out = Command::new(bin())
        .args(["--no-save", "--format", "json", "bench"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("they measure the page cache, not the disk; set direct=1"),
        "{text}"
    );
    assert!(!text.contains("--direct"), "{text}");
}

/// QA (a left item): a sized job file whose I/O all fell inside its ramp_time was told to give
/// its jobs "a longer runtime", which changes nothing; as for one job, the fix names the ramp,
/// in the file's own option names.
#[test]
fn a_job_file_that_ended_inside_its_ramp_says_so() {
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = shm.path().join("r.fio");
    write_job(
        &file,
        shm.path(),
        "[r]\ndirectory={dir}\nrw=read\nbs=4k\nsize=1m\nramp_time=5\nioengine=psync\n",
    );
    let out = Command::new(bin())
        .arg("--no-save")
        .arg("bench")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("completed no I/O after their ramp_time")
            && err.contains(
                "drop ramp_time=, or give time_based=1 with a runtime=, or a larger size="
            ),
        "{err}"
    );
}

/// QA: `bench FILE.fio --engine fio` sent SIGTERM (or SIGHUP, or a Ctrl-C that reached only
/// disktier) ran fio through the whole file (6 s here), exited 0 and saved the run unmarked;
/// one job with `--engine fio` stopped at once. The stop now reaches fio: exit 2, the figures
/// marked interrupted, fio's files removed.
#[test]
fn a_signal_stops_a_job_file_run_by_fio() {
    if !require(have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("long.fio");
    write_job(
        &file,
        d.path(),
        "[global]\ndirectory={dir}\nsize=4m\nruntime=30s\ntime_based\n[a]\nrw=randwrite\n[b]\nstonewall\nrw=randread\n",
    );
    let child = std::process::Command::new(bin())
        .args(["--format", "json", "--no-save", "bench", "--engine", "fio"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(start.elapsed().as_secs() < 15, "fio ran on: {err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("interrupted by a signal"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true, "{v:#}");
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "long.fio")
        .collect();
    assert!(left.is_empty(), "left {left:?}");
}

/// QA: fio cuts a job file's line at its first `;` or `#`, so `filename=DIR/c.dat ; the file`
/// names `DIR/c.dat`. disktier refused `rw=write ; ...` and ran on a file named `c.dat ; the
/// file`; with `--engine fio`, fio wrote `c.dat` and disktier, removing the file it thought fio
/// made, left it behind.
#[test]
fn comments_after_a_value_are_read_as_fio_reads_them() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("commented.fio");
    write_job(
        &file,
        d.path(),
        "[a] ; the only job\nrw=write ; sequential\nsize=1m # one MiB\nfilename={dir}/c.dat ; the test file\n",
    );
    let data = d.path().join("c.dat");
    let mut engines = vec!["native"];
    if have("fio") {
        engines.push("fio");
    }
    for engine in engines {
        let v = on_file(
            &["--format", "json", "--no-save", "bench", "--engine", engine],
            &file,
        )
        .json_ok();
        assert_eq!(v["jobs"][0]["target"]["path"], data.display().to_string());
        assert_eq!(v["jobs"][0]["job"]["rw"], "write");
        assert_eq!(
            f64_of(&v["jobs"][0]["results"]["write"]["bytes"]),
            1048576.0
        );
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "commented.fio")
            .collect();
        assert!(left.is_empty(), "{engine} left {left:?}");
    }
}

/// QA: `directory=DIR` in `[global]` and `filename=t.dat` in the job is `DIR/t.dat` to fio;
/// disktier measured `t.dat` in the current directory, which may be another disk.
#[test]
fn a_filename_is_placed_under_the_directory_as_fio_places_it() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let file = d.path().join("placed.fio");
    write_job(
        &file,
        &dir,
        "[global]\ndirectory={dir}\nsize=1m\n[a]\nrw=write\nfilename=t.dat\n",
    );
    let v = on_file(&["--format", "json", "--no-save", "bench"], &file)
        .current_dir(d.path())
        .json_ok();
    assert_eq!(
        v["jobs"][0]["target"]["path"],
        dir.join("t.dat").display().to_string()
    );
    write_job(
        &file,
        &dir,
        "[global]\ndirectory={dir}\nsize=1m\n[a]\nrw=write\nfilename=/dev/null\n",
    );
    on_file(&["--no-save", "bench"], &file).stderr_of_exit_naming(
        "an absolute filename under a directory",
        2,
        &["line 6: filename=/dev/null", "relative to the directory"],
    );
}

/// QA: `filename=${TGT}` ran on a new file named `${TGT}` in the current directory; fio reads
/// the variable. It is now expanded, and one that is not set is refused by name (fio would read
/// it as empty).
#[test]
fn environment_variables_name_the_target_as_in_fio() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("env.fio");
    std::fs::write(
        &file,
        "[a]\nrw=write\nsize=${DT_QA_SIZE}\nfilename=${DT_QA_TARGET}\n",
    )
    .unwrap();
    let data = d.path().join("env.dat");
    let v = on_file(&["--format", "json", "--no-save", "bench"], &file)
        .current_dir(d.path())
        .env("DT_QA_TARGET", &data)
        .env("DT_QA_SIZE", "1m")
        .json_ok();
    assert_eq!(v["jobs"][0]["target"]["path"], data.display().to_string());
    assert_eq!(
        f64_of(&v["jobs"][0]["results"]["write"]["bytes"]),
        1048576.0
    );
    on_file(&["--no-save", "bench"], &file)
        .current_dir(d.path())
        .env_remove("DT_QA_TARGET")
        .env("DT_QA_SIZE", "1m")
        .stderr_of_exit_naming(
            "an unset variable",
            2,
            &["line 4", "${DT_QA_TARGET}", "not set"],
        );
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the job file stays: {left:?}");
}

/// QA: with `--engine fio`, `rw=trim` (which disktier does not run) was dropped before the
/// target checks, so they took fio's default read and let fio trim a device holding a GPT
/// partition table (gone afterwards) without --destructive. A trim is checked as the write it
/// is to the data.
#[test]
fn a_trim_for_fio_is_checked_as_a_write() {
    if !require(have("fio"), "fio") || !require(have("mkfs.ext4"), "mkfs.ext4 (e2fsprogs)") {
        return;
    }
    let Some((dev, m)) = disktier_testkit::loop_fs(64 << 20, "ext4") else {
        return;
    };
    drop(m); // unmounted: the ext4 signature is still there
    let before = dev.checksum();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("trim.fio");
    for rw in ["trim", "randtrim", "trimwrite", "write:4k"] {
        std::fs::write(
            &file,
            format!(
                "[t]\nrw={rw}\nbs=1m\nsize=8m\nfilename={}\n",
                dev.path.display()
            ),
        )
        .unwrap();
        on_file(&["--no-save", "bench", "--engine", "fio"], &file).stderr_of_exit_naming(
            "a trim on a device holding a filesystem",
            2,
            &["ext2/3/4", "--destructive"],
        );
        assert_eq!(dev.checksum(), before, "rw={rw} changed the device");
    }
}

/// QA: `unlink=1` (fio deletes the job's files when done) was refused by the native engine with
/// "run the file through fio with --engine fio", where fio then deleted the existing file a read
/// job named, which disktier's checks let through as a read. Options that act on files or
/// programs beyond the checked target are refused for both engines.
#[test]
fn options_that_act_beyond_the_target_are_refused_for_fio_too() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let kept = d.path().join("db");
    std::fs::write(&kept, vec![7u8; 1 << 20]).unwrap();
    let file = d.path().join("beyond.fio");
    for (option, named) in [
        ("unlink=1", "`unlink` makes fio delete"),
        ("opendir={dir}", "`opendir`"),
        ("exec_postrun=rm {dir}/db", "`exec_postrun`"),
        ("ioengine=filedelete", "`ioengine=filedelete`"),
    ] {
        write_job(
            &file,
            d.path(),
            &format!("[c]\nrw=read\nfilename={{dir}}/db\n{option}\n"),
        );
        for engine in ["native", "fio"] {
            on_file(&["--no-save", "bench", "--engine", engine], &file).stderr_of_exit_naming(
                option,
                2,
                &["line 4", named, "neither engine"],
            );
        }
        assert_eq!(
            std::fs::read(&kept).unwrap(),
            vec![7u8; 1 << 20],
            "{option}"
        );
    }
}

/// QA: with `--engine fio`, a value only fio reads (`numjobs=$ncpus`, fio's reserved keyword)
/// was dropped before the target checks, which then saw one job thread: fio ran two, wrote
/// `a.1.0` over a file of that name that existed (without --destructive, which `a.0.0` needs)
/// and left it behind. A value of an option the checks read (rw, size, offset, numjobs) must
/// be one disktier reads too.
#[test]
fn a_value_the_checks_cannot_read_is_refused_for_fio_not_dropped() {
    if !require(have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let kept = d.path().join("a.1.0");
    std::fs::write(&kept, b"precious").unwrap();
    let file = d.path().join("n.fio");
    for (option, why) in [
        ("numjobs=$ncpus", "invalid digit"),
        ("numjobs=(1+1)", "invalid digit"),
    ] {
        write_job(
            &file,
            d.path(),
            &format!("[a]\ndirectory={{dir}}\nrw=write\nbs=4k\nsize=1m\n{option}\n"),
        );
        on_file(&["--no-save", "bench", "--engine", "fio"], &file).stderr_of_exit_naming(
            option,
            2,
            &["line 6", option, why, "with --engine fio"],
        );
        assert_eq!(std::fs::read(&kept).unwrap(), b"precious", "{option}");
    }
    let mut left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["a.1.0", "n.fio"]);
}

/// QA: `runtime=0` (fio's default: no limit) made `bench FILE.fio --engine fio` refuse a file
/// fio runs ("runtime=0s is not valid: use at least 1ms"). fio runs it.
#[test]
fn runtime_0_runs_through_fio_as_fio_reads_it() {
    if !require(have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("r.fio");
    write_job(
        &file,
        d.path(),
        "[r]\ndirectory={dir}\nrw=write\nbs=4k\nsize=1m\nruntime=0\n",
    );
    let v: Value = serde_json::from_slice(
        &on_file(
            &["--no-save", "--format", "json", "bench", "--engine", "fio"],
            &file,
        )
        .assert()
        .success()
        .get_output()
        .stdout,
    )
    .unwrap();
    assert_eq!(v["jobs"][0]["results"]["write"]["ios"], 256);
}
