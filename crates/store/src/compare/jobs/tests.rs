//! Unit tests of `jobs.rs`.

use super::super::{compare, Compared};
use disktier_engine::RunDoc;

fn fixture(name: &str) -> RunDoc {
    let p = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// QA: two imports of fio's JSON of one random-read job, with and without O_DIRECT (and two of a
/// randrw job, with an fsync after every write and 70 % reads against none and 30 %), were
/// compared as like-for-like: "read p99 171.0 us vs 113.2 us: 1.5x higher", with no word that
/// the jobs differed. Every option that differs is named, in the notes and in each run's
/// `job_differences`, and the ratios are left blank unless forced.
#[test]
fn direct_syncs_read_mix_and_engine_make_different_jobs() {
    let custom = |edit: &dyn Fn(&mut RunDoc)| {
        let mut doc = fixture("read-iops");
        doc.profile = None;
        edit(&mut doc);
        doc
    };
    let a = custom(&|d| d.job["direct"] = false.into());
    let b = custom(&|d| d.job["direct"] = true.into());
    let c = custom(&|d| {
        d.job["direct"] = false.into();
        d.job["ioengine"] = "psync".into();
    });
    let docs = [a.clone(), b, c, a];
    let ids = ["a", "b", "c", "d"];
    let runs: Vec<Compared> = docs
        .iter()
        .zip(ids)
        .map(|(doc, id)| Compared {
            id,
            kind: "import",
            doc,
        })
        .collect();
    let cmp = compare(&runs, false).unwrap();
    assert!(
        cmp.notes.contains(&"the runs ran different jobs (A vs B: direct 0 against 1; A vs C: ioengine io_uring against psync), so the comparison is not like-for-like and their ratios would measure the jobs, not the disks: their figures are not compared (A vs B, A vs C left blank; `disktier compare --force` compares them anyway)".to_string()),
        "{:?}",
        cmp.notes
    );
    for row in &cmp.rows {
        assert!(
            row.ratios[0].is_none() && row.ratios[1].is_none(),
            "{row:?}"
        );
        assert!(row.ratios[2].is_some(), "D ran A's job: {row:?}");
    }
    let json = serde_json::to_value(&cmp).unwrap();
    assert_eq!(
        json["runs"][1]["job_differences"],
        serde_json::json!([{"option": "direct", "first": false, "this": true}])
    );
    assert!(json["runs"][0].get("job_differences").is_none(), "{json}");
    assert!(json["runs"][3].get("job_differences").is_none(), "{json}");

    // A mixed job: the syncs and the read mix count.
    let mix = |fsync: u64, rwmixread: u64| {
        custom(&|d| {
            d.job["rw"] = "randrw".into();
            d.job["fsync"] = fsync.into();
            d.job["rwmixread"] = rwmixread.into();
        })
    };
    let (m70, m30) = (mix(1, 70), mix(0, 30));
    let runs = [
        Compared {
            id: "m70",
            kind: "import",
            doc: &m70,
        },
        Compared {
            id: "m30",
            kind: "import",
            doc: &m30,
        },
    ];
    let cmp = compare(&runs, false).unwrap();
    assert!(
        cmp.notes.iter().any(|n| n.starts_with(
            "the runs ran different jobs (A vs B: fsync 1 against 0, rwmixread 70 against 30)"
        )),
        "{:?}",
        cmp.notes
    );
    // A pure read job's rwmixread is fio's unused default: no difference.
    let (r1, r2) = (
        custom(&|d| d.job["rwmixread"] = 50.into()),
        custom(&|d| d.job["rwmixread"] = 70.into()),
    );
    let runs = [
        Compared {
            id: "r1",
            kind: "import",
            doc: &r1,
        },
        Compared {
            id: "r2",
            kind: "import",
            doc: &r2,
        },
    ];
    assert!(compare(&runs, false).unwrap().runs[1]
        .job_differences
        .is_empty());
}

/// A built-in profile overridden (`bench --profile read-iops --iodepth 4`) is another job; a
/// profile's quick run beside its full one has its own note, and an import of fio's text report
/// does not know `direct` or the syncs (its document holds fio's defaults).
#[test]
fn a_profile_overridden_is_another_job_and_fio_text_knows_few_options() {
    let full = fixture("read-iops");
    let mut overridden = full.clone();
    overridden.job["iodepth"] = 4.into();
    let mut quick = full.clone();
    quick.quick = true;
    quick.job["numjobs"] = 4.into();
    let pair = |a: &RunDoc, b: &RunDoc| {
        let runs = [
            Compared {
                id: "a",
                kind: "bench",
                doc: a,
            },
            Compared {
                id: "b",
                kind: "bench",
                doc: b,
            },
        ];
        compare(&runs, false).unwrap().runs[1]
            .job_differences
            .clone()
    };
    let d = pair(&full, &overridden);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].option, "iodepth");
    assert!(pair(&full, &quick).is_empty());
    let mut text = full.clone();
    text.profile = None;
    text.job["direct"] = false.into();
    text.warnings = vec![format!(
        "{}: host facts are unknown",
        disktier_engine::fio::text::IMPORTED_NOTE
    )];
    let mut json = text.clone();
    json.warnings.clear();
    json.job["direct"] = true.into();
    assert!(pair(&text, &json).is_empty());
    json.job["bs"] = 8192.into();
    assert_eq!(pair(&text, &json)[0].option, "bs");
}
