//! A hostile user at the command line of `setup`, `render`, `disks`, the catalog's names and the
//! size/duration/rate flags: newlines, control characters, `..`, relative and huge paths, NaN and huge numbers,
//! symlinks. Each gets a clear error and exit status 2 — never a panic (101), a hang, or a
//! change on the machine. The first two tests are the exploits of issue 13.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::stdout_ok;
use disktier_testkit::cli::sysfs_fixture;
use std::path::Path;
use std::time::Duration;

fn bin() -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", "/nonexistent/disktier-test.db")
        .arg("--no-save")
        .timeout(Duration::from_secs(60));
    c
}

/// Runs disktier with `args`; asserts exit 2, an `error:` line naming `expect`, no panic, and
/// nothing on stdout (no half-written script or unit).
fn refused(args: &[&str], expect: &str) {
    let out = bin().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: want exit 2\nstderr: {stderr}\nstdout: {stdout}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expect),
        "{args:?}: stderr should name {expect:?}: {stderr}"
    );
    assert!(stdout.trim().is_empty(), "{args:?} printed: {stdout}");
}

#[test]
fn setup_refuses_a_mount_that_would_end_the_heredoc_and_run_a_command() {
    // Issue 13: this printed a script whose heredoc ended early, then `touch /tmp/pwned`,
    // and an fstab with a line of its own.
    let pwned = Path::new("/tmp/pwned");
    let before = pwned.exists();
    refused(
        &[
            "setup",
            "--devices",
            "/dev/loop0",
            "--mount",
            "/mnt/a\nEOF\ntouch /tmp/pwned",
            "--dry-run",
            "--persist",
            "fstab",
        ],
        "--mount \"/mnt/a\\nEOF\\ntouch /tmp/pwned\" is not usable: it contains a control character",
    );
    // The same on a fixture node with an eligible disk (where the old code printed the
    // broken heredoc, exit 0).
    let root = sysfs_fixture("aws-m6id-xlarge");
    refused(
        &[
            "setup",
            "--mount",
            "/mnt/a\nEOF\ntouch /tmp/pwned",
            "--dry-run",
            "--persist",
            "fstab",
            "--sysfs-root",
            root.to_str().unwrap(),
        ],
        "control character",
    );
    assert_eq!(pwned.exists(), before);
}

#[test]
fn a_newline_in_options_never_reaches_a_unit() {
    // Issue 13: a newline in --options became a directive of its own in the systemd unit.
    let opts = "noatime\nExecStartPre=/bin/touch /tmp/pwned";
    refused(
        &[
            "setup",
            "--mount",
            "/mnt/a",
            "--options",
            opts,
            "--persist",
            "systemd",
            "--dry-run",
        ],
        "--options",
    );
    for platform in ["systemd", "openshift", "cloud-init"] {
        refused(
            &["render", platform, "--mount", "/mnt/a", "--options", opts],
            "--options",
        );
    }
}

#[test]
fn setup_refuses_every_hostile_value() {
    let long = format!("/{}", "a/".repeat(3000));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--mount", "relative/dir"], "not an absolute path"),
        (vec!["--mount", "/"], "root filesystem"),
        (vec!["--mount", "/var/../etc"], ". or .."),
        (vec!["--mount", "/mnt/./x"], ". or .."),
        (vec!["--mount", "/mnt/a\tb"], "control character"),
        (vec!["--mount", "/mnt/\u{1b}[2J"], "control character"),
        (vec!["--mount", "/mnt/$(reboot)"], "use only letters"),
        (vec!["--mount", "/mnt/a'b"], "use only letters"),
        (vec!["--mount", long.as_str()], "longer than"),
        (vec!["--mount", "/data", "--options", "a,b c"], "--options"),
        (vec!["--mount", "/data", "--options", "x=%n"], "--options"),
        (vec!["--mount", "/data", "--options", "=5"], "--options"),
        (vec!["--mount", "/data", "--owner", "root\n"], "--owner"),
        (vec!["--mount", "/data", "--owner", "a;b"], "--owner"),
        (
            vec!["--mount", "/data", "--owner", "99999999999:0"],
            "--owner",
        ),
        (vec!["--mount", "/data", "--mode", "NaN"], "--mode"),
        (vec!["--mount", "/data", "--mode", "77777"], "--mode"),
        (vec!["--mount", "/data", "--mode=-1"], "--mode"),
        (vec!["--mount", "/data", "--label", "a\nb"], "--label"),
        (vec!["--mount", "/data", "--label=-f"], "--label"),
        (
            vec!["--mount", "/data", "--label", "waytoolongforxfs"],
            "at most 12",
        ),
        (
            vec!["--mount", "/data", "--bind", "/var/lib/../../etc"],
            "--bind",
        ),
        (vec!["--mount", "/data", "--bind", "/etc\n/x"], "--bind"),
        (
            vec!["--mount", "/data", "--bind", "/data/sub"],
            "outside --mount",
        ),
        (
            vec!["--mount", "/data", "--devices", "/dev/sda\nrm"],
            "--devices",
        ),
        (
            vec!["--mount", "/data", "--devices", "/dev/../etc/passwd"],
            "--devices",
        ),
        (vec!["--mount", "/data", "--devices", "sda"], "--devices"),
        (vec!["--mount", "/data", "--root", "/tmp/x\ny"], "--root"),
    ];
    for (args, expect) in cases {
        let mut a = vec!["setup", "--dry-run"];
        a.extend(args);
        a.extend(["--sysfs-root"]);
        let root = sysfs_fixture("aws-m6id-xlarge");
        let root = root.to_str().unwrap();
        a.push(root);
        refused(&a, expect);
    }
}

#[test]
fn setup_refuses_a_mount_point_behind_a_symlink() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("real")).unwrap();
    std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
    let m = t.path().join("link/m");
    refused(
        &[
            "setup",
            "--dry-run",
            "--mount",
            m.to_str().unwrap(),
            "--devices",
            "/dev/loop0",
        ],
        "is a symbolic link",
    );
}

#[test]
fn setup_persist_systemd_refuses_a_build_directory_binary() {
    refused(
        &[
            "setup",
            "--dry-run",
            "--mount",
            "/data",
            "--persist",
            "systemd",
            "--sysfs-root",
            sysfs_fixture("aws-m6id-xlarge").to_str().unwrap(),
        ],
        "/usr/local/bin/disktier",
    );
}

#[test]
fn render_refuses_every_hostile_value() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["systemd", "--mount", "/mnt/a\nb"], "control character"),
        (vec!["systemd", "--mount", "/var/../etc"], ". or .."),
        (
            vec!["systemd", "--mount", "/data", "--owner", "a:b\n"],
            "--owner",
        ),
        (
            vec!["systemd", "--mount", "/data", "--mode", "1e9"],
            "--mode",
        ),
        (
            vec!["systemd", "--mount", "/data", "--label", "a b"],
            "--label",
        ),
        (
            vec!["systemd", "--mount", "/data", "--bind", "/x/../y"],
            "--bind",
        ),
        (
            vec!["systemd", "--mount", "/data", "--model", "x\ny"],
            "--model",
        ),
        (
            vec![
                "systemd",
                "--mount",
                "/data",
                "--by-id",
                "/dev/disk/by-id/x\ny",
            ],
            "stable",
        ),
        (
            vec!["cloud-init", "--mount", "/data", "--options", "a\n- b"],
            "--options",
        ),
        (
            vec![
                "openshift",
                "--mount",
                "/data",
                "--use-binary",
                "/usr/bin/x\nExecStartPre=/bin/sh",
            ],
            "--use-binary",
        ),
        (
            vec!["openshift", "--mount", "/data", "--use-binary", "relative"],
            "--use-binary",
        ),
        (
            vec![
                "bcache",
                "--fast",
                "/dev/disk/by-id/a\nb",
                "--slow",
                "/dev/disk/by-id/c",
            ],
            "stable",
        ),
    ];
    for (args, expect) in cases {
        let mut a = vec!["render"];
        a.extend(args);
        refused(&a, expect);
    }
    let mut eks = vec!["render"];
    eks.extend(disktier_testkit::cli_cases::EKS);
    for (extra, expect) in [
        (["--mount", "/mnt/a\u{1}b"], "--mount"),
        (["--node-role", "role\nkind: Secret"], "node-role"),
        (["--node-role", "r\u{7f}"], "node-role"),
        (
            ["--api-server-endpoint", "https://x\u{1b}y"],
            "api-server-endpoint",
        ),
    ] {
        let mut a = eks.clone();
        a.extend(extra);
        refused(&a, expect);
    }
    for (extra, expect) in [
        (vec!["--image", "nginx\nkind: Secret"], "--image"),
        (vec!["--cluster", "prod;rm"], "--cluster"),
        (vec!["--project", "p;rm -rf /"], "--project"),
        (vec!["--zone", "asia-east1-a'"], "--zone"),
        (vec!["--request", "NaN"], "request"),
        (vec!["--request", "99999999999999999999Ei"], "request"),
    ] {
        let mut a = vec!["render"];
        a.extend(disktier_testkit::cli_cases::GKE_PROD);
        a.extend(["--project", "my-project-1", "--zone", "asia-east1-a"]);
        a.extend(extra);
        refused(&a, expect);
    }
    // A blank and ": " are allowed in a path, and quoted where the YAML is written by hand.
    let mut a = eks.clone();
    a.extend([
        "--strategy",
        "mount",
        "--mount",
        "/mnt/a: b",
        "--format",
        "json",
    ]);
    let out = bin().args(&a).output().unwrap();
    stdout_ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(r#"mountPath: \"/mnt/a: b\""#),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn sizes_durations_and_rates_refuse_nan_and_huge_values() {
    for (args, expect) in [
        (vec!["price", "gp3", "--size", "NaN"], "not a size"),
        (
            vec!["price", "gp3", "--size", "99999999999999PiB"],
            "too large",
        ),
        (vec!["price", "gp3", "--size", "1e309"], "not a size"),
        (
            vec!["price", "gp3", "--size", "36GiB", "--throughput", "inf/s"],
            "not a rate",
        ),
        (
            vec!["bench", "/nonexistent-dir-x", "--runtime", "NaN"],
            "not a duration",
        ),
        (
            vec![
                "bench",
                "/nonexistent-dir-x",
                "--runtime",
                "99999999999999999999h",
            ],
            "too large",
        ),
        (
            vec!["bench", "/nonexistent-dir-x", "--size=-5G"],
            "not a size",
        ),
    ] {
        refused(&args, expect);
    }
}

/// An `--offset` near u64::MAX on a file target: refused as past the largest file offset,
/// naming the offset (QA: `start + len` overflowed in the engine's checks, a panic in a debug
/// build). Each job is one that reaches those checks (no O_DIRECT alignment refusal first).
#[test]
fn an_offset_past_the_largest_file_offset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for args in [
        vec![
            "check",
            "etcd",
            d,
            "--size",
            "1m",
            "--offset",
            "18446744073709551615",
        ],
        vec![
            "bench",
            d,
            "--rw",
            "write",
            "--size",
            "1m",
            "--direct=false",
            "--offset",
            "18446744073709551104",
        ],
        // The last byte one past i64::MAX.
        vec![
            "bench",
            d,
            "--rw",
            "write",
            "--size",
            "1m",
            "--direct=false",
            "--offset",
            "9223372036853727232",
        ],
    ] {
        refused(
            &args,
            "is not valid: the region ends past the largest file offset",
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a file was made"
    );
}

/// A name or value that carries a terminal escape sequence (here one that would retitle the
/// terminal) is never played back raw: a runtime error shows it escaped, a usage error (clap's)
/// leaves it out; a 100 KiB name is quoted cut short, at once, also in a usage error.
#[test]
fn escape_sequences_and_huge_names_are_not_echoed_raw() {
    let osc = "x\x1b]0;owned\x07";
    let huge = "a".repeat(100_000);
    let flag = format!("--{huge}");
    for (args, expect) in [
        (
            vec!["plan", "--capacity", "1TiB", "--region", osc],
            "unknown region 'x\\u{1b}]0;owned\\u{7}'",
        ),
        (
            vec!["price", osc, "--size", "1TiB"],
            "unknown volume type 'x\\u{1b}",
        ),
        (vec!["plan", "--capacity", "2\x1b[31mGiB"], "is not a size"),
        (
            vec!["plan", "--capacity", "1TiB", "--region", &huge],
            "unknown region 'aaaa",
        ),
        // Usage errors (clap's) quoted it whole, twice here: 200 kB (QA on dt-s23).
        (vec!["price", "gp3", "--size", &huge], "is not a size"),
        (
            vec!["price", "gp3", "--size", "1GiB", &flag],
            "unexpected argument '--aaaa",
        ),
    ] {
        refused(&args, expect);
        let out = bin().args(&args).output().unwrap();
        assert!(
            !out.stderr.iter().any(|b| *b == 0x1b || *b == 0x07),
            "{expect}: a raw control character in {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.len() < 2_000,
            "{expect}: {} bytes",
            out.stderr.len()
        );
    }
}

#[test]
fn disks_with_a_hostile_tree_errs_or_lists_but_never_panics() {
    let t = tempfile::tempdir().unwrap();
    // No sys/block at all.
    refused(
        &["disks", "--sysfs-root", t.path().to_str().unwrap()],
        "error",
    );
    // Binary and absurd attribute files, a mountinfo line with an escape beyond a byte.
    let d = t.path().join("sys/block/vdz");
    std::fs::create_dir_all(d.join("queue")).unwrap();
    std::fs::write(d.join("size"), "18446744073709551615").unwrap();
    std::fs::write(d.join("dev"), b"\xff\xfe\0\n").unwrap();
    std::fs::write(d.join("queue/scheduler"), vec![0u8; 100_000]).unwrap();
    std::fs::create_dir_all(t.path().join("proc/self")).unwrap();
    std::fs::write(
        t.path().join("proc/self/mountinfo"),
        "1 2 3:4 / /x\\777 rw - xfs /dev/vdz rw\n\\\n",
    )
    .unwrap();
    // A model string with a terminal escape sequence (firmware-provided): shown, but harmless.
    std::fs::create_dir_all(d.join("device")).unwrap();
    std::fs::write(d.join("device/model"), "evil\x1b]0;owned\x07\x1b[2J\n").unwrap();
    let out = bin()
        .args(["disks", "--sysfs-root"])
        .arg(t.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    stdout_ok(&out);
    assert!(text.contains("evil?]0;owned??[2J"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    let out = bin()
        .args(["disks", "--format", "json", "--sysfs-root"])
        .arg(t.path())
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(2)),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn io_buffers_are_bounded_over_all_threads_not_per_thread() {
    // QA: iodepth x bs was bounded per thread (2 GiB), so numjobs multiplied it unchecked:
    // numjobs=8 iodepth=1024 bs=1m aborted with "memory allocation of 1073745920 bytes
    // failed" under a 4 GiB limit, and numjobs=1024 iodepth=2047 bs=1m asked for 2 TiB.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    refused(
        &[
            "bench", dir, "--rw", "randwrite", "--numjobs", "2", "--iodepth", "2048", "--bs",
            "1m", "--size", "1m",
        ],
        "numjobs=2 x iodepth=2048 x bs=1048576 = 4096 MiB of I/O buffers held at once: keep it at 2 GiB or less",
    );
    refused(
        &[
            "bench",
            dir,
            "--rw",
            "randwrite",
            "--numjobs",
            "1024",
            "--iodepth",
            "2047",
            "--bs",
            "1m",
            "--size",
            "1m",
        ],
        "numjobs=1024 x iodepth=2047",
    );
    // Jobs of a job file that run together (no stonewall) add up: each holds 2 GiB, which
    // passes on its own.
    let fio = t.path().join("two.fio");
    std::fs::write(
        &fio,
        format!(
            "[global]\ndirectory={dir}\nrw=randwrite\nbs=1m\nsize=1m\niodepth=2048\n[a]\n[b]\n"
        ),
    )
    .unwrap();
    refused(
        &["bench", fio.to_str().unwrap()],
        "the jobs that run together hold 4096 MiB of I/O buffers in all",
    );
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        1,
        "a refused job creates no files"
    );
}

#[test]
fn simulate_refuses_thousands_of_cache_sizes_before_reading_the_trace() {
    // QA: each size is a cache per policy, all allocated at once: 2000 sizes of 4 GiB aborted
    // with "memory allocation of 16777216 bytes failed" (exit 134) under a 4 GiB limit.
    let sizes = (0..2000u64)
        .map(|i| ((4u64 << 30) + (i << 20)).to_string())
        .collect::<Vec<_>>()
        .join(",");
    refused(
        &["simulate", "--trace", "/nonexistent-trace", "--cache-sizes", &sizes],
        "2000 sizes: every size is a separate cache for every policy, all in memory at once: give at most 64",
    );
}

/// QA: `--cpus-allowed ""` was taken as "any CPU" without a word; an empty list is refused
/// before anything runs (leaving the option out is how to say any CPU).
#[test]
fn an_empty_cpu_list_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for args in [
        vec!["bench", dir, "--cpus-allowed", ""],
        vec!["check", "etcd", dir, "--cpus-allowed="],
    ] {
        refused(&args, "a value is required for '--cpus-allowed <LIST>'");
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
