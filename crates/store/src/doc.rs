//! A stored benchmark document read into its type, chosen by its shape: a fio job file's run
//! (`bench FILE.fio`, `import fio --jobs`: `"kind": "jobfile"`, an `engine::JobFileDoc`) or one
//! run (`bench`, `check`, `import`, one profile of `assess`: an `engine::RunDoc`). What `show`,
//! `compare` and `history` read; a document that does not read as the type its shape says is
//! the serde error, naming the field.

use disktier_engine::result::{JobFileDoc, Results};
use disktier_engine::RunDoc;
use serde::Deserialize;
use serde_json::Value;

/// The `kind` a job file's document carries.
pub const JOB_FILE_KIND: &str = "jobfile";

/// A benchmark result as stored.
#[derive(Debug, Clone)]
pub enum ResultDoc {
    Run(Box<RunDoc>),
    JobFile(Box<JobFileDoc>),
}

/// Whether `doc` is a job file's document (its `kind` says so).
pub fn is_job_file(doc: &Value) -> bool {
    doc.get("kind").and_then(Value::as_str) == Some(JOB_FILE_KIND)
}

impl ResultDoc {
    /// Reads `doc` as the type its shape says.
    pub fn read(doc: &Value) -> Result<ResultDoc, serde_json::Error> {
        Ok(if is_job_file(doc) {
            ResultDoc::JobFile(Box::new(JobFileDoc::deserialize(doc)?))
        } else {
            ResultDoc::Run(Box::new(RunDoc::deserialize(doc)?))
        })
    }
}

/// The figures `history` lists for a job file's run: its first reporting group's, its jobs
/// combined (for a file of one group, every job; the later groups ran after it, each its own
/// run set). `None` when the run has no group.
pub fn job_file_listing(doc: &JobFileDoc) -> Option<&Results> {
    doc.groups.first().map(|g| &g.results)
}

/// The JSON pointer under which [`job_file_listing`]'s figures sit in a document, "" for one
/// run's own `results`.
pub(crate) fn listing_base(doc: &Value) -> &'static str {
    if is_job_file(doc) {
        "/groups/0"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_testkit::cli::store_fixture as fixture;

    #[test]
    fn each_kind_reads_as_its_type() {
        assert!(matches!(
            ResultDoc::read(&fixture("quick-etcd")),
            Ok(ResultDoc::Run(_))
        ));
        let doc = fixture("jobfile-import");
        assert!(is_job_file(&doc));
        let Ok(ResultDoc::JobFile(j)) = ResultDoc::read(&doc) else {
            panic!("a job file's document reads as one");
        };
        assert_eq!(j.jobs.len(), 3);
        let first = job_file_listing(&j).unwrap();
        assert!(first.write.is_some() && first.sync.is_some() && first.read.is_none());
    }

    #[test]
    fn a_damaged_job_file_document_names_its_field() {
        let mut doc = fixture("jobfile-import");
        doc.as_object_mut().unwrap().remove("groups");
        let e = ResultDoc::read(&doc).unwrap_err().to_string();
        assert_eq!(e, "missing field `groups`");
    }
}
