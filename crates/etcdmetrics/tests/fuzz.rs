//! Fuzz targets (bolero): a short run under `cargo test`, longer under `cargo bolero test`.
//! Corpus: tests/__fuzz__/<target>/corpus.

/// Memory is capped as in the other crates' targets (docs/fuzzing.md, "Limits in the harness"):
/// an input that allocates past it aborts the run instead of taking the machine's memory.
#[global_allocator]
static ALLOC: disktier_testkit::fuzz::CappedAlloc =
    disktier_testkit::fuzz::CappedAlloc::new(1 << 30);

/// Any bytes as a /metrics body: parsing and judging never panic, and a parsed body never
/// holds more samples than the cap.
#[test]
fn fuzz_prom_exposition() {
    bolero::check!().for_each(|bytes: &[u8]| {
        let body = String::from_utf8_lossy(bytes);
        if let Ok(samples) = disktier_etcdmetrics::expo::parse(&body) {
            assert!(samples.len() <= disktier_etcdmetrics::expo::MAX_SAMPLES);
            if let Ok(s) = disktier_etcdmetrics::Scrape::from_samples("fuzz", &samples) {
                let _ = s.since("fuzz", &s);
                let j = disktier_etcdmetrics::judge(&[("fuzz".into(), s)], None);
                assert_eq!(j.members.len(), 1);
            }
        }
    });
}
