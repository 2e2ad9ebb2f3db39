//! Fuzz targets (bolero) for the engine's parsers of outside input: fio's JSON (`import fio`), fio's text report (`import fio-text`)
//! and the job model (fio's options as a JSON job, validated, turned into a fio command line and
//! an I/O plan). Each runs over its corpus in `tests/__fuzz__/<target>/corpus` and briefly on
//! random inputs in `cargo test`; `bench/fuzz.sh TARGET MINUTES` runs one long.

use disktier_engine::fio::{self, DocContext};
use disktier_engine::plan::IoPlan;
use disktier_engine::Job;
use disktier_testkit::fuzz::{timed, CappedAlloc, BRIEF, MAX_INPUT};
use disktier_testkit::fuzz_target;

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(1 << 30);

/// Any text: a result document or an error, never a panic; a result has no NaN where the
/// schema wants numbers to compare.
#[test]
fn fuzz_fio_json() {
    fuzz_target!("fuzz_fio_json", |input| {
        let text = String::from_utf8_lossy(input);
        for index in [0, 1] {
            if let Ok(m) = fio::import_text(&text, "fuzz", index, DocContext::default()) {
                serde_json::to_string(&m.doc).unwrap();
            }
        }
    });
}

/// Any text as fio's text report (`import fio-text`, job 0 and 1, and `--jobs`: every job and
/// the run status groups): a result document that serialises, or an error; counts and rates
/// finite, percentiles within the min and max.
#[test]
fn fuzz_fio_text() {
    fuzz_target!("fuzz_fio_text", |input| {
        let text = String::from_utf8_lossy(input);
        for index in [0, 1] {
            let ctx = fio::text::TextContext::default();
            if let Ok(m) = fio::text::import_text(&text, "fuzz", index, ctx) {
                serde_json::to_string(&m.doc).unwrap();
                for d in [
                    &m.doc.results.read,
                    &m.doc.results.write,
                    &m.doc.results.sync,
                ]
                .into_iter()
                .flatten()
                {
                    assert!(d.iops.is_finite() && d.bw_bytes.is_finite(), "{d:?}");
                    if let (Some(lo), Some(hi)) = (d.lat_ns.min_ns(), d.lat_ns.max_ns()) {
                        assert!(d.lat_ns.percentiles.values().all(|v| (lo..=hi).contains(v)));
                    }
                }
            }
        }
        // --jobs: every job report and the run status groups, each job's document whole.
        let ctx = fio::text::TextContext::default();
        if let Ok(r) = fio::text::parse(&text, "fuzz") {
            assert!(r.jobs.len() <= fio::text::MAX_JOBS && r.groups.len() <= fio::text::MAX_JOBS);
            if let Ok(t) = fio::text::jobs(&r, "fuzz", &ctx) {
                assert_eq!(t.jobs.len(), r.jobs.len());
                for j in &t.jobs {
                    serde_json::to_string(&j.measured.doc).unwrap();
                    let r = &j.measured.doc.results;
                    for d in [&r.read, &r.write].into_iter().flatten() {
                        assert!(d.iops.is_finite() && d.bw_bytes.is_finite(), "{d:?}");
                    }
                }
            }
        }
    });
}

/// A job as JSON (every option fio's name): validated; a valid one gives a fio command whose
/// arguments hold no newline or NUL, a finite time limit, and a plan whose first I/Os stay
/// inside the region.
#[test]
fn fuzz_job_options() {
    fuzz_target!("fuzz_job_options", |input| {
        let Ok(job) = serde_json::from_slice::<Job>(input) else {
            return;
        };
        if job.validate().is_err() {
            return;
        }
        let cmd = fio::command(&job, false);
        for a in &cmd.args {
            assert!(!a.contains('\0'), "{a:?}");
        }
        let _ = fio::timeout_for(&job);
        let _ = job.to_json();
        let len = job.size.unwrap_or(1 << 20);
        let mut plan = IoPlan::new(&job, 0, job.offset, len);
        for _ in 0..64 {
            let Some((_, off)) = plan.next_io() else {
                break;
            };
            assert!(off >= job.offset, "{off} before {}", job.offset);
            assert!(
                off.saturating_add(job.bs) <= job.offset.saturating_add(len),
                "{off} past the region"
            );
        }
    });
}

/// Regression (fuzz_job_options): a runtime of 1e308 seconds panicked in
/// `Duration::from_secs_f64`; it is an error now, as NaN-like values are.
#[test]
fn a_huge_numeric_duration_is_an_error_not_a_panic() {
    for text in [
        r#"{"runtime":1e308}"#,
        r#"{"ramp_time":1.8446744073709552e19}"#,
        r#"{"runtime":-1}"#,
    ] {
        assert!(serde_json::from_str::<Job>(text).is_err(), "{text}");
    }
    assert!(serde_json::from_str::<Job>(r#"{"runtime":1.5}"#).is_ok());
}

/// Regression (fuzz_fio_json): a fio JSON whose `runtime` option is "1e400" (or "inf") panicked
/// in `Duration::from_secs_f64` while the job was rebuilt from fio's options.
#[test]
fn a_huge_runtime_in_fio_options_is_no_panic() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/__fuzz__/fuzz_fio_json/corpus/crash-runtime-1e400.json"
    ))
    .unwrap();
    let m = fio::import_text(&text, "crash", 0, DocContext::default()).unwrap();
    assert_eq!(m.doc.engine, "fio");
}
/// The job-file parser never panics, and what it accepts keeps its bounds and structure.
#[test]
fn fuzz_jobfile() {
    bolero::check!().for_each(|bytes: &[u8]| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Ok(f) = disktier_engine::jobfile::parse(text, "fuzz.fio") {
            assert!(!f.jobs.is_empty() && f.jobs.len() < disktier_engine::jobfile::MAX_SECTIONS);
            let sets = f.run_sets();
            let groups = f.groups();
            assert!(groups.len() >= sets.len());
            assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), f.jobs.len());
            for j in &f.jobs {
                assert!(
                    j.options.len()
                        <= disktier_engine::jobfile::MAX_OPTIONS
                            * disktier_engine::jobfile::MAX_SECTIONS
                );
                for o in &j.options {
                    assert!(
                        disktier_engine::jobfile::JOB_OPTIONS.contains(&o.key.as_str()),
                        "{}",
                        o.key
                    );
                }
            }
        }
    });
}

/// Any bytes as the etcd-perf image's output: parsing and building the result never panic, and a
/// parsed result's verdict follows disktier's threshold.
#[test]
fn fuzz_etcd_perf() {
    bolero::check!()
        .with_test_time(BRIEF)
        .with_max_len(MAX_INPUT)
        .for_each(|bytes: &[u8]| {
            timed(bytes, || {
                let text = String::from_utf8_lossy(bytes);
                if let Ok(e) = disktier_engine::etcdperf::parse(&text, "fuzz") {
                    let d = e.to_run_doc("fuzz", String::new());
                    assert_eq!(
                        d.verdicts[0].pass,
                        e.p99_ns < disktier_engine::verdict::ETCD_SYNC_P99_THRESHOLD_NS
                    );
                }
            })
        });
}

/// Any bytes as fio's per-second logs of a run (`<prefix>_iops.1.log`, `_bw.1.log` and
/// `_clat_hist.1.log`, the input split at its first two NUL bytes; job 2 gets the same files),
/// which a bench with `--engine fio` reads into its series: never a panic (overflow checks on);
/// the seconds are in order, each once, and every rate is finite and not negative, so the series
/// serialises as numbers and reads back.
#[test]
fn fuzz_fio_logs() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("fuzz").display().to_string();
    fuzz_target!("fuzz_fio_logs", |input| {
        let mut parts = input.splitn(3, |b| *b == 0);
        for kind in ["iops", "bw", "clat_hist"] {
            let part = parts.next().unwrap_or_default();
            for job in [1, 2] {
                std::fs::write(format!("{prefix}_{kind}.{job}.log"), part).unwrap();
            }
        }
        let series = fio::read_series(&prefix, 2);
        for w in series.windows(2) {
            assert!(w[0].t_s < w[1].t_s, "{:?} then {:?}", w[0].t_s, w[1].t_s);
        }
        for s in &series {
            for v in [
                s.t_s,
                s.read_iops,
                s.write_iops,
                s.read_bw_bytes,
                s.write_bw_bytes,
            ] {
                assert!(v.is_finite() && v >= 0.0, "{s:?}");
            }
            if let Some(p) = s.p99_ns {
                assert!(p <= fio::plat_idx_to_val(fio::PLAT_NR - 1), "{s:?}");
            }
        }
        let text = serde_json::to_string(&series).unwrap();
        let back: Vec<disktier_engine::result::Sample> = serde_json::from_str(&text).unwrap();
        assert_eq!(back.len(), series.len());
    });
}
