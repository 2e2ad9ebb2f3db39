//! Which run of a target is its newest: the one that measured last, not the one saved last;
//! and which runs the charts draw: each profile's newest.

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

/// QA: `report` over 10,000 stored runs wrote a 196 MB page (a latency curve, bars, a
/// comparison column and a per-second chart for every run) in 838 MB of memory. The charts and
/// comparisons draw each profile's newest 32 runs, by when they measured, and say how many are
/// left out; every run still counts in the cards and is listed under Runs.
#[test]
fn the_charts_draw_each_profiles_newest_runs() {
    let runs: Vec<_> = (0..40)
        .map(|i| {
            let mut doc = etcd_with_p99(1_000_000 + i * 1000);
            // Saved in the opposite order to when they measured: the newest measured is run-39.
            doc["started_at"] = format!("2026-10-01T10:{:02}:00.000Z", i).into();
            stored_at(
                &format!("run-{i:02}"),
                "check",
                doc,
                &format!("2026-11-28T23:{:02}:00.000000Z", 59 - i),
            )
        })
        .collect();
    let page = page_of(&runs);
    assert_eq!(
        page.matches("8 older runs of their profiles are not drawn here")
            .count(),
        4,
        "one note per chart section"
    );
    // The oldest measured are listed (one row under Runs) and drawn nowhere.
    for old in ["run-00", "run-07"] {
        assert_eq!(page.matches(old).count(), 1, "{old}");
    }
    for new in ["run-08", "run-39"] {
        assert!(page.matches(new).count() > 1, "{new}");
    }
    assert!(card(&page, "/mnt/scratch").contains("newest of 40"));
}

/// A run read for the report keeps its listing columns, not its JSON ([`ReadRun`]; QA: 10,000
/// JSON trees held 358 MB). A run not drawn anywhere (older than its profile's newest 32) is
/// still listed under Runs with every column, and its fleet tag still gives it its fleet row.
#[test]
fn a_run_read_without_its_json_is_listed_under_runs_as_stored() {
    use disktier_store::report::{render_read, ReadRun};
    let runs: Vec<_> = (0..34)
        .map(|i| {
            let mut doc = etcd_with_p99(1_000_000 + i * 1000);
            doc["started_at"] = format!("2026-10-01T10:{i:02}:00.000Z").into();
            doc["host"]["hostname"] = "node-é\u{202e}<b>".into();
            if i == 0 {
                doc["fleet"] = serde_json::json!({"fleet_run_id": "f1", "node": "node-a"});
            }
            stored_at(
                &format!("run-{i:02}"),
                "check",
                doc,
                &format!("2026-11-28T23:{i:02}:00.000000Z"),
            )
        })
        .collect();
    let page = page_of(&runs);
    let read = runs.iter().cloned().map(ReadRun::read).collect();
    assert_eq!(render_read(read, &[], None, "now").unwrap(), page);
    let row = page
        .lines()
        .find(|l| l.starts_with("<tr><td class=\"mono\">run-00</td>"))
        .expect("run-00 under Runs");
    let s = &runs[0].summary;
    assert_eq!(
        row,
        format!(
            "<tr><td class=\"mono\">run-00</td><td>2026-11-28 23:00:00</td><td>check</td><td>etcd{}</td><td class=\"mono\">/mnt/scratch</td><td>node-é\\u{{202e}}&lt;b&gt;</td><td>{}</td></tr>",
            if s.quick { " (quick)" } else { "" },
            s.engine.as_deref().unwrap()
        )
    );
    assert!(
        page.contains("<section id=\"fleet\">"),
        "run-00's fleet row"
    );
}

/// QA: 2,000 stored interference runs made a 36 MB page, a chart and a table each. The section
/// draws the newest 32 (by when they were saved) and says how many are left out.
#[test]
fn the_interference_section_draws_the_newest_runs() {
    let runs: Vec<_> = (0..40)
        .map(|i| {
            stored_at(
                &format!("inter-{i:02}"),
                "interfere",
                super::fixture("interfere"),
                &format!("2026-11-28T23:{i:02}:00.000000Z"),
            )
        })
        .collect();
    let page = page_of(&runs);
    assert!(
        page.contains("8 older interference runs are not drawn here"),
        "no note"
    );
    for old in ["inter-00", "inter-07"] {
        assert_eq!(page.matches(old).count(), 1, "{old}");
    }
    assert!(page.matches("inter-39").count() > 1);
}
