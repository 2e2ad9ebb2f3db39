//! One stored benchmark as the report shows it: its document (etcd's verdicts judged again
//! where they are missing) and the profiles the runs cover.

use crate::StoredRun;
use disktier_engine::{DirStats, RunDoc};
use serde_json::Value;

/// A benchmark run with its colour (one per target).
pub(super) struct Bench<'a> {
    pub(super) run: &'a StoredRun,
    pub(super) doc: RunDoc,
    pub(super) color: usize,
}

impl Bench<'_> {
    pub(super) fn profile(&self) -> String {
        self.doc.profile.clone().unwrap_or_else(|| {
            format!(
                "custom {}",
                self.doc
                    .job
                    .get("rw")
                    .and_then(Value::as_str)
                    .unwrap_or("job")
            )
        })
    }
    /// The target and profile, and "interrupted" when the figures are partial.
    pub(super) fn label(&self) -> String {
        format!(
            "{} · {}{}",
            target_name(&self.doc.target.path),
            self.profile(),
            if self.doc.interrupted {
                " (interrupted: partial figures)"
            } else {
                ""
            }
        )
    }
    pub(super) fn dirs(&self) -> Vec<(&'static str, &DirStats)> {
        let r = &self.doc.results;
        [("read", &r.read), ("write", &r.write), ("sync", &r.sync)]
            .into_iter()
            .filter_map(|(n, d)| {
                d.as_ref()
                    .filter(|d| d.ios > 0 || !d.lat_ns.percentiles.is_empty())
                    .map(|d| (n, d))
            })
            .collect()
    }
}

/// A target as the report shows it: an import that names no path (fio's text report, a fio
/// job without `filename`) is "target unknown", as `show` and `compare` say, rather than a
/// blank card title, a bare "read" in a legend or an empty column head (QA).
pub(super) fn target_name(path: &str) -> &str {
    if path.is_empty() {
        "target unknown"
    } else {
        path
    }
}

/// `bench --profile etcd` and imported etcd runs carry no verdict; the report judges them the
/// way `check etcd` does (the engine's etcd verdict: fdatasync p99 under 10 ms, etcd docs).
pub(super) fn judge_etcd(doc: &mut RunDoc) {
    let etcd_profile = matches!(doc.profile.as_deref(), Some("etcd" | "etcd-openshift"));
    if etcd_profile && doc.verdicts.is_empty() {
        if let Ok(v) = disktier_engine::verdict::etcd(doc, None, Default::default()) {
            doc.verdicts = v.verdicts;
        }
    }
}

/// Profiles in order of first appearance.
pub(super) fn profiles(benches: &[Bench<'_>]) -> Vec<String> {
    let mut p: Vec<String> = Vec::new();
    for b in benches {
        if !p.contains(&b.profile()) {
            p.push(b.profile());
        }
    }
    p
}

/// Throughput jobs (1 MiB blocks in the GKE local-SSD recipe [recipe-gke-local-ssd]) read better in
/// MiB/s than in IOPS.
pub(super) fn big_blocks(doc: &RunDoc) -> bool {
    doc.job
        .get("bs")
        .and_then(Value::as_u64)
        .is_some_and(|bs| bs >= 128 * 1024)
}
