//! What a report holds per run: `disktier report --last 10000` held every selected run's JSON
//! tree at once (QA: 358 MB for 10,000 runs of 2 KB documents, 60 % of it `serde_json::Value`s).
//! A run read for the report ([`ReadRun`]) keeps its typed document and listing columns, not its
//! JSON. Alone in its test binary: the heap is measured for the whole process.

use disktier_store::report::ReadRun;
use disktier_store::{NewRun, StoredRun};
use disktier_testkit::cli::store_fixture as fixture;

#[global_allocator]
static ALLOC: disktier_testkit::fuzz::CappedAlloc =
    disktier_testkit::fuzz::CappedAlloc::new(1 << 30);

/// The bytes `make` leaves live on the heap (what the value it returns holds), and the value.
fn held<T>(make: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOC.live();
    let v = make();
    (ALLOC.live().saturating_sub(before), v)
}

#[test]
fn a_run_read_for_the_report_holds_a_fraction_of_its_json_tree() {
    const N: usize = 200;
    let run = |i: usize, name: &str, kind: &str| -> StoredRun {
        NewRun {
            kind,
            group_id: None,
            doc: &fixture(name),
        }
        .to_row(
            format!("run-{name}-{i:03}"),
            "2026-01-01T00:00:00.000000Z".into(),
        )
    };
    for (name, kind) in [
        ("quick-etcd", "check"),
        ("read-iops", "bench"),
        ("jobfile-import", "import"),
        ("interfere", "interfere"),
    ] {
        let (json, stored) = held(|| (0..N).map(|i| run(i, name, kind)).collect::<Vec<_>>());
        let (typed, read) = held(|| {
            stored
                .iter()
                .cloned()
                .map(ReadRun::read)
                .collect::<Vec<_>>()
        });
        assert_eq!(read.len(), N);
        assert_eq!(read[7].summary().id, format!("run-{name}-007"));
        // Measured: 26 % (quick-etcd), 24 % (read-iops), 46 % (jobfile-import) and 33 %
        // (interfere) of the JSON trees; keeping the JSON as well held 124 % for quick-etcd.
        assert!(
            typed * 2 < json,
            "{name}: {N} read runs hold {typed} bytes, their JSON trees {json}"
        );
    }
}
