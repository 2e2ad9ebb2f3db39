//! Fuzz targets for the engine's parsers of untrusted text. Under `cargo test` each runs briefly
//! on its corpus (tests/__fuzz__/NAME/corpus) and random inputs; `cargo bolero test NAME` runs
//! it for real.

use disktier_engine::jobfile;

/// The job-file parser never panics, and what it accepts keeps its bounds and structure.
#[test]
fn fuzz_jobfile() {
    bolero::check!().for_each(|bytes: &[u8]| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Ok(f) = jobfile::parse(text, "fuzz.fio") {
            assert!(!f.jobs.is_empty() && f.jobs.len() < jobfile::MAX_SECTIONS);
            let sets = f.run_sets();
            let groups = f.groups();
            assert!(groups.len() >= sets.len());
            assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), f.jobs.len());
            for j in &f.jobs {
                assert!(j.options.len() <= jobfile::MAX_OPTIONS * jobfile::MAX_SECTIONS);
                for o in &j.options {
                    assert!(jobfile::JOB_OPTIONS.contains(&o.key.as_str()), "{}", o.key);
                }
            }
        }
    });
}
