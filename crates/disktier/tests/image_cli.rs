//! What `bash scripts/image.sh` builds, for real: the static binary runs in an empty chroot
//! (only /proc, /sys and /dev), the OCI archive is accepted by skopeo, is small, labelled and
//! reproducible, podman loads it as `localhost/disktier:<version>` and runs `check etcd` on an
//! xfs loop mount inside the container (text, JSON and Prometheus verdicts), and containerd's
//! `ctr images import` gives it the same name.
//!
//! The script is run once per test binary; its static build is cached in target/ between runs.
//! Needs root (chroot, loop devices, podman); the tools come from scripts/test.sh.

use disktier_testkit::cli::{judged, judged_json};
use disktier_testkit::{have, is_root, require, require_loop, LoopDev};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn name() -> String {
    format!("localhost/disktier:{VERSION}")
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs scripts/image.sh (once for all tests here); returns (binary, archive).
fn built() -> (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    BUILT
        .get_or_init(|| {
            run_image_sh();
            let out = Path::new(ROOT).join("target/image");
            (out.join("disktier"), out.join("disktier-oci.tar"))
        })
        .clone()
}

fn run_image_sh() -> String {
    let out = Command::new("bash")
        .arg("scripts/image.sh")
        .current_dir(ROOT)
        .output()
        .expect("bash scripts/image.sh");
    ok(&out, "bash scripts/image.sh");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The ELF program header types of `bin` (64-bit little-endian, as x86_64 is).
fn program_header_types(bin: &Path) -> Vec<u32> {
    let b = std::fs::read(bin).unwrap();
    assert_eq!(&b[..4], b"\x7fELF", "not ELF");
    assert_eq!(b[4], 2, "not ELF64");
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum)
        .map(|i| {
            let o = phoff + i * phentsize;
            u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
        })
        .collect()
}

const PT_INTERP: u32 = 3;

/// Mounts made for a chroot, unmounted (in reverse) on drop.
struct Mounts(Vec<PathBuf>);

impl Drop for Mounts {
    fn drop(&mut self) {
        for m in self.0.iter().rev() {
            let _ = Command::new("umount").arg("-l").arg(m).status();
        }
    }
}

fn mount(args: &[&str], at: &Path, mounts: &mut Mounts) {
    let out = Command::new("mount").args(args).arg(at).output().unwrap();
    ok(&out, &format!("mount {args:?} {}", at.display()));
    mounts.0.push(at.to_path_buf());
}

#[test]
fn static_binary_runs_in_an_empty_chroot() {
    if !require(is_root(), "root (chroot and mounts)") {
        return;
    }
    let (bin, _) = built();
    let types = program_header_types(&bin);
    assert!(
        !types.contains(&PT_INTERP),
        "{} has an ELF interpreter: it is not static",
        bin.display()
    );
    let size = std::fs::metadata(&bin).unwrap().len();
    assert!(size < 40 << 20, "{size} bytes: not stripped?");

    let root = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = root.path();
    for d in ["proc", "sys", "dev"] {
        std::fs::create_dir(r.join(d)).unwrap();
    }
    let mut m = Mounts(Vec::new());
    mount(&["-t", "proc", "proc"], &r.join("proc"), &mut m);
    mount(&["--bind", "-o", "ro", "/sys"], &r.join("sys"), &mut m);
    mount(&["--bind", "/dev"], &r.join("dev"), &mut m);
    std::fs::copy(&bin, r.join("disktier")).unwrap();
    let entries: Vec<String> = std::fs::read_dir(r)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 4, "{entries:?}");

    let chroot = |args: &[&str]| {
        Command::new("/usr/sbin/chroot")
            .arg(r)
            .arg("/disktier")
            .args(args)
            .env_clear()
            .env("DISKTIER_DB", "/results.db")
            .output()
            .unwrap()
    };
    let v = ok(&chroot(&["--version"]), "disktier --version in the chroot");
    assert_eq!(v.trim(), format!("disktier {VERSION}"));
    // A real measurement, saved in a SQLite store, with no libc, no /etc and no HOME.
    let out = chroot(&["check", "etcd", "/", "--quick", "--format", "json", "-q"]);
    let doc: Value = judged_json(&out);
    assert_eq!(doc["verdicts"][0]["name"], "etcd");
    assert!(doc["results"]["sync"]["ios"].as_u64().unwrap() > 0);
    let hist = ok(&chroot(&["history", "--format", "json"]), "history");
    assert!(hist.contains(doc["started_at"].as_str().unwrap()) || hist.contains("check"));
    // Catalog and planning work from the embedded data.
    ok(&chroot(&["price", "gp3", "--size", "100GiB"]), "price");
}

#[test]
fn oci_archive_is_valid_small_labelled_and_reproducible() {
    if !require(have("skopeo"), "skopeo (Debian package skopeo)") {
        return;
    }
    let (_, tar) = built();
    let size = std::fs::metadata(&tar).unwrap().len();
    assert!(
        size < 10 << 20,
        "the image archive is {size} bytes: above 10 MB"
    );
    let archive = format!("oci-archive:{}", tar.display());
    let inspect: Value = serde_json::from_str(&ok(
        &Command::new("skopeo")
            .args(["inspect", &archive])
            .output()
            .unwrap(),
        "skopeo inspect",
    ))
    .unwrap();
    let labels = &inspect["Labels"];
    assert_eq!(labels["org.opencontainers.image.version"], VERSION);
    let rev = labels["org.opencontainers.image.revision"]
        .as_str()
        .unwrap();
    assert!(rev.len() >= 40, "{rev}");
    assert!(labels["org.opencontainers.image.source"].is_string());
    // The licence, as Cargo.toml gives it (QA: the image carried none).
    assert_eq!(
        labels["org.opencontainers.image.licenses"],
        env!("CARGO_PKG_LICENSE")
    );
    let created = labels["org.opencontainers.image.created"].as_str().unwrap();
    assert_eq!(
        inspect["Created"].as_str().unwrap().get(..19),
        created.get(..19)
    );
    assert_eq!(inspect["Layers"].as_array().unwrap().len(), 1);
    let config: Value = serde_json::from_str(&ok(
        &Command::new("skopeo")
            .args(["inspect", "--config", &archive])
            .output()
            .unwrap(),
        "skopeo inspect --config",
    ))
    .unwrap();
    assert_eq!(config["config"]["Entrypoint"][0], "/usr/bin/disktier");

    // The layer holds the binary and /tmp, owned by root, with the commit's time.
    let list = ok(
        &Command::new("sh")
            .arg("-c")
            .arg(format!(
                "d=$(mktemp -d) && tar -xf {} -C $d && for b in $d/blobs/sha256/*; do \
                 if gzip -t $b 2>/dev/null; then tar -tvzf $b --numeric-owner; fi; done; rm -rf $d",
                tar.display()
            ))
            .output()
            .unwrap(),
        "listing the layer",
    );
    let paths: Vec<&str> = list
        .lines()
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["tmp/", "usr/", "usr/bin/", "usr/bin/disktier"],
        "{list}"
    );
    assert!(list.lines().all(|l| l.contains(" 0/0 ")), "{list}");

    // Reproducible: building again gives the same archive, byte for byte.
    let digest = std::fs::read_to_string(tar.with_file_name("disktier-oci.digest")).unwrap();
    let bytes = std::fs::read(&tar).unwrap();
    let _g = BUILD_AGAIN.lock().unwrap_or_else(|e| e.into_inner());
    run_image_sh();
    let again = std::fs::read_to_string(tar.with_file_name("disktier-oci.digest")).unwrap();
    assert_eq!(digest, again);
    assert!(std::fs::read(&tar).unwrap() == bytes, "the archive changed");
    assert!(digest.starts_with("sha256:"));
}

/// QA: a DISKTIER_IMAGE_SOURCE with a quote went into config.json as it was, so the image's
/// config was invalid JSON under its digest, found only when podman or skopeo read it. It is
/// refused before anything is built (no build: this test needs no root and takes no time).
#[test]
fn an_image_source_that_would_break_the_json_is_refused() {
    for bad in [
        "https://example.org/\"x",
        "https://example.org/\\x",
        "https://e.org/\tx",
    ] {
        let out = Command::new("bash")
            .arg("scripts/image.sh")
            .current_dir(ROOT)
            .env("DISKTIER_IMAGE_SOURCE", bad)
            .output()
            .expect("bash scripts/image.sh");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(
            err.contains("holds a quote, backslash or control character"),
            "{bad:?}: {err}"
        );
        assert!(!err.contains("Compiling"), "{bad:?}: built first: {err}");
    }
}

/// Tests that use the archive after the reproducibility test rebuilt it wait for it.
static BUILD_AGAIN: Mutex<()> = Mutex::new(());

fn podman(args: &[&str]) -> Output {
    Command::new("podman").args(args).output().unwrap()
}

/// `podman --runtime runc run` with the limits these machines need (no CAP_SYS_RESOURCE).
fn podman_run(volume: &str, env: &[&str], args: &[&str]) -> Output {
    let mut c = Command::new("podman");
    c.args(["--runtime", "runc", "run", "--rm"])
        .args([
            "--ulimit",
            "nofile=20000:20000",
            "--ulimit",
            "nproc=4096:4096",
        ])
        .args(["--volume", volume]);
    for e in env {
        c.args(["--env", e]);
    }
    c.arg(name()).args(args).output().unwrap()
}

/// The command the container runs on the volume at /var/lib/etcd, in each output format.
const CHECK_ETCD: &[&str] = &["check", "etcd", "/var/lib/etcd", "--quick", "--no-save"];

#[test]
fn podman_runs_check_etcd_on_an_xfs_loop_mount() {
    if !require_loop()
        || !require(have("podman") && have("runc"), "podman and runc")
        || !require(have("mkfs.xfs"), "mkfs.xfs")
    {
        return;
    }
    let (_, tar) = built();
    {
        let _g = BUILD_AGAIN.lock().unwrap_or_else(|e| e.into_inner());
        let out = podman(&["load", "-i", tar.to_str().unwrap()]);
        let said = ok(&out, "podman load");
        assert!(said.contains(&name()), "podman load said: {said}");
    }
    ok(
        &podman(&["image", "exists", &name()]),
        "podman image exists",
    );
    let inspect: Value =
        serde_json::from_str(&ok(&podman(&["image", "inspect", &name()]), "inspect")).unwrap();
    assert_eq!(
        inspect[0]["Config"]["Entrypoint"][0], "/usr/bin/disktier",
        "{inspect}"
    );

    let dev = LoopDev::new(400 << 20);
    let mnt = dev.mkfs_mount("xfs");
    let volume = format!("{}:/var/lib/etcd:Z", mnt.dir.display());

    // Text: the etcd-perf wording and an exit code that is the verdict.
    let out = podman_run(&volume, &[], CHECK_ETCD);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("99th percentile of fsync is "), "{text}");
    assert!(text.contains("xfs"), "{text}");

    // JSON: the same verdict, on the xfs mount, from inside the container.
    let out = podman_run(&volume, &[], &[CHECK_ETCD, &["--format", "json"]].concat());
    let doc: Value = judged_json(&out);
    assert_eq!(doc["verdicts"][0]["name"], "etcd");
    assert_eq!(doc["verdicts"][0]["pass"], out.status.code() == Some(0));
    assert_eq!(doc["target"]["fs_type"], "xfs");
    assert_eq!(doc["target"]["path"], "/var/lib/etcd");

    // Prometheus, with the node name a pod gets from the downward API.
    let out = podman_run(
        &volume,
        &["NODE_NAME=node-from-downward-api"],
        &[CHECK_ETCD, &["--format", "prometheus"]].concat(),
    );
    let text = judged(&out);
    assert!(
        text.lines().any(|l| l.starts_with("disktier_verdict_pass{")
            && l.contains(r#"node="node-from-downward-api""#)
            && l.contains(r#"verdict="etcd""#)),
        "{text}"
    );
    // The test file was removed from the disk.
    assert_eq!(std::fs::read_dir(&mnt.dir).unwrap().count(), 0);
}

#[test]
fn containerd_imports_the_archive_under_the_same_name() {
    if !require(is_root(), "root (containerd)")
        || !require(have("containerd") && have("ctr"), "containerd and ctr")
    {
        return;
    }
    let (_, tar) = built();
    // A throwaway containerd: its own root, state and socket, stopped at the end.
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let sock = d.path().join("containerd.sock");
    let log = std::fs::File::create(d.path().join("log")).unwrap();
    // Its own config: nothing from /etc/containerd, and no CRI plugin (no ports, no CNI).
    let config = d.path().join("config.toml");
    std::fs::write(
        &config,
        "version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n",
    )
    .unwrap();
    let mut daemon = Command::new("containerd")
        .arg("--config")
        .arg(&config)
        .arg("--root")
        .arg(d.path().join("root"))
        .arg("--state")
        .arg(d.path().join("state"))
        .arg("--address")
        .arg(&sock)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    struct Stop<'a>(&'a mut std::process::Child);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _stop = Stop(&mut daemon);
    let ctr = |args: &[&str]| {
        Command::new("ctr")
            .arg("--address")
            .arg(&sock)
            .args(["-n", "k8s.io"])
            .args(args)
            .output()
            .unwrap()
    };
    let t0 = std::time::Instant::now();
    while !ctr(&["version"]).status.success() {
        assert!(
            t0.elapsed().as_secs() < 30,
            "containerd did not start: {}",
            std::fs::read_to_string(d.path().join("log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _g = BUILD_AGAIN.lock().unwrap_or_else(|e| e.into_inner());
    ok(
        &ctr(&["images", "import", "--no-unpack", tar.to_str().unwrap()]),
        "ctr images import",
    );
    let names = ok(&ctr(&["images", "ls", "-q"]), "ctr images ls");
    assert!(names.lines().any(|l| l == name()), "ctr images ls: {names}");
}

/// Every script in scripts/ and bench/ (they run as root: a quoting slip is a real bug).
#[test]
fn image_and_benchmark_scripts_pass_shellcheck() {
    if !require(have("shellcheck"), "shellcheck") {
        return;
    }
    let mut scripts: Vec<String> = Vec::new();
    for dir in ["scripts", "bench"] {
        for e in std::fs::read_dir(Path::new(ROOT).join(dir)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".sh") {
                scripts.push(format!("{dir}/{name}"));
            }
        }
    }
    scripts.sort();
    assert!(scripts.iter().any(|s| s == "bench/pairs.sh"), "{scripts:?}");
    let out = Command::new("shellcheck")
        .args(["-S", "warning"])
        .args(&scripts)
        .current_dir(ROOT)
        .output()
        .unwrap();
    ok(&out, "shellcheck");
}
