//! Judge: the verdicts a result document carries. The etcd verdict (fdatasync p99 against a
//! threshold, with its 95 % confidence interval on the first verdict, and etcd's IOPS guidance)
//! is the one every measuring command gives.

use disktier_engine::verdict::{self, EtcdCriteria, EtcdVerdict, VerdictError};
use disktier_engine::RunDoc;

/// A verdict on one run, as the result document carries it (`verdicts[]`). Named apart from
/// interfere's verdict on a scenario (`disktier_interfere::Verdict`), which judges a different
/// thing.
pub use disktier_engine::Verdict as RunVerdict;

/// Judges `doc` as an etcd disk and writes the verdicts into it; returns the whole verdict
/// (pass, the lines a user reads, the interval).
pub fn etcd(
    doc: &mut RunDoc,
    sync_hist: Option<&hdrhistogram::Histogram<u64>>,
    criteria: EtcdCriteria,
) -> Result<EtcdVerdict, VerdictError> {
    let v = verdict::etcd(doc, sync_hist, criteria)?;
    doc.verdicts = v.verdicts.clone();
    Ok(v)
}
