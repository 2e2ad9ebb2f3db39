//! One stored benchmark as the report shows it: its document (etcd's verdicts judged again
//! where they are missing) and the profiles the runs cover.

use crate::StoredRun;
use disktier_engine::{DirStats, RunDoc};
use serde_json::Value;

/// A benchmark run with where it measured ([`place`]) and its colour (one per place).
pub(super) struct Bench<'a> {
    pub(super) run: &'a StoredRun,
    pub(super) doc: RunDoc,
    pub(super) place: String,
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
    /// When the run measured, to the second (UTC): its document's `started_at`, which for an
    /// import is when fio or etcd-perf ran, not when it was imported; the time it was saved for
    /// a document without one. A year-old fio result imported today is older than this
    /// morning's `check` (QA on dt-s24: the card showed it as the newest run).
    pub(super) fn ran_at(&self) -> &str {
        let saved = &self.run.summary.created_at;
        let started = self.doc.started_at.get(..19).unwrap_or("");
        // RFC 3339 as disktier writes it, "2026-11-28T22:55:37": anything else is no time.
        let looks_like_time = started.len() == 19
            && started.bytes().enumerate().all(|(i, c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                _ => c.is_ascii_digit(),
            });
        if looks_like_time {
            started
        } else {
            saved.get(..19).unwrap_or(saved)
        }
    }
    /// The target and profile, and "interrupted" when the figures are partial.
    pub(super) fn label(&self) -> String {
        format!(
            "{} · {}{}",
            target_name(&self.place),
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

/// Where a run measured, as the report names it: its target's path, and, when the report has
/// runs of that path from more than one host, the host before it (`node-a:/var/lib/etcd`).
/// Hosts saving into one shared store measure the same path on different disks (QA: node-a's
/// failing /var/lib/etcd and node-b's passing one made one card, "etcd ready" with node-b's
/// figures, node-a's run only "1 earlier run of this target"). An import knows no host: it is
/// its path alone.
pub(super) fn place(doc: &RunDoc, docs: &[&RunDoc]) -> String {
    let host = &doc.host.hostname;
    let path = &doc.target.path;
    let shared = docs
        .iter()
        .any(|d| d.target.path == *path && !d.host.hostname.is_empty() && d.host.hostname != *host);
    if shared && !host.is_empty() {
        format!("{host}:{path}")
    } else {
        path.clone()
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
