//! `disktier render gke` through the binary: its pods validated strictly against Kubernetes' own
//! schemas (`kubernetes-validate`, offline; the aks pods had it, gke's did not), and its names
//! held to GKE's rule (docs/sources.md [gke-names]).

use disktier_testkit::cli::{disktier, kubernetes_validate};

fn gke(cluster: &str, pool: &str) -> Vec<String> {
    [
        "render",
        "gke",
        "--cluster",
        cluster,
        "--pool",
        pool,
        "--machine-type",
        "n1-standard-8",
        "--local-ssds",
        "2",
        "--project",
        "my-project-1",
        "--zone",
        "asia-east1-a",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn gke_pods_validate_against_kubernetes_schemas() {
    let out = disktier()
        .args(["--format", "json", "-q"])
        .args(gke("before-localssd", "ssd-pool"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut pods = 0;
    for f in v["files"].as_array().unwrap() {
        let (name, text) = (f["name"].as_str().unwrap(), f["content"].as_str().unwrap());
        if !name.ends_with(".yaml") {
            continue;
        }
        pods += 1;
        for k in ["1.25", "1.33"] {
            if let Some((ok, said)) = kubernetes_validate(text, k) {
                assert!(ok, "{name} against Kubernetes {k}:\n{said}\n{text}");
            }
        }
    }
    assert_eq!(pods, 2);
}

#[test]
fn gke_names_over_40_characters_are_refused_with_nothing_on_stdout() {
    let forty = format!("a{}", "b".repeat(39));
    let forty_one = format!("a{}", "b".repeat(40));
    disktier().args(gke(&forty, &forty)).assert().success();
    for (cluster, pool, flag) in [
        (forty_one.as_str(), "ssd-pool", "--cluster"),
        ("c1", forty_one.as_str(), "--pool"),
    ] {
        let out = disktier()
            .args(["--format", "json"])
            .args(gke(cluster, pool))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("error: {flag} ")) && err.contains("at most 40"),
            "{err}"
        );
    }
}
