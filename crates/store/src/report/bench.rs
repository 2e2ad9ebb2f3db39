//! One stored benchmark as the report shows it: its document (etcd's verdicts judged again
//! where they are missing) and the profiles the runs cover.

use crate::StoredRun;
use disktier_engine::{DirStats, RunDoc};
use serde_json::Value;

/// A benchmark run with where it measured ([`place`]) and its colour (one per place).
#[derive(Clone)]
pub(super) struct Bench<'a> {
    pub(super) run: &'a StoredRun,
    pub(super) doc: RunDoc,
    pub(super) place: String,
    pub(super) color: usize,
}

impl Bench<'_> {
    /// The built-in profile, or for a custom job "custom" with its pattern and block size
    /// ("custom randread 4 KiB"): runs of one name share a chart and a comparison table, and
    /// 4 KiB and 1 MiB reads are different jobs (QA on dt-s24: both were "custom randread", one
    /// chart, their IOPS bars side by side with nothing to tell them apart).
    pub(super) fn profile(&self) -> String {
        self.doc.profile.clone().unwrap_or_else(|| {
            let job = &self.doc.job;
            let rw = job.get("rw").and_then(Value::as_str).unwrap_or("job");
            match job.get("bs").and_then(Value::as_u64) {
                Some(bs) => format!("custom {rw} {}", disktier_units::Bytes(bs)),
                None => format!("custom {rw}"),
            }
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
        let name = b.profile();
        if !p.contains(&name) {
            p.push(name);
        }
    }
    p
}

/// The newest `n` runs of each profile (by when they measured, [`Bench::ran_at`], then when
/// they were saved), in their order in `benches`, and how many were left out.
pub(super) fn newest_of_each_profile<'a>(
    benches: &[Bench<'a>],
    n: usize,
) -> (Vec<Bench<'a>>, usize) {
    let names: Vec<String> = benches.iter().map(Bench::profile).collect();
    let mut by_profile: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, p) in names.iter().enumerate() {
        by_profile.entry(p.as_str()).or_default().push(i);
    }
    let mut keep = vec![false; benches.len()];
    for mut idx in by_profile.into_values() {
        idx.sort_by(|&a, &b| {
            let key = |i: usize| (benches[i].ran_at(), &benches[i].run.summary.created_at);
            key(b).cmp(&key(a))
        });
        for i in idx.into_iter().take(n) {
            keep[i] = true;
        }
    }
    let drawn: Vec<Bench<'a>> = benches
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(b, _)| b.clone())
        .collect();
    let left = benches.len() - drawn.len();
    (drawn, left)
}

/// Throughput jobs (1 MiB blocks in the GKE local-SSD recipe [recipe-gke-local-ssd]) read better in
/// MiB/s than in IOPS.
pub(super) fn big_blocks(doc: &RunDoc) -> bool {
    doc.job
        .get("bs")
        .and_then(Value::as_u64)
        .is_some_and(|bs| bs >= 128 * 1024)
}

#[cfg(test)]
mod tests {
    use crate::report::{render, ReportInput};
    use crate::NewRun;
    use disktier_testkit::cli::store_fixture as fixture;

    /// QA on dt-s24: fio results of 4 KiB and of 1 MiB random reads on one file were both
    /// "custom randread": one latency chart, one comparison table, and IOPS bars labelled alike.
    /// Each block size is a chart and table of its own, named with it.
    #[test]
    fn custom_jobs_of_different_block_sizes_are_told_apart() {
        let run = |id: &str, bs: u64| {
            let mut doc = fixture("read-iops");
            doc["profile"] = serde_json::Value::Null;
            doc["job"]["bs"] = bs.into();
            NewRun {
                kind: "import",
                group_id: None,
                doc: &doc,
            }
            .to_row(id.into(), "2023-09-14T10:00:00.000000Z".into())
        };
        let runs = [run("run-4k", 4096), run("run-1m", 1 << 20)];
        let page = render(&ReportInput::new(&runs, "now")).unwrap();
        for chart in [
            "latency:custom randread 4 KiB",
            "latency:custom randread 1 MiB",
        ] {
            assert!(page.contains(&format!("data-chart=\"{chart}\"")), "{chart}");
        }
        assert!(page.contains("<h3>custom randread 4 KiB</h3>"));
        assert!(page.contains("measured: custom randread 4 KiB"), "the card");
    }
}
