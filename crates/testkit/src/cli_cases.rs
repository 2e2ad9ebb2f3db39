//! Command lines that several of disktier's CLI tests run (render and plan inputs), written
//! once: the behaviour snapshots and the tests that assert on the same output share them.

/// `render eks` with the cluster facts it requires (after `render`).
pub const EKS: &[&str] = &[
    "eks",
    "--cluster",
    "prod",
    "--api-server-endpoint",
    "https://x.eks.amazonaws.com",
    "--certificate-authority",
    "QUJD",
    "--cidr",
    "10.100.0.0/16",
];

/// `render openshift` for /var/lib/containers with project quotas (after `render`).
pub const OPENSHIFT: &[&str] = &[
    "openshift",
    "--mount",
    "/var/lib/containers",
    "--options",
    "prjquota",
];

/// `render gke` for cluster c1 of my-project-1 in asia-east1-a (after `render`; the machine
/// type and local SSDs are the test's).
pub const GKE_C1: &[&str] = &[
    "gke",
    "--cluster",
    "c1",
    "--project",
    "my-project-1",
    "--zone",
    "asia-east1-a",
];

/// `render gke` for cluster prod's n2-standard-8 nodes with two local SSDs (after `render`; the
/// project and zone are the test's).
pub const GKE_PROD: &[&str] = &[
    "gke",
    "--cluster",
    "prod",
    "--machine-type",
    "n2-standard-8",
    "--local-ssds",
    "2",
];

/// A fast and a slow EBS volume by id, for the cache renderers (bcache, lvmcache).
pub const FAST: &str = "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0aaaaaaaaaaaaaaaa";
pub const SLOW: &str = "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0bbbbbbbbbbbbbbbb";

/// `render lvmcache` on two by-id stand-ins, a (fast) and b (slow) (after `render`; the flag
/// under test is the test's).
pub const LVMCACHE_A_B: &[&str] = &[
    "lvmcache",
    "--fast",
    "/dev/disk/by-id/a",
    "--slow",
    "/dev/disk/by-id/b",
];

/// Every platform `render` knows, each with the options it needs (after `render`), named.
pub fn render_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut openshift = OPENSHIFT.to_vec();
    openshift.extend([
        "--machineset",
        "--instance-type",
        "m6id.xlarge",
        "--cluster-id",
        "mycluster-x7k2p",
    ]);
    let mut gke = GKE_PROD.to_vec();
    gke.extend(["--project", "my-project", "--zone", "europe-west1-b"]);
    vec![
        ("openshift", openshift),
        ("gke", gke),
        ("eks", EKS.to_vec()),
        (
            "aks",
            vec!["aks", "--resource-group", "rg-prod", "--cluster", "prod"],
        ),
        ("systemd", vec!["systemd", "--mount", "/mnt/k8s-disks/0"]),
        (
            "cloud_init",
            vec!["cloud-init", "--mount", "/mnt/k8s-disks/0"],
        ),
        (
            "bcache",
            vec![
                "bcache",
                "--fast",
                FAST,
                "--slow",
                SLOW,
                "--sequential-cutoff",
                "0",
            ],
        ),
        ("lvmcache", vec!["lvmcache", "--fast", FAST, "--slow", SLOW]),
    ]
}

/// `price premium-ssd-v2` of 100 GiB at 10,000 IOPS in eastus (after `price`).
pub const PREMIUM_SSD_V2_EASTUS: &[&str] = &[
    "premium-ssd-v2",
    "--region",
    "eastus",
    "--size",
    "100GiB",
    "--iops",
    "10000",
];

/// The OpenShift instance-disk recipe's plan [recipe-ocp-instance-disk]: an m6i.xlarge in us-east-1 needing 200 GiB at 20,000 IOPS, instance store
/// allowed.
pub const PLAN_SEED_000: &[&str] = &[
    "plan",
    "--region",
    "us-east-1",
    "--instance",
    "m6i.xlarge",
    "--capacity",
    "200GiB",
    "--iops",
    "20000",
    "--allow-ephemeral",
];

/// `--image` values QA found reaching the Pod YAML before image references were checked
/// against the OCI distribution grammar: each must be refused, by the library and the CLI.
pub const BAD_IMAGE_REFERENCES: &[&str] = &[
    "nginx;id",
    "nginx$(id)",
    "NGINX",
    "nginx'",
    ":latest",
    "nginx@",
    "a/b:1@sha256:abc",
];
