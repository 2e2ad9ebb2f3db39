use super::*;
use disktier_engine::{LatStats, Results, TargetInfo};

fn doc() -> RunDoc {
    let mut lat = LatStats {
        mean: 2_000_000.0,
        max: 9_000_000,
        ..LatStats::default()
    };
    for (k, v) in [("50", 1_500_000), ("99", 4_000_000), ("99.9", 6_000_000)] {
        lat.percentiles.insert(k.into(), v);
    }
    RunDoc {
        schema_version: crate::app::SCHEMA_VERSION,
        engine: "disktier".into(),
        profile: Some("etcd".into()),
        quick: true,
        job: serde_json::json!({}),
        target: TargetInfo {
            path: "/var/lib/etcd".into(),
            kind: "directory".into(),
            device: Some("nvme1n1".into()),
            ..TargetInfo::default()
        },
        host: disktier_engine::HostInfo {
            hostname: "master-0".into(),
            ..Default::default()
        },
        started_at: "2026-11-24T12:00:00Z".into(),
        duration_s: 2.5,
        interrupted: false,
        results: Results {
            sync: Some(DirStats {
                ios: 1000,
                iops: 400.0,
                lat_ns: lat,
                ..DirStats::default()
            }),
            ..Results::default()
        },
        series: vec![],
        verdicts: vec![
            RunVerdict {
                name: "etcd".into(),
                metric: "sync.p99".into(),
                value: 4_000_000.0,
                threshold: 10_000_000.0,
                pass: true,
                message: String::new(),
                ci95: None,
                inconclusive: false,
            },
            RunVerdict {
                name: "etcd-iops-500".into(),
                metric: "sync.iops".into(),
                value: 400.0,
                threshold: 500.0,
                pass: false,
                message: String::new(),
                ci95: None,
                inconclusive: true,
            },
        ],
        warnings: vec![],
    }
}

#[test]
fn run_figures_in_base_units_with_labels() {
    let m = RunMetrics::from_doc("check", "node-a", &doc());
    assert_eq!(m.labels.device, "nvme1n1");
    assert_eq!(m.finished_unix_seconds, 1_795_521_600.0 + 2.5);
    let sync = &m.directions[0];
    assert_eq!(sync.direction, "sync");
    assert_eq!(sync.bytes_per_second, None);
    assert_eq!(
        sync.latency_quantiles,
        vec![(0.5, 0.0015), (0.99, 0.004), (0.999, 0.006)]
    );
    assert!((sync.latency_sum_seconds - 2.0).abs() < 1e-9);
    assert_eq!(m.verdicts[0].unit, VerdictUnit::Seconds);
    assert_eq!(m.verdicts[0].threshold, 0.01);
    assert_eq!(m.verdicts[1].unit, VerdictUnit::OperationsPerSecond);
    assert_eq!(m.verdicts[1].threshold, 500.0);
}

#[test]
fn exposition_has_help_type_quantiles_and_verdicts() {
    let text = encode(&[RunMetrics::from_doc("check", "node-a", &doc())]).unwrap();
    let labels =
        r#"command="check",node="node-a",path="/var/lib/etcd",device="nvme1n1",profile="etcd""#;
    for line in [
        "# TYPE disktier_io_latency_seconds summary".to_string(),
        format!(
            r#"disktier_io_latency_seconds{{{labels},direction="sync",quantile="0.99"}} 0.004"#
        ),
        format!(r#"disktier_io_latency_seconds_count{{{labels},direction="sync"}} 1000"#),
        format!(r#"disktier_verdict_pass{{{labels},verdict="etcd"}} 1"#),
        format!(r#"disktier_verdict_pass{{{labels},verdict="etcd-iops-500"}} 0"#),
        format!(r#"disktier_verdict_inconclusive{{{labels},verdict="etcd"}} 0"#),
        format!(r#"disktier_verdict_inconclusive{{{labels},verdict="etcd-iops-500"}} 1"#),
        format!(r#"disktier_verdict_threshold_seconds{{{labels},verdict="etcd"}} 0.01"#),
        format!(r#"disktier_last_run_timestamp_seconds{{{labels}}} 1795521602.5"#),
    ] {
        assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
    }
    // Every family has HELP and TYPE; no bytes family for a run that only synced.
    let families: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    for f in &families {
        assert!(text.contains(&format!("# HELP {f} ")), "{f}");
        assert!(f.starts_with("disktier_"), "{f}");
    }
    assert!(!families.contains(&"disktier_io_bytes_per_second"));
}

#[test]
fn label_values_are_escaped() {
    let mut d = doc();
    d.target.path = "/mnt/a \"b\"\\c\nd".into();
    let text = encode(&[RunMetrics::from_doc("bench", "n", &d)]).unwrap();
    assert!(text.contains(r#"path="/mnt/a \"b\"\\c\nd""#), "{text}");
}

#[test]
fn textfile_dir_must_be_a_writable_directory() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("f");
    std::fs::write(&file, "").unwrap();
    let e = TextfileDir::check(&file).unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
    let e = TextfileDir::check(&t.path().join("missing"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
    let d = TextfileDir::check(t.path()).unwrap();
    let p = d.write("check", "x 1\n").unwrap().path;
    assert_eq!(p, t.path().join("disktier_check.prom"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 1\n");
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "temporary or probe files left: {left:?}");
}
