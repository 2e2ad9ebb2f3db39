//! Which run of a target is its newest: the one that measured last, not the one saved last.

use super::{card, etcd_with_p99, page_of, stored_at};

// QA on dt-s24: a fio result of 2025 (sync p99 1 ms, etcd ready) imported after one measured
// today (16 ms, not ready) made the card say "✓ etcd ready · p99 1.00 ms ... newest of 2":
// the newest was the one saved last. It is the one whose document started last.
#[test]
fn an_old_result_imported_last_is_not_the_newest() {
    let mut today = etcd_with_p99(16_060_000);
    today["started_at"] = "2026-11-28T22:55:37.926Z".into();
    let mut last_year = etcd_with_p99(1_000_000);
    last_year["started_at"] = "2025-11-28T22:55:37.926Z".into();
    let runs = vec![
        stored_at("run-today", "import", today, "2026-11-28T23:00:00.000000Z"),
        stored_at(
            "run-2025",
            "import",
            last_year,
            "2026-11-28T23:00:01.000000Z",
        ),
    ];
    let page = page_of(&runs);
    let c = card(&page, "/mnt/scratch");
    assert!(
        c.contains("<dt>sync p99</dt><dd>16.06 ms <span class=\"from\" title=\"run run-today\">etcd, newest of 2</span></dd>"),
        "{c}"
    );
    assert!(c.contains("etcd not ready"), "{c}");
    assert!(!c.contains("1.00 ms"), "{c}");
}
