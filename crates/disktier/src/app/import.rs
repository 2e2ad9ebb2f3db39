//! Import: results other tools produced (the etcd-perf image's text, one job of fio's JSON) as result documents, judged as a measured run is.

use super::judge;
use disktier_engine::etcdperf;
use disktier_engine::fio::FioMeasured;
use disktier_engine::verdict;
use disktier_engine::RunDoc;
use std::path::Path;

/// The etcd-perf image's output saved in `path` as a result document. The output holds no
/// date: the file's modification time stands for when it ran.
pub fn etcd_perf(path: &Path, named: etcdperf::Named) -> anyhow::Result<RunDoc> {
    let e = etcdperf::parse_file(path)?;
    let started_at = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| {
            time::OffsetDateTime::from(t)
                .format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    Ok(e.to_named_run_doc(&path.display().to_string(), started_at, named))
}

/// One job of fio's JSON, as the engine imported it, as disktier's result: a warning on what
/// the import cannot know, and the etcd verdict when the job synced. Returns the document and
/// the verdict's lines.
pub fn fio_run(m: FioMeasured) -> (RunDoc, Vec<String>) {
    let mut doc = m.doc;
    doc.warnings.push(if m.sync_hist.is_some() {
        "imported from fio's JSON: host facts are unknown".to_string()
    } else {
        "imported from fio's JSON: host facts are unknown; without json+ bins, latencies between fio's listed percentiles are interpolated".to_string()
    });
    let mut extra = Vec::new();
    if doc.results.sync.is_some() {
        if let Ok(v) = judge::etcd(
            &mut doc,
            m.sync_hist.as_ref(),
            verdict::EtcdCriteria::default(),
        ) {
            extra = v.lines;
        }
    }
    (doc, extra)
}
