//! Which GCP Compute Engine SKU descriptions price which catalog volume type and dimension
//! (docs/catalog.md, `catalog refresh gcp`): a table kept apart from the streaming code.

/// What a Compute Engine SKU description prices, by its words (the SKU list names products in
/// English: "Balanced PD Capacity in Taiwan", "SSD backed Local Storage in Belgium").
pub(super) fn gcp_kind(desc: &str) -> Option<(&'static str, &'static str)> {
    let d = desc.to_ascii_lowercase();
    // Regional (replicated), Spot/preemptible, committed and snapshot SKUs price something else.
    if [
        "regional",
        "spot",
        "preemptible",
        "commitment",
        "snapshot",
        "image",
    ]
    .iter()
    .any(|w| d.contains(w))
    {
        return None;
    }
    let table: &[(&str, &str, &str)] = &[
        (
            "hyperdisk balanced capacity",
            "hyperdisk-balanced",
            "storage",
        ),
        ("hyperdisk balanced iops", "hyperdisk-balanced", "iops"),
        (
            "hyperdisk balanced throughput",
            "hyperdisk-balanced",
            "throughput",
        ),
        ("hyperdisk extreme capacity", "hyperdisk-extreme", "storage"),
        ("hyperdisk extreme iops", "hyperdisk-extreme", "iops"),
        ("extreme pd capacity", "pd-extreme", "storage"),
        ("extreme pd iops", "pd-extreme", "iops"),
        ("balanced pd capacity", "pd-balanced", "storage"),
        ("ssd backed pd capacity", "pd-ssd", "storage"),
        ("storage pd capacity", "pd-standard", "storage"),
        ("ssd backed local storage", "local-ssd", "storage"),
    ];
    table
        .iter()
        .find(|(words, _, _)| d.starts_with(words))
        .map(|(_, t, what)| (*t, *what))
}
