//! The stored documents the report draws, read into their types: a run (`bench`, `check`,
//! `import`, one profile of `assess`), an interference report, or something else a fleet run
//! saved (an assessment summary, etcd's own metrics). A document that does not read as the type
//! its kind and shape say (written by an older or newer disktier, or not by disktier at all) is
//! `Unreadable` with serde's reason: the report shows it as such and goes on.

use crate::StoredRun;
use disktier_engine::result::JobFileDoc;
use disktier_fleet::result::{KeyFigures, NodeDoc, ParseError, Unmeasured, UNMEASURED_KIND};
use disktier_interfere::report::InterfereDoc;
use serde::Deserialize;

pub(super) enum StoredDoc {
    /// A run, an assessment summary or etcd's metrics (the last two are drawn only in the fleet
    /// section).
    Node(NodeDoc),
    Interfere(Box<InterfereDoc>),
    /// A fio job file's run (`bench FILE.fio`, `import fio --jobs`): shown in its own section,
    /// a row per job and per combined group, not drawn with single runs (its jobs ran side by
    /// side or one set after another, each with its own figures).
    JobFile(Box<JobFileDoc>),
    /// A fleet node that gave no document (it reads as one): a row of the fleet section only.
    Unmeasured,
    Unreadable(String),
}

impl StoredDoc {
    pub(super) fn read(run: &StoredRun) -> StoredDoc {
        let doc = &run.doc;
        if run.summary.kind == UNMEASURED_KIND {
            return match Unmeasured::deserialize(doc) {
                Ok(_) => StoredDoc::Unmeasured,
                Err(e) => StoredDoc::Unreadable(e.to_string()),
            };
        }
        if run.summary.kind == "interfere" || doc.get("scenarios").is_some() {
            return match InterfereDoc::deserialize(doc) {
                Ok(d) => StoredDoc::Interfere(Box::new(d)),
                Err(e) => StoredDoc::Unreadable(e.to_string()),
            };
        }
        if crate::doc::is_job_file(doc) {
            return match JobFileDoc::deserialize(doc) {
                Ok(d) => StoredDoc::JobFile(Box::new(d)),
                Err(e) => StoredDoc::Unreadable(e.to_string()),
            };
        }
        match NodeDoc::from_value(doc) {
            Ok(d) => StoredDoc::Node(d),
            Err(e) => StoredDoc::Unreadable(reason(e)),
        }
    }

    /// The key figures the fleet section shows for this document (none for what is not a
    /// node's document).
    pub(super) fn figures(&self) -> KeyFigures {
        match self {
            StoredDoc::Node(d) => d.figures(),
            _ => KeyFigures::default(),
        }
    }
}

/// Why a document did not read, in words about the document (not about a pod's log).
pub(super) fn reason(e: ParseError) -> String {
    match e {
        ParseError::Shape(s) => s,
        ParseError::TooNew(v) => format!(
            "schema_version {v} is newer than this disktier reads ({})",
            disktier_engine::result::SCHEMA_VERSION
        ),
        ParseError::NoDocument => "not a JSON object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{render, ReportInput};
    use crate::NewRun;
    use serde_json::{json, Value};

    use disktier_testkit::cli::store_fixture as fixture;

    fn stored(id: &str, kind: &str, doc: &Value) -> StoredRun {
        NewRun {
            kind,
            group_id: None,
            doc,
        }
        .to_row(id.into(), "2023-09-14T10:00:00.000000Z".into())
    }

    /// The report of `runs`, as `disktier report` renders it.
    fn page_of(runs: &[StoredRun]) -> String {
        render(&ReportInput::new(runs, "now")).unwrap()
    }

    /// The report of a good run plus `bad`: it renders, draws the good run, and names `bad`'s
    /// run with one "unreadable document" row holding serde's reason.
    fn report_with(kind: &str, bad: &Value) -> (String, String) {
        let runs = [
            stored("run-good", "check", &fixture("quick-etcd")),
            stored("run-bad", kind, bad),
        ];
        let why = match StoredDoc::read(&runs[1]) {
            StoredDoc::Unreadable(why) => why,
            _ => panic!("{bad} read"),
        };
        let page = page_of(&runs);
        assert!(
            page.contains("<section id=\"latency\">"),
            "the good run is drawn"
        );
        assert_eq!(page.matches("unreadable document: ").count(), 1, "{page}");
        let row = page
            .lines()
            .find(|l| l.contains("unreadable document: "))
            .unwrap()
            .to_string();
        let before = page.find("run-bad").unwrap();
        assert!(page.find(&row).unwrap() > before, "the row follows its run");
        (why, row)
    }

    #[test]
    fn the_fixtures_read_as_their_types() {
        let run = stored("r", "check", &fixture("quick-etcd"));
        assert!(matches!(
            StoredDoc::read(&run),
            StoredDoc::Node(NodeDoc::Run(_))
        ));
        let run = stored("i", "interfere", &fixture("interfere"));
        assert!(matches!(StoredDoc::read(&run), StoredDoc::Interfere(_)));
        let run = stored("j", "import", &fixture("jobfile-import"));
        assert!(matches!(StoredDoc::read(&run), StoredDoc::JobFile(_)));
    }

    /// Regression (session 12's list): a job file's run was only named as "not drawn". It has
    /// its own section: a row per job with its options and figures, a row for a group of
    /// several jobs, and the file's notes.
    #[test]
    fn a_job_files_run_has_a_row_per_job_and_per_group_of_several() {
        let runs = [stored("run-jobs", "import", &fixture("jobfile-import"))];
        let page = page_of(&runs);
        assert!(!page.contains("Runs not drawn"), "{page}");
        // Its target counts (QA: "1 run on 0 targets").
        assert!(page.contains("<p>1 run on 1 target "), "{page}");
        let at = page.find("<section id=\"jobfiles\">").expect("the section");
        let section = &page[at..page[at..].find("</section>").unwrap() + at];
        assert!(
            section.contains("job file <span class=\"mono\">"),
            "{section}"
        );
        let rows: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with("<tr><td>"))
            .collect();
        assert_eq!(rows.len(), 3, "one row per job: {section}");
        // The etcd job of the OpenShift recipe: sequential 2300-byte writes, fdatasync each.
        assert!(
            rows[0].starts_with("<tr><td>etcd</td><td class=\"num\">0</td><td class=\"num\">–</td><td>write</td><td class=\"num\">2.25 KiB</td><td class=\"num\">1</td><td class=\"num\">1</td>"),
            "{}",
            rows[0]
        );
        let doc: disktier_engine::result::JobFileDoc =
            serde_json::from_value(fixture("jobfile-import")).unwrap();
        let p99 = doc.jobs[0]
            .results
            .sync
            .as_ref()
            .unwrap()
            .lat_ns
            .p(99.0)
            .unwrap();
        assert!(
            rows[0].ends_with(&format!(
                "<td class=\"num\">{}</td></tr>",
                disktier_units::fmt_ns(p99 as f64)
            )),
            "sync p99 last: {}",
            rows[0]
        );
        // group 1's two clones of `readers` are combined; group 0 holds one job, which is its
        // own row.
        assert_eq!(
            section.matches("<tr class=\"group\">").count(),
            1,
            "{section}"
        );
        assert!(section.contains("group 1 (readers)"), "{section}");
        // The combined row follows its own group's jobs (QA: it came after other groups').
        let lines: Vec<&str> = section.lines().collect();
        let combined = lines
            .iter()
            .position(|l| l.contains("group 1 (readers)"))
            .unwrap();
        assert!(
            lines[combined - 1].starts_with("<tr><td>readers</td>"),
            "{section}"
        );
        assert!(
            lines[combined - 2].starts_with("<tr><td>readers</td>"),
            "{section}"
        );
        // When the run knows when a job started, it says so; the time reads as a time.
        let mut timed = fixture("jobfile-import");
        timed["jobs"][1]["start_s"] = json!(0.0577);
        timed["started_at"] = json!("2026-11-27T19:13:18.176501928Z");
        let page = page_of(&[stored("run-timed", "bench", &timed)]);
        assert!(page.contains("<td class=\"num\">+0.06 s</td>"), "{page}");
        assert!(page.contains("started 2026-11-27 19:13:18 UTC"), "{page}");
        assert!(section.contains("host facts are unknown"), "{section}");
        assert!(page.contains("<a href=\"#jobfiles\">fio job files</a>"));
    }

    /// A job file's run is not drawn (it is no one run), and not called unreadable.
    #[test]
    fn a_job_files_run_is_not_unreadable() {
        let runs = [
            stored("run-good", "check", &fixture("quick-etcd")),
            stored("run-jobs", "bench", &fixture("jobfile-import")),
        ];
        let page = page_of(&runs);
        assert!(!page.contains("unreadable document"), "{page}");
        let mut doc = fixture("jobfile-import");
        doc["jobs"] = json!("three");
        let (why, _) = report_with("bench", &doc);
        assert!(why.contains("invalid type: string \"three\""), "{why}");
    }

    #[test]
    fn a_foreign_document_is_shown_as_unreadable() {
        let (why, row) = report_with("import", &json!({"hello": "world"}));
        assert_eq!(why, "no schema_version");
        assert!(
            row.contains("unreadable document: no schema_version"),
            "{row}"
        );
    }

    #[test]
    fn a_run_with_a_field_of_the_wrong_type_is_unreadable() {
        let mut doc = fixture("quick-etcd");
        doc["duration_s"] = json!("three seconds");
        let (why, row) = report_with("bench", &doc);
        assert!(
            why.contains("invalid type: string \"three seconds\""),
            "{why}"
        );
        assert!(
            row.contains("invalid type: string &quot;three seconds&quot;"),
            "{row}"
        );
    }

    #[test]
    fn a_document_from_a_newer_disktier_is_unreadable() {
        let mut doc = fixture("quick-etcd");
        doc["schema_version"] = json!(99);
        let (why, _) = report_with("check", &doc);
        assert!(why.contains("schema_version 99 is newer"), "{why}");
    }

    #[test]
    fn an_old_interference_document_is_unreadable() {
        // An older interfere wrote each verdict as an object; the type has a word.
        let mut doc = fixture("interfere");
        doc["scenarios"][0]["verdict"] = json!({"pass": true, "message": "ok"});
        let (why, _) = report_with("interfere", &doc);
        assert!(why.contains("expected map with a single key"), "{why}");
        let mut doc = fixture("interfere");
        doc.as_object_mut().unwrap().remove("host");
        let (why, _) = report_with("interfere", &doc);
        assert_eq!(why, "missing field `host`");
    }
}
