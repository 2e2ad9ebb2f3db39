//! Fuzz targets (bolero): a short run under `cargo test`, longer under `cargo bolero test`.
//! Corpus: tests/__fuzz__/<target>/corpus.

/// Any bytes as the etcd-perf image's output: parsing and building the result never panic, and a
/// parsed result's verdict follows disktier's threshold.
#[test]
fn fuzz_etcd_perf() {
    bolero::check!().for_each(|bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(e) = disktier_engine::etcdperf::parse(&text, "fuzz") {
            let d = e.to_run_doc("fuzz", String::new());
            assert_eq!(
                d.verdicts[0].pass,
                e.p99_ns < disktier_engine::verdict::ETCD_SYNC_P99_THRESHOLD_NS
            );
        }
    });
}
