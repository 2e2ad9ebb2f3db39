//! Every rendered file of every platform: a golden file (insta), no kernel device names, and
//! validation: YAML objects against the JSON Schemas in `schemas/` (the Ignition config of a
//! MachineConfig too), systemd units with `systemd-analyze verify`, scripts with `bash -n` (and
//! shellcheck where installed). Plus the refusals: bad machine types and counts, conflicting
//! options, kernel names.

use disktier_cmd::{Cmd, CommandRunner, RealRunner};
use disktier_disks::render::*;
use disktier_testkit::cli::assert_any_starts_with;
use serde_json::Value;
use std::path::Path;

// ---------- the cases ----------

fn intent(mount: &str, f: impl FnOnce(&mut IntentInput)) -> Intent {
    let mut input = IntentInput {
        mount: mount.into(),
        ..Default::default()
    };
    f(&mut input);
    Intent::new(input).unwrap()
}

fn cache_mount(mount: &str, fs: FsType, label: &str, options: &[&str]) -> CacheMount {
    CacheMount::new(CacheMountInput {
        mount: mount.into(),
        fs: Some(fs),
        label: Some(label.into()),
        options: options.iter().map(|o| o.to_string()).collect(),
    })
    .unwrap()
}

fn openshift(
    f: impl FnOnce(&mut IntentInput),
    role: &str,
    ms: Option<MachineSetConfig>,
    bin: Option<&str>,
) -> Rendered {
    OpenShift::new(OpenShiftConfig {
        intent: intent("/var/lib/containers", f),
        role: role.into(),
        machineset: ms,
        use_binary: bin.map(String::from),
        allow_build_binary: false,
    })
    .unwrap()
    .render()
    .unwrap()
}

fn m6id() -> MachineSetConfig {
    MachineSetConfig {
        instance_type: "m6id.xlarge".into(),
        cluster_id: "mycluster-x7k2p".into(),
        region: "us-east-1".into(),
        zone: None,
        ami: None,
        replicas: 1,
        local_disks: LocalDisks::Yes,
    }
}

fn gke_cfg() -> GkeConfig {
    GkeConfig {
        cluster: "before-localssd".into(),
        machine_type: "n1-standard-8".into(),
        local_ssds: 2,
        pool: "ssd-pool".into(),
        project: "my-project-1".into(),
        zone: "asia-east1-a".into(),
        local_ssd_count: None,
        request: "200Gi".into(),
        image: "nginx".into(),
    }
}

fn eks_cfg(strategy: LocalStorageStrategy) -> EksConfig {
    EksConfig {
        cluster: "prod".into(),
        api_server_endpoint: "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com".into(),
        certificate_authority: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==".into(),
        cidr: "10.100.0.0/16".into(),
        strategy,
        mount_path: None,
        node_role: None,
        name: "local-nvme".into(),
    }
}

const FAST: &str = "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0fast00000000001";
const SLOW: &str = "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0slow00000000002";

fn all_cases() -> Vec<(&'static str, Rendered)> {
    vec![
        (
            "openshift",
            openshift(
                |i| i.options = vec!["prjquota".into()],
                "worker",
                None,
                None,
            ),
        ),
        (
            "openshift_machineset",
            openshift(
                |i| i.options = vec!["prjquota".into()],
                "worker",
                Some(m6id()),
                None,
            ),
        ),
        (
            "openshift_custom_role",
            openshift(
                |i| {
                    i.by_id =
                        Some("/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*".into());
                    i.fs = Some(FsType::Ext4);
                    i.options = vec!["prjquota".into()];
                    i.binds = vec!["/var/lib/kubelet,/var/log/pods".into()];
                    i.owner = Some("root:root".into());
                    i.mode = Some("0711".into());
                },
                "worker-ephemeral",
                Some(MachineSetConfig {
                    region: "eu-west-1".into(),
                    zone: Some("eu-west-1b".into()),
                    ami: Some("ami-0123456789abcdef0".into()),
                    replicas: 3,
                    ..m6id()
                }),
                None,
            ),
        ),
        (
            "openshift_use_binary",
            openshift(
                |i| i.options = vec!["prjquota".into()],
                "worker",
                None,
                Some("/usr/local/bin/disktier"),
            ),
        ),
        ("gke", Gke::new(gke_cfg()).unwrap().render().unwrap()),
        (
            "eks",
            Eks::new(eks_cfg(LocalStorageStrategy::Raid0))
                .unwrap()
                .render()
                .unwrap(),
        ),
        (
            "eks_mount",
            Eks::new(EksConfig {
                mount_path: Some("/mnt/k8s-disks".into()),
                ..eks_cfg(LocalStorageStrategy::Mount)
            })
            .unwrap()
            .render()
            .unwrap(),
        ),
        (
            "systemd",
            Systemd::new(intent("/mnt/disks/ssd", |i| {
                i.binds = vec!["/var/lib/containerd,/var/lib/kubelet".into()];
            }))
            .render()
            .unwrap(),
        ),
        (
            "cloud_init",
            CloudInit::new(intent("/mnt/k8s-disks/0", |i| {
                i.models = vec!["nvme_card".into()];
                i.owner = Some("ec2-user:ec2-user".into());
            }))
            .render()
            .unwrap(),
        ),
        (
            "bcache",
            Bcache::new(BcacheConfig {
                fast: FAST.into(),
                slow: SLOW.into(),
                mode: BcacheMode::Writeback,
                sequential_cutoff: 0,
            })
            .unwrap()
            .render()
            .unwrap(),
        ),
        (
            "bcache_mount",
            Bcache::new(BcacheConfig {
                fast: FAST.into(),
                slow: SLOW.into(),
                mode: BcacheMode::Writeback,
                sequential_cutoff: 0,
            })
            .unwrap()
            .with_mount(cache_mount("/data", FsType::Xfs, "bcache", &[]))
            .render()
            .unwrap(),
        ),
        (
            "lvmcache_mount",
            Lvmcache::new(LvmcacheConfig {
                fast: FAST.into(),
                slow: SLOW.into(),
                mode: LvmcacheMode::Writethrough,
                vg: "disktier".into(),
                lv: "main".into(),
            })
            .unwrap()
            .with_mount(cache_mount(
                "/mnt/cached data",
                FsType::Ext4,
                "cached",
                &["prjquota"],
            ))
            .render()
            .unwrap(),
        ),
        (
            "lvmcache",
            Lvmcache::new(LvmcacheConfig {
                fast: FAST.into(),
                slow: SLOW.into(),
                mode: LvmcacheMode::Writeback,
                vg: "disktier".into(),
                lv: "main".into(),
            })
            .unwrap()
            .render()
            .unwrap(),
        ),
    ]
}

// ---------- checks ----------

/// A script without its comment lines.
fn code(script: &str) -> String {
    script
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Finds `/dev/nvme<d>n<d>`, `/dev/sd<letter>` or `/dev/xvd<letter>` anywhere in `s`.
fn kernel_name(s: &str) -> Option<String> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices("/dev/") {
        let rest = &b[i + 5..];
        let digit = |k: usize| rest.get(k).is_some_and(u8::is_ascii_digit);
        let lower = |k: usize| rest.get(k).is_some_and(u8::is_ascii_lowercase);
        let hit = (rest.starts_with(b"nvme") && digit(4) && {
            let mut k = 4;
            while digit(k) {
                k += 1;
            }
            rest.get(k) == Some(&b'n') && digit(k + 1)
        }) || (rest.starts_with(b"sd") && lower(2))
            || (rest.starts_with(b"xvd") && lower(3));
        if hit {
            return Some(s[i..(i + 16).min(s.len())].to_string());
        }
    }
    None
}

#[test]
fn the_kernel_name_finder_finds_what_it_must() {
    assert!(kernel_name("What=/dev/nvme1n1").is_some());
    assert!(kernel_name("x /dev/nvme10n2 y").is_some());
    assert!(kernel_name("/dev/sdb").is_some());
    assert!(kernel_name("/dev/xvdf").is_some());
    assert!(kernel_name("/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_x").is_none());
    assert!(kernel_name("/dev/$name /dev/md/$LABEL /dev/bcache").is_none());
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["$comment"].as_str().is_some_and(|c| c.len() > 40),
        "{name} must cite its spec in $comment"
    );
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn validate(schema_file: &str, what: &str, instance: &Value) {
    let v = schema(schema_file);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match {schema_file}:\n{}",
        errors.join("\n")
    );
}

fn schema_for_kind(kind: &str) -> &'static str {
    match kind {
        "MachineConfig" => "machineconfig.json",
        "MachineConfigPool" => "machineconfigpool.json",
        "MachineSet" => "machineset.json",
        "Pod" => "pod.json",
        "NodeConfig" => "nodeconfig.json",
        "EC2NodeClass" => "ec2nodeclass.json",
        "NodePool" => "nodepool.json",
        other => panic!("no schema for kind {other}"),
    }
}

fn decode_base64(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// `bash -n`, and shellcheck (errors only) where installed.
fn check_shell(what: &str, text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.sh");
    std::fs::write(&path, text).unwrap();
    let p = path.display().to_string();
    let out = RealRunner
        .output(&Cmd::new("bash").args(["-n", &p]))
        .unwrap();
    assert!(out.success(), "bash -n {what}:\n{}", out.stderr);
    assert!(
        text.starts_with("#!/bin/bash\n"),
        "{what} has no bash shebang"
    );
    assert!(
        text.contains("set -euo pipefail"),
        "{what} lacks set -euo pipefail"
    );
    if RealRunner.has_program("shellcheck") {
        let out = RealRunner
            .output(&Cmd::new("shellcheck").args(["-S", "warning", &p]))
            .unwrap();
        assert!(out.success(), "shellcheck {what}:\n{}", out.stdout);
    }
}

/// `systemd-analyze verify` over a set of units written under their own names. The only
/// complaint tolerated is that disktier itself is not installed at the `--use-binary` path on
/// this machine (it is on the node).
fn verify_units(what: &str, units: &[(String, String)]) {
    if units.is_empty() {
        return;
    }
    if !disktier_testkit::require(RealRunner.has_program("systemd-analyze"), "systemd-analyze") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["verify".to_string()];
    for (name, contents) in units {
        let p = dir.path().join(name);
        std::fs::write(&p, contents).unwrap();
        args.push(p.display().to_string());
    }
    let out = RealRunner
        .output(&Cmd::new("systemd-analyze").args(args))
        .unwrap();
    let complaints: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.contains("Command /usr/local/bin/disktier is not executable"))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let only_binary = !out.success() && complaints.is_empty();
    assert!(
        (out.success() || only_binary) && complaints.is_empty(),
        "systemd-analyze verify {what}:\n{}{}",
        out.stderr,
        out.stdout
    );
}

/// Ignition's own validator (Debian package `ignition`), where installed: it also checks the
/// units (an enabled unit needs an [Install] section). Skipped where absent, like shellcheck.
fn ignition_validate(what: &str, config: &Value) {
    if !RealRunner.has_program("ignition-validate") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("config.ign");
    std::fs::write(&p, serde_json::to_string(config).unwrap()).unwrap();
    let out = RealRunner
        .output(&Cmd::new("ignition-validate").arg(p.display().to_string()))
        .unwrap();
    assert!(
        out.success() && out.stdout.trim().is_empty() && out.stderr.trim().is_empty(),
        "ignition-validate {what}:\n{}{}",
        out.stdout,
        out.stderr
    );
}

/// Validates one Kubernetes/OpenShift object, and what a MachineConfig embeds.
fn check_object(what: &str, doc: &Value) {
    let kind = doc["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("{what} has no kind"));
    validate(schema_for_kind(kind), what, doc);
    if kind == "MachineConfig" {
        let config = &doc["spec"]["config"];
        validate(
            "ignition-3.2.0.json",
            &format!("{what} spec.config"),
            config,
        );
        ignition_validate(what, config);
        let units: Vec<(String, String)> = config["systemd"]["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                (
                    u["name"].as_str().unwrap().to_string(),
                    u["contents"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        verify_units(what, &units);
        if let Some(files) = config["storage"]["files"].as_array() {
            for f in files {
                let src = f["contents"]["source"].as_str().unwrap();
                let b64 = src
                    .strip_prefix("data:text/plain;charset=utf-8;base64,")
                    .unwrap();
                let script = String::from_utf8(decode_base64(b64)).unwrap();
                check_shell(&format!("{what} {}", f["path"]), &script);
                assert!(
                    kernel_name(&script).is_none(),
                    "{what}: embedded script names a kernel device"
                );
                // Every unit's ExecStart points at a file the config writes.
                let path = f["path"].as_str().unwrap();
                assert!(
                    units.iter().any(|(_, c)| c.contains(path)),
                    "{what}: {path} is not used"
                );
            }
        }
    }
}

fn check_cloud_config(what: &str, text: &str) {
    assert!(
        text.starts_with("#cloud-config\n"),
        "{what} must start with #cloud-config"
    );
    let doc: Value = serde_yaml_ng::from_str(text).unwrap();
    validate("cloud-config.json", what, &doc);
    // cloud-init's own schema check (Debian package `cloud-init`), where installed.
    if RealRunner.has_program("cloud-init") {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("user-data");
        std::fs::write(&p, text).unwrap();
        let out = RealRunner
            .output(&Cmd::new("cloud-init").args([
                "schema",
                "--config-file",
                &p.display().to_string(),
            ]))
            .unwrap();
        assert!(
            out.success() && out.stdout.contains("Valid cloud-config"),
            "cloud-init schema {what}:\n{}{}",
            out.stdout,
            out.stderr
        );
    }
    let mut units = Vec::new();
    for f in doc["write_files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        let content = f["content"].as_str().unwrap();
        if let Some(name) = path.strip_prefix("/etc/systemd/system/") {
            units.push((name.to_string(), content.to_string()));
        } else {
            check_shell(&format!("{what} {path}"), content);
        }
    }
    verify_units(what, &units);
}

fn check_rendered(case: &str, r: &Rendered) {
    assert!(!r.files.is_empty(), "{case}: no files");
    let mut units = Vec::new();
    for f in &r.files {
        let what = format!("{case}/{}", f.name);
        if let Some(k) = kernel_name(&f.content) {
            panic!("{what} names a kernel device: {k}");
        }
        match f.kind {
            FileKind::Yaml => {
                let doc: Value = serde_yaml_ng::from_str(&f.content)
                    .unwrap_or_else(|e| panic!("{what} is not YAML: {e}"));
                check_object(&what, &doc);
            }
            FileKind::CloudConfig => check_cloud_config(&what, &f.content),
            FileKind::Shell => check_shell(&what, &f.content),
            FileKind::Unit => units.push((f.name.clone(), f.content.clone())),
        }
        insta::assert_snapshot!(format!("{case}__{}", f.name.replace('\\', "_")), f.content);
    }
    verify_units(case, &units);
}

#[test]
fn every_platform_renders_valid_files_matching_their_golden_files() {
    for (case, r) in all_cases() {
        check_rendered(case, &r);
    }
}

#[test]
fn openshift_units_follow_seed_000_safely() {
    let r = openshift(
        |i| i.options = vec!["prjquota".into()],
        "worker",
        None,
        None,
    );
    let mc = &r.files[0].content;
    let doc: Value = serde_yaml_ng::from_str(mc).unwrap();
    let units = doc["spec"]["config"]["systemd"]["units"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = units.iter().map(|u| u["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"var-lib-containers.mount"), "{names:?}");
    let mount = units
        .iter()
        .find(|u| u["name"] == "var-lib-containers.mount")
        .unwrap();
    let contents = mount["contents"].as_str().unwrap();
    assert!(contents.contains("What=/dev/disk/by-label/disktier"));
    assert!(contents.contains("Options=defaults,noatime,prjquota"));
    assert!(contents.contains("Before=local-fs.target crio.service kubelet.service"));
    assert_eq!(
        doc["spec"]["config"]["ignition"]["version"],
        IGNITION_VERSION
    );
    // The OpenShift instance-disk recipe's three problems are named in the output, and none of them
    // is in it.
    assert!(mc.contains("nvme1n1") && mc.contains("rm -rf") && mc.contains("without checking"));
    assert!(!mc.contains("systemd-makefs"));
    let script_b64 = doc["spec"]["config"]["storage"]["files"][0]["contents"]["source"]
        .as_str()
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .to_string();
    let script = String::from_utf8(decode_base64(&script_b64)).unwrap();
    assert!(!code(&script).contains("rm -rf"));
    assert!(!code(&script).contains("--force"));
    assert!(script.contains("blkid -p"));
}

#[test]
fn openshift_machineset_matches_seed_000() {
    let r = openshift(|_| {}, "worker", Some(m6id()), None);
    let ms = r
        .files
        .iter()
        .find(|f| f.name.starts_with("machineset-"))
        .unwrap();
    let doc: Value = serde_yaml_ng::from_str(&ms.content).unwrap();
    assert_eq!(doc["metadata"]["name"], "mycluster-x7k2p-worker-ephemeral");
    assert_eq!(
        doc["spec"]["template"]["spec"]["metadata"]["labels"]["disk_type"],
        "ephemeral"
    );
    let v = &doc["spec"]["template"]["spec"]["providerSpec"]["value"];
    assert_eq!(v["instanceType"], "m6id.xlarge");
    assert_eq!(v["placement"]["availabilityZone"], "us-east-1a");
    assert_eq!(v["ami"]["id"], "ami-0722eb0819717090f");
}

#[test]
fn gke_command_and_pods_follow_seed_002() {
    let r = Gke::new(gke_cfg()).unwrap().render().unwrap();
    let sh = &r.files[0].content;
    assert!(sh.contains("gcloud container node-pools create ssd-pool"));
    assert!(sh.contains("--ephemeral-storage-local-ssd count=2"));
    assert!(sh.contains("--machine-type=n1-standard-8"));
    assert!(sh.contains("--zone=asia-east1-a"));
    assert!(sh.contains("--project=my-project-1"));
    assert_eq!(
        sh.matches("--project=my-project-1 --zone=asia-east1-a")
            .count(),
        2,
        "{sh}"
    );
    assert!(sh.contains("1.25.3-gke.1800"));
    assert!(!code(sh).contains("--local-ssd-count"));
    let pod: Value = serde_yaml_ng::from_str(&r.files[1].content).unwrap();
    assert_eq!(
        pod["spec"]["nodeSelector"]["cloud.google.com/gke-ephemeral-storage-local-ssd"],
        "true"
    );
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["requests"]["ephemeral-storage"],
        "200Gi"
    );
    let hp: Value = serde_yaml_ng::from_str(&r.files[2].content).unwrap();
    assert_eq!(
        hp["spec"]["volumes"][0]["hostPath"]["path"],
        "/mnt/stateful_partition/kube-ephemeral-ssd"
    );
}

#[test]
fn eks_objects_carry_the_local_storage_policy() {
    let r = Eks::new(eks_cfg(LocalStorageStrategy::Raid0))
        .unwrap()
        .render()
        .unwrap();
    let nc: Value = serde_yaml_ng::from_str(&r.files[0].content).unwrap();
    assert_eq!(nc["spec"]["instance"]["localStorage"]["strategy"], "RAID0");
    let cls: Value = serde_yaml_ng::from_str(&r.files[1].content).unwrap();
    assert_eq!(cls["spec"]["instanceStorePolicy"], "RAID0");
    let r = Eks::new(eks_cfg(LocalStorageStrategy::Mount))
        .unwrap()
        .render()
        .unwrap();
    let cls: Value = serde_yaml_ng::from_str(&r.files[1].content).unwrap();
    assert!(cls["spec"].get("instanceStorePolicy").is_none());
    assert!(cls["spec"]["userData"]
        .as_str()
        .unwrap()
        .contains("strategy: Mount"));
}

#[test]
fn a_misspelt_field_fails_the_schema() {
    // The schemas must be able to fail: a MachineConfig with a typo and one with a wrong
    // Ignition version are refused.
    let r = openshift(|_| {}, "worker", None, None);
    let mut doc: Value = serde_yaml_ng::from_str(&r.files[0].content).unwrap();
    doc["spec"]["config"]["ignition"]["version"] = Value::from("3.1.0");
    assert!(!schema("ignition-3.2.0.json").is_valid(&doc["spec"]["config"]));
    doc["spec"]["confg"] = Value::Null;
    assert!(!schema("machineconfig.json").is_valid(&doc));
    let r = Gke::new(gke_cfg()).unwrap().render().unwrap();
    let mut pod: Value = serde_yaml_ng::from_str(&r.files[1].content).unwrap();
    pod["spec"]["containers"][0]["resources"]["requests"]["ephemeral-storage"] =
        Value::from("lots");
    assert!(!schema("pod.json").is_valid(&pod));
}

// ---------- refusals ----------

#[test]
fn gke_refuses_e2_too_many_ssds_and_local_ssd_count() {
    let e = Gke::new(GkeConfig {
        machine_type: "e2-standard-8".into(),
        ..gke_cfg()
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::NoLocalSsd { .. }), "{e}");
    assert!(e.to_string().contains("no local SSD"));

    let e = Gke::new(GkeConfig {
        local_ssds: 24,
        ..gke_cfg()
    })
    .unwrap_err();
    assert_eq!(
        e,
        RenderError::TooManyLocalSsds {
            machine_type: "n1-standard-8".into(),
            count: 24,
            max: 8
        }
    );

    let e = Gke::new(GkeConfig {
        local_ssd_count: Some(1),
        ..gke_cfg()
    })
    .unwrap_err();
    assert_eq!(e, RenderError::LocalSsdCountConflict);

    let e = Gke::new(GkeConfig {
        machine_type: "n2-standard-16".into(),
        local_ssds: 1,
        ..gke_cfg()
    })
    .unwrap_err();
    assert!(
        matches!(e, RenderError::LocalSsdCountNotAllowed { .. }),
        "{e}"
    );

    let e = Gke::new(GkeConfig {
        request: "800Gi".into(),
        local_ssds: 2,
        ..gke_cfg()
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::RequestTooLarge { .. }), "{e}");
    // A local SSD is 375 GiB, not 375 GB, and the kubelet keeps 10% of the node's ephemeral
    // storage free (its nodefs.available<10% eviction threshold): 90% of 2 x 375Gi fits, one
    // byte more does not.
    Gke::new(GkeConfig {
        request: format!("{}", 2 * 402_653_184_000u64 / 10 * 9),
        local_ssds: 2,
        ..gke_cfg()
    })
    .unwrap();
    let e = Gke::new(GkeConfig {
        request: format!("{}", 2 * 402_653_184_000u64 / 10 * 9 + 1),
        local_ssds: 2,
        ..gke_cfg()
    })
    .unwrap_err();
    assert!(
        matches!(
            e,
            RenderError::RequestTooLarge {
                capacity: 805_306_368_000,
                allocatable: 724_775_731_200,
                ..
            }
        ),
        "{e}"
    );
    // Found by QA: the SSDs' whole raw size was rendered, a request no node can ever schedule
    // (Insufficient ephemeral-storage).
    let e = Gke::new(GkeConfig {
        request: "750Gi".into(),
        local_ssds: 2,
        ..gke_cfg()
    })
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("at most 724775731200 bytes are allocatable"),
        "{e}"
    );

    // Unknown types render, with the note instead of a guess.
    let r = Gke::new(GkeConfig {
        machine_type: "n4-standard-8".into(),
        ..gke_cfg()
    })
    .unwrap()
    .render()
    .unwrap();
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("unknown machine type: cannot validate the count")));
}

#[test]
fn cache_scripts_refuse_kernel_names_and_one_disk_twice() {
    let e = Bcache::new(BcacheConfig {
        fast: "/dev/nvme1n1".into(),
        slow: SLOW.into(),
        mode: BcacheMode::Writeback,
        sequential_cutoff: 0,
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::KernelName { .. }));
    let e = Lvmcache::new(LvmcacheConfig {
        fast: SLOW.into(),
        slow: SLOW.into(),
        mode: LvmcacheMode::Writeback,
        vg: "vg".into(),
        lv: "main".into(),
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::SameDevice { .. }));
}

#[test]
fn openshift_refusals() {
    let base = || OpenShiftConfig {
        intent: intent("/var/lib/containers", |_| {}),
        role: "worker".into(),
        machineset: None,
        use_binary: None,
        allow_build_binary: false,
    };
    let e = OpenShift::new(OpenShiftConfig {
        machineset: Some(MachineSetConfig {
            region: "eu-west-1".into(),
            ..m6id()
        }),
        ..base()
    })
    .unwrap_err();
    assert!(
        matches!(e, RenderError::Missing { what: "--ami", .. }),
        "{e}"
    );
    let e = OpenShift::new(OpenShiftConfig {
        role: "Worker_X".into(),
        ..base()
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::BadValue { .. }));
    let e = OpenShift::new(OpenShiftConfig {
        intent: intent("/var/lib/containers", |i| {
            i.models = vec!["nvme_card".into()]
        }),
        use_binary: Some("/usr/local/bin/disktier".into()),
        ..base()
    })
    .unwrap_err();
    assert!(matches!(e, RenderError::Conflict { .. }));
}

#[test]
fn openshift_refuses_a_master_machineset_with_what_to_do_instead() {
    // Found by QA: `--role master --machineset` rendered a "master" MachineSet that booted
    // workers (worker user data, profile and security group); control-plane machines are not
    // managed by MachineSets.
    let cfg = |role: &str, machineset: Option<MachineSetConfig>| OpenShiftConfig {
        intent: intent("/var/lib/containers", |_| {}),
        role: role.into(),
        machineset,
        use_binary: None,
        allow_build_binary: false,
    };
    let e = OpenShift::new(cfg("master", Some(m6id())))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--role master cannot be combined with --machineset: OpenShift's control-plane machines are not managed by MachineSets")
            && e.contains("drop --machineset to render the master MachineConfig alone")
            && e.contains("--role worker"),
        "{e}"
    );
    // The master MachineConfig alone, and a MachineSet of any worker role, still render.
    let r = OpenShift::new(cfg("master", None))
        .unwrap()
        .render()
        .unwrap();
    assert_eq!(r.files.len(), 1, "{:?}", r.files);
    for role in ["worker", "worker-ephemeral", "infra"] {
        let r = OpenShift::new(cfg(role, Some(m6id())))
            .unwrap()
            .render()
            .unwrap();
        assert!(
            r.files.iter().any(|f| f.name.starts_with("machineset-")),
            "{role}"
        );
    }
}

#[test]
fn openshift_refuses_an_instance_type_without_local_disks_and_notes_an_unknown_one() {
    // Found by QA: --machineset --instance-type m6i.xlarge (or t3.medium) rendered without a
    // word, though the MachineConfig needs a local disk on those nodes.
    let with = |local_disks: LocalDisks, instance_type: &str| {
        OpenShift::new(OpenShiftConfig {
            intent: intent("/var/lib/containers", |_| {}),
            role: "worker".into(),
            machineset: Some(MachineSetConfig {
                instance_type: instance_type.into(),
                local_disks,
                ..m6id()
            }),
            use_binary: None,
            allow_build_binary: false,
        })
    };
    let e = with(
        LocalDisks::No {
            similar: vec!["m6id.xlarge".into(), "c6id.xlarge".into()],
        },
        "m6i.xlarge",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m6i.xlarge has no instance store (local NVMe disks) in disktier's catalog, so the MachineSet's nodes would have no disk for the MachineConfig: use a type with instance store, e.g. m6id.xlarge, c6id.xlarge"
    );
    let r = with(LocalDisks::Unknown, "t3.medium")
        .unwrap()
        .render()
        .unwrap();
    assert_any_starts_with(&r.notes, "t3.medium is not in disktier's catalog");
    // A type with local disks renders as before, with no such note.
    let r = with(LocalDisks::Yes, "m6id.xlarge")
        .unwrap()
        .render()
        .unwrap();
    assert!(
        !r.notes.iter().any(|n| n.contains("catalog")),
        "{:?}",
        r.notes
    );
}

#[test]
fn openshift_use_binary_follows_setups_rule_for_boot_time_binaries() {
    // Found by QA: --use-binary /tmp/disktier was accepted while setup --persist systemd
    // refuses a binary in /tmp.
    let cfg = |bin: &str, allow: bool| OpenShiftConfig {
        intent: intent("/var/lib/containers", |_| {}),
        role: "worker".into(),
        machineset: None,
        use_binary: Some(bin.into()),
        allow_build_binary: allow,
    };
    for bin in [
        "/tmp/disktier",
        "/root/disktier",
        "/src/target/release/disktier",
    ] {
        let e = OpenShift::new(cfg(bin, false)).unwrap_err().to_string();
        assert!(
            e.contains("which may be gone at the next boot"),
            "{bin}: {e}"
        );
        assert!(OpenShift::new(cfg(bin, true)).is_ok(), "{bin}");
    }
    assert!(OpenShift::new(cfg("/usr/local/bin/disktier", false)).is_ok());
}

#[test]
fn gke_and_aks_refuse_a_zero_request_and_a_bad_image() {
    // Found by QA: 0 "exceeds" the SSDs (gke) or was told to ask for at most the size (aks);
    // `nginx;id` and friends reached the Pod YAML.
    let e = Gke::new(GkeConfig {
        request: "0".into(),
        ..gke_cfg()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("must be at least 1 byte"), "{e}");
    let aks = |request: &str, image: &str| {
        Aks::new(AksConfig {
            resource_group: "rg".into(),
            cluster: "c".into(),
            pool: "nvmepool".into(),
            vm_size: "Standard_L8s_v3".into(),
            node_count: 1,
            storage_class: "local-nvme".into(),
            request: request.into(),
            image: image.into(),
        })
    };
    let e = aks("0Gi", "nginx").unwrap_err().to_string();
    assert!(e.contains("must be at least 1 byte"), "{e}");
    for &bad in disktier_testkit::cli_cases::BAD_IMAGE_REFERENCES {
        let e = Gke::new(GkeConfig {
            image: bad.into(),
            ..gke_cfg()
        })
        .unwrap_err();
        assert!(
            matches!(e, RenderError::BadValue { flag: "image", .. }),
            "{bad}: {e}"
        );
        assert!(aks("500Gi", bad).is_err(), "{bad}");
    }
    assert!(aks("500Gi", "registry.example.com/app:1.2").is_ok());
}

#[test]
fn cache_scripts_refuse_a_partition() {
    // Found by QA: the script refuses partitions at run time; now render does.
    let e = Bcache::new(BcacheConfig {
        fast: FAST.into(),
        slow: format!("{SLOW}-part1"),
        mode: BcacheMode::Writeback,
        sequential_cutoff: 0,
    })
    .unwrap_err();
    assert!(
        matches!(e, RenderError::Partition { flag: "--slow", .. }),
        "{e}"
    );
}

#[test]
fn eks_refuses_a_url_that_is_not_one_and_a_cidr_with_host_bits() {
    let e = Eks::new(EksConfig {
        api_server_endpoint: "https://a\"b/$(id)".into(),
        ..eks_cfg(LocalStorageStrategy::Raid0)
    })
    .unwrap_err();
    assert!(
        matches!(
            e,
            RenderError::BadValue {
                flag: "api-server-endpoint",
                ..
            }
        ),
        "{e}"
    );
    let e = Eks::new(EksConfig {
        cidr: "10.100.0.1/16".into(),
        ..eks_cfg(LocalStorageStrategy::Raid0)
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("host bits set") && e.contains("10.100.0.0/16"),
        "{e}"
    );
}
