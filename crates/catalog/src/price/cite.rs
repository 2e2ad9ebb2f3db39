//! How a quote cites its figures: each price's and rule's source and date, and the instance's
//! own for its instance store.

use crate::model::{Instance, InstancePrice};

/// The sources of an instance's quote: its price's, and, when it has an instance store, the
/// instance's own, which the store's size and IOPS come from (QA: `price instance i3.large`
/// showed "103,125 read / 35,000 write" with only the EC2 price page as its source; the IOPS
/// are from AWS's storage-optimized instance page, [aws-storage-optimized]).
pub(super) fn instance_sources(inst: &Instance, p: &InstancePrice, region: &str) -> Vec<String> {
    let mut out = vec![format!(
        "{} {}: {}",
        inst.name,
        region,
        cited(&p.source, &p.date)
    )];
    if inst.store.is_some() {
        out.push(format!(
            "{} instance store: {}",
            inst.name,
            cited(&inst.source, &inst.date)
        ));
    }
    out
}

/// A figure's source and date as a quote shows them: `SOURCE (DATE)`, or, for an overlay's
/// entry whose source or date is blank (which `catalog check` reports, but an overlay is
/// priced without it), words saying the figure is unsourced (QA: `--catalog` with `source =
/// ""` priced m6i.large with "source: m6i.large us-east-1:  (2026-01)", which reads as sourced).
pub fn cited(source: &str, date: &str) -> String {
    let source = match source.trim() {
        "" => "UNSOURCED: no source given (catalog check reports it)",
        s => s,
    };
    match date.trim() {
        "" => format!("{source} (no date)"),
        d => format!("{source} ({d})"),
    }
}
