//! `disktier render aks`: golden files of every rendered file, the manifests validated strictly
//! against Kubernetes' own schemas (`kubernetes-validate`, offline), the script checked with
//! `bash -n` (and shellcheck where installed), and bad input refused with the fix.

use disktier_testkit::cli::disktier;
use disktier_testkit::cli::kubernetes_validate;
use predicates::prelude::*;

const ARGS: &[&str] = &[
    "render",
    "aks",
    "--resource-group",
    "rg-prod",
    "--cluster",
    "aks-prod",
    "--vm-size",
    "Standard_L16as_v3",
    "--request",
    "2000Gi",
];

/// `render aks` of cluster c in resource group rg, for the refusals.
const AKS_RG_C: &[&str] = &["render", "aks", "--resource-group", "rg", "--cluster", "c"];

#[test]
fn aks_renders_golden_files_that_validate() {
    let dir = tempfile::tempdir().unwrap();
    disktier()
        .args(ARGS)
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "node-pool-nvmepool.sh",
            "pod-local-nvme.yaml",
            "storageclass-local-nvme.yaml"
        ]
    );
    for n in &names {
        let text = std::fs::read_to_string(dir.path().join(n)).unwrap();
        insta::assert_snapshot!(format!("render_aks__{n}"), text);
        if n.ends_with(".yaml") {
            for v in ["1.25", "1.33"] {
                if let Some((ok, out)) = kubernetes_validate(&text, v) {
                    assert!(ok, "{n} against Kubernetes {v}:\n{out}\n{text}");
                }
            }
        } else {
            let st = std::process::Command::new("bash")
                .args(["-n"])
                .arg(dir.path().join(n))
                .status()
                .unwrap();
            assert!(st.success(), "bash -n {n}");
            if let Ok(o) = std::process::Command::new("shellcheck")
                .arg(dir.path().join(n))
                .output()
            {
                assert!(
                    o.status.success(),
                    "shellcheck {n}:\n{}",
                    String::from_utf8_lossy(&o.stdout)
                );
            }
        }
    }
    let sc = std::fs::read_to_string(dir.path().join("storageclass-local-nvme.yaml")).unwrap();
    assert!(sc.contains("provisioner: localdisk.csi.acstor.io"), "{sc}");
    assert!(sc.contains("WaitForFirstConsumer"));
    let pod = std::fs::read_to_string(dir.path().join("pod-local-nvme.yaml")).unwrap();
    assert!(pod.contains("storageClassName: local-nvme") && pod.contains("storage: 2000Gi"));
    let sh = std::fs::read_to_string(dir.path().join("node-pool-nvmepool.sh")).unwrap();
    assert!(sh.contains("--node-vm-size Standard_L16as_v3") && sh.contains("2 x 1.92 TB"));
    assert!(sh.contains("--enable-azure-container-storage"));
}

#[test]
fn aks_refuses_sizes_without_nvme_and_requests_above_the_disks() {
    disktier()
        .args(AKS_RG_C)
        .args(["--vm-size", "Standard_D4s_v5"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("Lsv3 and Lasv3")
                .and(predicate::str::contains("Standard_L8s_v3")),
        );
    // An L8s_v3 has one 1.92 TB disk: 1,788 GiB.
    disktier()
        .args(AKS_RG_C)
        .args(["--request", "1800Gi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("larger size"));
    disktier()
        .args("render aks --resource-group rg;reboot --cluster c".split_whitespace())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("resource group"));
}
