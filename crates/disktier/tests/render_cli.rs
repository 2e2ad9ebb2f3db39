//! `disktier render` driven as a user would: stdout, `-o DIR`, `--format json`, and the one-line
//! errors (exit 2) for bad input. The rendered files themselves have golden files in
//! crates/disks/tests/snapshots.

use assert_cmd::Command;
use disktier_testkit::cli::Succeeds;
use disktier_testkit::cli_cases::{self, GKE_C1};
use predicates::prelude::*;

fn disktier() -> Command {
    let mut c = disktier_testkit::cli::disktier();
    c.env("DISKTIER_DB", "/nonexistent/render-never-saves.db");
    c
}

/// stdout of `render openshift` for /var/lib/containers ([`cli_cases::OPENSHIFT`]) with `extra`.
fn render_openshift(extra: &[&str]) -> String {
    disktier()
        .arg("render")
        .args(cli_cases::OPENSHIFT)
        .args(extra)
        .stdout_ok()
}

fn no_kernel_names(s: &str) {
    for bad in [
        "/dev/nvme0n1",
        "/dev/nvme1n1",
        "/dev/sda",
        "/dev/sdb",
        "/dev/xvdf",
    ] {
        assert!(!s.contains(bad), "output names {bad}");
    }
}

#[test]
fn openshift_to_stdout_is_one_yaml_stream() {
    let text = render_openshift(&[
        "--machineset",
        "--instance-type",
        "m6id.xlarge",
        "--cluster-id",
        "mycluster-x7k2p",
    ]);
    assert!(text.contains("kind: MachineConfig"));
    assert!(text.contains("kind: MachineSet"));
    assert!(text.contains("name: var-lib-containers.mount"));
    assert!(text.contains("\n---\n"), "objects are separated by ---");
    no_kernel_names(&text);
}

#[test]
fn out_dir_writes_one_file_per_object_and_never_clobbers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("manifests");
    let args = [
        &["render"][..],
        GKE_C1,
        &["--machine-type", "n1-standard-8", "--local-ssds", "2"],
    ]
    .concat();
    // The same command every time: only what is already in `d` changes.
    let render_into_d = || {
        let mut c = disktier();
        c.args(&args).arg("-o").arg(&d);
        c
    };
    render_into_d()
        .assert()
        .success()
        .stdout(predicate::str::contains("node-pool-ssd-pool.sh\twritten"))
        .stdout(predicate::str::contains("pod-emptydir.yaml\twritten"))
        .stdout(predicate::str::contains("pod-hostpath.yaml\twritten"));
    let script = d.join("node-pool-ssd-pool.sh");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o755
    );

    // Same content again: unchanged.
    render_into_d()
        .assert()
        .success()
        .stdout(predicate::str::contains("pod-emptydir.yaml\tunchanged"));

    // A file edited by hand is not replaced without --overwrite, and nothing else is written.
    std::fs::write(d.join("pod-emptydir.yaml"), "edited\n").unwrap();
    std::fs::remove_file(d.join("pod-hostpath.yaml")).unwrap();
    render_into_d().assert().code(2).stderr(
        predicate::str::contains("exists and differs").and(predicate::str::contains("--overwrite")),
    );
    assert_eq!(
        std::fs::read_to_string(d.join("pod-emptydir.yaml")).unwrap(),
        "edited\n"
    );
    assert!(!d.join("pod-hostpath.yaml").exists());
    render_into_d().arg("--overwrite").assert().success();
    assert!(std::fs::read_to_string(d.join("pod-emptydir.yaml"))
        .unwrap()
        .contains("kind: Pod"));
}

#[test]
fn json_lists_files_with_content() {
    let v: serde_json::Value = disktier()
        .args(
            "--format json render systemd --mount /mnt/disks/ssd --bind /var/lib/containerd"
                .split_whitespace(),
        )
        .json_ok();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["platform"], "systemd");
    let files = v["files"].as_array().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"mnt-disks-ssd.mount"), "{names:?}");
    assert!(names.contains(&"var-lib-containerd.mount"), "{names:?}");
    assert!(names.contains(&"install.sh"), "{names:?}");
    for f in files {
        assert!(!f["content"].as_str().unwrap().is_empty());
        assert!(["yaml", "unit", "shell", "cloud-config"].contains(&f["kind"].as_str().unwrap()));
        no_kernel_names(f["content"].as_str().unwrap());
    }
}

#[test]
fn every_platform_renders_from_the_cli() {
    let cases: Vec<Vec<&str>> = cli_cases::render_cases()
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    for c in cases {
        let text = disktier().arg("render").args(&c).stdout_ok();
        assert!(!text.is_empty(), "{c:?}");
        no_kernel_names(&text);
    }
}

#[test]
fn bad_input_is_refused_with_the_fix() {
    let gke = [&["render"][..], GKE_C1, &["--local-ssds"]].concat();
    let gke_with = |extra: &[&'static str]| [&gke[..], extra].concat();
    // (case, arguments, exit code, what stderr names)
    let cases: Vec<(&str, Vec<&str>, i32, &[&str])> = vec![
        (
            "gke e2 has no local SSD",
            gke_with(&["2", "--machine-type", "e2-standard-8"]),
            2,
            &["E2", "no local SSD"],
        ),
        (
            "gke n1 takes at most 8",
            gke_with(&["24", "--machine-type", "n1-standard-8"]),
            2,
            &["at most 8 local SSDs, not 24"],
        ),
        (
            "gke --local-ssd-count beside --local-ssds",
            gke_with(&[
                "2",
                "--machine-type",
                "n1-standard-8",
                "--local-ssd-count",
                "2",
            ]),
            2,
            &["cannot be combined"],
        ),
        (
            "gke unknown machine type only warns",
            gke_with(&["2", "--machine-type", "n4-standard-8"]),
            0,
            &["unknown machine type: cannot validate the count"],
        ),
        ("unknown platform", vec!["render", "nomad"], 2, &["nomad"]),
        (
            "openshift without --mount",
            vec!["render", "openshift"],
            2,
            &["--mount"],
        ),
        (
            "a kernel name for --by-id",
            vec![
                "render",
                "systemd",
                "--mount",
                "/data",
                "--by-id",
                "/dev/nvme1n1",
            ],
            2,
            &["kernel device name", "/dev/disk/by-id/"],
        ),
        (
            "--instance-type without --machineset",
            vec![
                "render",
                "openshift",
                "--mount",
                "/var/lib/containers",
                "--instance-type",
                "m6id.xlarge",
            ],
            2,
            &["--machineset"],
        ),
        (
            "lvmcache with a sequential cutoff",
            [
                &["render"][..],
                cli_cases::LVMCACHE_A_B,
                &["--sequential-cutoff", "0"],
            ]
            .concat(),
            2,
            &["dm-cache has no sequential bypass"],
        ),
    ];
    for (case, args, code, needles) in cases {
        disktier()
            .args(&args)
            .stderr_of_exit_naming(case, code, needles);
    }
}

#[test]
fn use_binary_runs_a_setup_command_that_disktier_setup_accepts() {
    // The unit's ExecStart, run with this build of disktier in --dry-run: it must parse (no
    // usage error), whatever the machine's disks.
    let text = render_openshift(&[
        "--owner",
        "root:root",
        "--mode",
        "0755",
        "--bind",
        "/var/lib/kubelet",
        "--use-binary",
    ]);
    let exec = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("ExecStart="))
        .expect("an ExecStart line");
    let words: Vec<&str> = exec.split_whitespace().collect();
    assert_eq!(words[0], "/usr/local/bin/disktier");
    assert_eq!(words[1], "setup");
    let dir = tempfile::tempdir().unwrap();
    let run = disktier()
        .env("DISKTIER_DB", dir.path().join("db.sqlite"))
        .args(&words[1..])
        .args(["--dry-run", "--no-save"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    for usage in [
        "unexpected argument",
        "invalid value",
        "required arguments",
        "Usage:",
    ] {
        assert!(
            !stderr.contains(usage),
            "disktier setup refused the rendered arguments {words:?}:\n{stderr}"
        );
    }
}

#[test]
fn out_dir_never_writes_through_a_symbolic_link() {
    // Found by QA: a link inside -o DIR was followed, with or without --overwrite, and the
    // file it pointed at (outside DIR) was written.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("out");
    std::fs::create_dir(&d).unwrap();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "not render's\n").unwrap();
    std::os::unix::fs::symlink(&outside, d.join("pod-emptydir.yaml")).unwrap();
    let args = [
        &["render"][..],
        GKE_C1,
        &["--machine-type", "n1-standard-8", "--local-ssds", "2"],
    ]
    .concat();
    for extra in [&[][..], &["--overwrite"][..]] {
        disktier()
            .args(&args)
            .arg("-o")
            .arg(&d)
            .args(extra)
            .stderr_of_exit_naming(
                "a link at an output path",
                2,
                &[
                    "pod-emptydir.yaml is a symbolic link",
                    "choose another -o DIR",
                ],
            );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not render's\n");
        // All or nothing: no other file was written either.
        assert!(!d.join("node-pool-ssd-pool.sh").exists());
    }
}

#[test]
fn render_refuses_what_qa_found() {
    let gke = |extra: &[&'static str]| {
        [
            &["render"][..],
            GKE_C1,
            &["--machine-type", "n1-standard-8", "--local-ssds", "2"],
            extra,
        ]
        .concat()
    };
    let aks = |extra: &[&'static str]| {
        [
            &["render", "aks", "--resource-group", "rg", "--cluster", "c"][..],
            extra,
        ]
        .concat()
    };
    // cli_cases::EKS with its endpoint and CIDR replaced by `endpoint` and `cidr`.
    let eks = |endpoint: &'static str, cidr: &'static str| {
        let mut a = vec!["render"];
        let mut it = cli_cases::EKS.iter();
        while let Some(w) = it.next() {
            a.push(w);
            match *w {
                "--api-server-endpoint" => a.push(endpoint),
                "--cidr" => a.push(cidr),
                _ => continue,
            }
            it.next();
        }
        a
    };
    let openshift = |extra: &[&'static str]| {
        let mut a = vec!["render"];
        a.extend(cli_cases::OPENSHIFT);
        a.extend(extra);
        a
    };
    let machineset =
        |t: &'static str| openshift(&["--machineset", "--instance-type", t, "--cluster-id", "c1"]);
    let systemd =
        |extra: &[&'static str]| [&["render", "systemd", "--mount", "/data"][..], extra].concat();
    let mut cases: Vec<(String, Vec<&str>, i32, Vec<&str>)> = vec![
        (
            "an instance type without instance store".into(),
            machineset("m6i.xlarge"),
            2,
            vec!["m6i.xlarge has no instance store", "e.g. m6id.xlarge"],
        ),
        (
            "an instance type the catalog does not know: a note".into(),
            machineset("t3.medium"),
            0,
            vec!["t3.medium is not in disktier's catalog"],
        ),
        (
            // Left item (session 25): taken as a u32, 2147483648 rendered a MachineSet the API
            // server refuses (spec.replicas is an int32).
            "machineset replicas past int32".into(),
            openshift(&[
                "--machineset",
                "--instance-type",
                "m6id.xlarge",
                "--cluster-id",
                "c1",
                "--replicas",
                "2147483648",
            ]),
            2,
            vec!["--replicas \"2147483648\"", "int32: at most 2147483647"],
        ),
        (
            "gke request 0".into(),
            gke(&["--request", "0"]),
            2,
            vec!["--request \"0\"", "at least 1 byte"],
        ),
        (
            "aks request 0".into(),
            aks(&["--request", "0"]),
            2,
            vec!["--request \"0\"", "at least 1 byte"],
        ),
        (
            "a by-id glob of every disk".into(),
            systemd(&["--by-id", "/dev/disk/by-id/*"]),
            2,
            vec!["matches every disk"],
        ),
        (
            "a model pattern of every disk".into(),
            systemd(&["--model", "*"]),
            2,
            vec!["--model \"*\" matches every disk"],
        ),
        (
            "a by-id glob of partitions".into(),
            systemd(&[
                "--by-id",
                "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_X-part1",
            ]),
            2,
            vec!["names a partition"],
        ),
        (
            "bcache on a partition".into(),
            vec![
                "render",
                "bcache",
                "--fast",
                cli_cases::FAST,
                "--slow",
                "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0bbbbbbbbbbbbbbbb-part1",
            ],
            2,
            vec!["--slow", "names a partition"],
        ),
        (
            "bcache --mount with a .. component".into(),
            vec![
                "render",
                "bcache",
                "--fast",
                cli_cases::FAST,
                "--slow",
                cli_cases::SLOW,
                "--mount",
                "/data/../etc",
            ],
            2,
            vec!["--mount \"/data/../etc\"", ". or .. component"],
        ),
        (
            "bcache --label too long for xfs".into(),
            vec![
                "render",
                "bcache",
                "--fast",
                cli_cases::FAST,
                "--slow",
                cli_cases::SLOW,
                "--mount",
                "/data",
                "--label",
                "thirteenchars",
            ],
            2,
            vec!["--label", "xfs holds at most 12 characters"],
        ),
        (
            "lvmcache --fs without --mount".into(),
            vec![
                "render",
                "lvmcache",
                "--fast",
                cli_cases::FAST,
                "--slow",
                cli_cases::SLOW,
                "--fs",
                "ext4",
            ],
            2,
            vec!["--fs, --label and --options", "add --mount DIR"],
        ),
        (
            "a boot-time binary in /tmp".into(),
            openshift(&["--use-binary", "/tmp/disktier"]),
            2,
            vec![
                "--use-binary",
                "temporary directory",
                "may be gone at the next boot",
            ],
        ),
        (
            "an endpoint that is not a URL".into(),
            eks("https://a\"b/$(id)", "10.100.0.0/16"),
            2,
            vec!["--api-server-endpoint"],
        ),
        (
            "a CIDR with host bits".into(),
            eks("https://x.eks.amazonaws.com", "10.100.0.1/16"),
            2,
            vec!["host bits set", "10.100.0.0/16"],
        ),
    ];
    for &image in disktier_testkit::cli_cases::BAD_IMAGE_REFERENCES {
        cases.push((
            format!("gke --image {image}"),
            gke(&["--image", image]),
            2,
            vec!["--image", "give an image reference"],
        ));
        cases.push((
            format!("aks --image {image}"),
            aks(&["--image", image]),
            2,
            vec!["--image"],
        ));
    }
    cases.push((
        "a master MachineSet".into(),
        openshift(&[
            "--role",
            "master",
            "--machineset",
            "--instance-type",
            "m6id.xlarge",
            "--cluster-id",
            "abc",
        ]),
        2,
        vec![
            "--role master cannot be combined with --machineset",
            "control-plane machines are not managed by MachineSets",
            "drop --machineset",
        ],
    ));
    for vg in ["mapper", "disk", "null"] {
        cases.push((
            format!("lvmcache --vg {vg}"),
            [&["render"][..], cli_cases::LVMCACHE_A_B, &["--vg", vg]].concat(),
            2,
            vec!["--vg", "exists in /dev/ (lvm(8), VALID NAMES)"],
        ));
    }
    for lv in ["snapshot", "pvmove", "main_cdata"] {
        cases.push((
            format!("lvmcache --lv {lv}"),
            [&["render"][..], cli_cases::LVMCACHE_A_B, &["--lv", lv]].concat(),
            2,
            vec!["--lv", "lvm reserves"],
        ));
    }
    for (case, args, code, needles) in cases {
        let err = disktier()
            .args(&args)
            .stderr_of_exit_naming(&case, code, &needles);
        if code == 2 {
            assert_eq!(err.trim_end().lines().count(), 1, "{case}: one line: {err}");
        }
    }
    // QA (session 27): past u32, clap's own range was named ('not in 0..=4294967295'), not
    // the int32 limit (a usage error: clap's lines).
    disktier()
        .args(openshift(&[
            "--machineset",
            "--instance-type",
            "m6id.xlarge",
            "--cluster-id",
            "c1",
            "--replicas",
            "99999999999",
        ]))
        .stderr_of_exit_naming(
            "machineset replicas past u32",
            2,
            &[
                "'99999999999'",
                "spec.replicas is an int32: at most 2147483647",
            ],
        );
    // The escape hatch setup has, for the same rule.
    disktier()
        .args(openshift(&[
            "--use-binary",
            "/tmp/disktier",
            "--allow-build-binary",
        ]))
        .stdout_ok();
}

/// Regression (audit): the MachineSet's instance type was looked up in the embedded catalog
/// only, so a type `--catalog` adds was "not in disktier's catalog".
#[test]
fn the_machinesets_instance_type_is_looked_up_with_the_catalog_overlay() {
    let d = tempfile::tempdir().unwrap();
    let over = d.path().join("ours.toml");
    std::fs::write(
        &over,
        r#"
[[instance]]
name = "m9zd.large"
cloud = "aws"
store = { count = 1, size_gb = 118 }
source = "our own test"
date = "2026-11"
"#,
    )
    .unwrap();
    let args = [
        "--machineset",
        "--instance-type",
        "m9zd.large",
        "--cluster-id",
        "c1",
    ];
    let without = disktier()
        .arg("render")
        .args(cli_cases::OPENSHIFT)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&without.stderr);
    assert!(
        err.contains("m9zd.large is not in disktier's catalog"),
        "{err}"
    );
    let with = disktier()
        .arg("--catalog")
        .arg(&over)
        .arg("render")
        .args(cli_cases::OPENSHIFT)
        .args(args)
        .output()
        .unwrap();
    assert!(with.status.success());
    let err = String::from_utf8_lossy(&with.stderr);
    assert!(!err.contains("not in disktier's catalog"), "{err}");
    assert!(String::from_utf8_lossy(&with.stdout).contains("m9zd.large"));
}

/// Found by QA: `--options relatime` was persisted as `defaults,noatime,relatime`, which the
/// kernel mounts noatime.
#[test]
fn an_atime_option_replaces_noatime_in_the_units() {
    let out = disktier()
        .args("render systemd --mount /mnt/x --options relatime".split_whitespace())
        .stdout_ok();
    assert!(out.contains("Options=defaults,relatime\n"), "{out}");
    assert!(!out.contains("noatime"), "{out}");
}

/// Found by QA: a `--mount` (or `--bind`) whose unit names are over 255 bytes rendered invalid
/// units (openshift, exit 0) or failed with a bare "File name too long" (`-o`, setup).
#[test]
fn a_path_whose_unit_names_would_be_too_long_is_refused_up_front() {
    let long = format!("/mnt/{}", "a".repeat(240));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "render openshift",
            vec![
                "render".into(),
                "openshift".into(),
                "--mount".into(),
                long.clone(),
            ],
            "--mount",
        ),
        (
            "render systemd -o",
            vec![
                "render".into(),
                "systemd".into(),
                "--mount".into(),
                long.clone(),
                "-o".into(),
                out.display().to_string(),
            ],
            "--mount",
        ),
        (
            "render cloud-init --bind",
            vec![
                "render".into(),
                "cloud-init".into(),
                "--mount".into(),
                "/data".into(),
                "--bind".into(),
                format!("/srv/{}", "-".repeat(70)),
            ],
            "--bind",
        ),
        (
            "setup --persist systemd --dry-run",
            vec![
                "setup".into(),
                "--mount".into(),
                long.clone(),
                "--persist".into(),
                "systemd".into(),
                "--dry-run".into(),
            ],
            "--mount",
        ),
    ];
    for (case, args, flag) in cases {
        let err = disktier().args(&args).stderr_of_exit_naming(
            case,
            2,
            &[
                &format!("{flag} \""),
                "derived from it would be",
                "over the 255 systemd and Linux allow: use a shorter path",
            ],
        );
        assert!(!err.contains("File name too long"), "{case}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{case}: one line: {err}");
    }
    assert!(!out.exists(), "nothing written");
}

/// Found by QA: `--request` refused valid Kubernetes quantities (0.5Ti, 1.5Ti, 1e3, 1Ei); what
/// is not one is still refused with the fix.
#[test]
fn requests_take_the_kubernetes_quantity_grammar() {
    let gke = |request: &str| {
        let mut c = disktier();
        c.arg("render")
            .args(GKE_C1)
            .args(["--machine-type", "n1-standard-8", "--local-ssds", "8"])
            .arg(format!("--request={request}"));
        c
    };
    let aks = |request: &str| {
        let mut c = disktier();
        c.args("render aks --resource-group rg --cluster c --vm-size Standard_L16as_v3".split(' '))
            .arg(format!("--request={request}"));
        c
    };
    for q in ["0.5Ti", "1.5Ti", "1e3", "2.5e11", "+100Gi", ".5Ti"] {
        let out = gke(q).stdout_ok();
        assert!(
            out.contains(&format!("ephemeral-storage: {q}"))
                || out.contains(&format!("ephemeral-storage: '{q}'")),
            "gke {q}: {out}"
        );
        let out = aks(q).stdout_ok();
        assert!(
            out.contains(&format!("storage: {q}")) || out.contains(&format!("storage: '{q}'")),
            "aks {q}: {out}"
        );
    }
    // 1Ei is a quantity, larger than the disks.
    gke("1Ei").stderr_of_exit_naming("gke 1Ei", 2, &["the ephemeral-storage request 1Ei exceeds"]);
    aks("1Ei").stderr_of_exit_naming("aks 1Ei", 2, &["--request \"1Ei\"", "ask for at most that"]);
    for (q, why) in [
        ("lots", "write a Kubernetes quantity such as"),
        ("1.5.5Gi", "write a Kubernetes quantity such as"),
        ("1GB", "write a Kubernetes quantity such as"),
        (
            "500m",
            "m is milli, thousandths of a byte: write M (10^6 bytes) or Mi (2^20 bytes)",
        ),
        ("-1Gi", "at least 1 byte"),
        ("0.5", "at least 1 byte"),
    ] {
        gke(q).stderr_of_exit_naming(
            &format!("gke {q}"),
            2,
            &[&format!("--request \"{q}\""), why],
        );
        aks(q).stderr_of_exit_naming(
            &format!("aks {q}"),
            2,
            &[&format!("--request \"{q}\""), why],
        );
    }
}

/// QA: `-o DIR` on a full filesystem truncated each file and then failed writing it, leaving
/// an empty unit beside the old ones. Every file is now written in full beside its place and
/// renamed in only when all are: a failed run leaves the directory as it was.
#[test]
fn a_render_that_finds_no_room_leaves_the_directory_as_it_was() {
    let Some(full) = disktier_testkit::Mount::tmpfs_if_root(64 << 10) else {
        return;
    };
    let d = full.dir.join("out");
    disktier()
        .args(["render", "systemd", "--mount", "/mnt/x", "-o"])
        .arg(&d)
        .stdout_ok();
    let listing = |d: &std::path::Path| {
        let mut v: Vec<(String, String)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = listing(&d);
    // Fill what is left of the filesystem.
    let fill = full.dir.join("fill");
    let mut f = std::fs::File::create(&fill).unwrap();
    while std::io::Write::write_all(&mut f, &[0u8; 4096]).is_ok() {}
    drop(f);
    disktier()
        .args([
            "render",
            "systemd",
            "--mount",
            "/mnt/longer-name",
            "--overwrite",
            "-o",
        ])
        .arg(&d)
        .stderr_of_exit_naming("no room for the files", 2, &["No space left on device"]);
    assert_eq!(listing(&d), before, "a failed render changed the directory");
}
