//! Which stored runs compare can set side by side: benchmark runs of one job (`bench TARGET`,
//! `check`, `assess`, `import`) whose document reads as a benchmark result. Another kind of run
//! (an interference comparison, a fleet setup), a fio job file's run or a document that does not
//! read is refused, saying where the run can be seen instead.

use super::Compared;
use crate::doc::ResultDoc;
use crate::model::{StoredRun, BENCHMARK_KINDS};
use crate::{Store, StoreError};
use disktier_engine::RunDoc;

/// A stored run compare takes: its id, the command that stored it, and its benchmark result.
#[derive(Debug, Clone)]
pub struct Benchmark {
    pub id: String,
    pub kind: String,
    pub doc: RunDoc,
}

impl Benchmark {
    /// The run as [`super::compare`] takes it.
    pub fn compared(&self) -> Compared<'_> {
        Compared {
            id: &self.id,
            kind: &self.kind,
            doc: &self.doc,
        }
    }
}

/// Why a run named to compare cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CannotCompare {
    /// The store did not hand the run over (none by that id, an ambiguous prefix, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run of another kind than a benchmark.
    #[error(
        "run {id} is {} {kind} run, and compare takes benchmark runs ({}): show it with `disktier show {id}`{}",
        article(.kind),
        BENCHMARK_KINDS.join(", "),
        report_hint(.id, .kind)
    )]
    NotABenchmark { id: String, kind: String },
    /// A fio job file's run: its jobs each have their own figures.
    #[error(
        "run {id} is the run of the fio job file {jobfile} (job{} {}), and compare takes single-job runs (bench TARGET, check, assess, import fio or fio-text without --jobs): see its jobs side by side with `disktier show {id}`",
        if .jobs.len() == 1 { "" } else { "s" },
        .jobs.join(", ")
    )]
    JobFile {
        id: String,
        jobfile: String,
        /// The job names, each once.
        jobs: Vec<String>,
    },
    /// A benchmark run whose document does not read as a benchmark result.
    #[error(
        "run {id} ({} {kind} run) cannot be compared: its stored document is unreadable as a benchmark result ({why}); it was written by another version of disktier or damaged, see it with `disktier show {id} --format json`",
        article(.kind)
    )]
    Unreadable {
        id: String,
        kind: String,
        why: String,
    },
}

/// Reads the runs `ids` name (ids or unique prefixes) from `store`, in order, each checked as
/// it is read: the first run that cannot be read or compared stops it.
pub fn benchmarks(store: &mut Store, ids: &[String]) -> Result<Vec<Benchmark>, CannotCompare> {
    ids.iter().map(|id| benchmark(store.get(id)?)).collect()
}

/// The benchmark result a stored run holds, or why it holds none: a run of another kind (an
/// interference comparison, a fleet setup), or a document that does not read as one.
pub fn benchmark(run: StoredRun) -> Result<Benchmark, CannotCompare> {
    let StoredRun { summary, doc, .. } = run;
    let (id, kind) = (summary.id, summary.kind);
    if !BENCHMARK_KINDS.contains(&kind.as_str()) {
        return Err(CannotCompare::NotABenchmark { id, kind });
    }
    match ResultDoc::read(&doc) {
        Ok(ResultDoc::Run(doc)) => Ok(Benchmark {
            id,
            kind,
            doc: *doc,
        }),
        // Its jobs ran side by side or one set after another, each its own figures: no one of
        // them is "the run" to set against another.
        Ok(ResultDoc::JobFile(doc)) => {
            let mut jobs: Vec<String> = Vec::new();
            for j in &doc.jobs {
                // fio's numjobs clones share their job's name: each named once.
                if !jobs.contains(&j.name) {
                    jobs.push(j.name.clone());
                }
            }
            Err(CannotCompare::JobFile {
                id,
                jobfile: doc.jobfile.clone(),
                jobs,
            })
        }
        Err(e) => Err(CannotCompare::Unreadable {
            id,
            kind,
            why: e.to_string(),
        }),
    }
}

/// "an" before a vowel sound, else "a".
fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// Where an interference comparison can be seen besides `show`.
fn report_hint(id: &str, kind: &str) -> String {
    if kind == "interfere" {
        format!(" or draw it with `disktier report {id}`")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewRun;
    use disktier_testkit::cli::store_fixture;

    /// A store in a temporary directory with one run per (kind, fixture); their ids.
    fn store_with(runs: &[(&str, &str)]) -> (tempfile::TempDir, Store, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let mut store = Store::open(Some(path.to_str().unwrap())).unwrap();
        let ids = runs
            .iter()
            .map(|(kind, fixture)| {
                let doc = store_fixture(fixture);
                store
                    .save(&NewRun {
                        kind,
                        group_id: None,
                        doc: &doc,
                    })
                    .unwrap()
            })
            .collect();
        (dir, store, ids)
    }

    #[test]
    fn benchmark_runs_are_read_in_order() {
        let (_dir, mut store, ids) =
            store_with(&[("check", "ocp-recipe-ebs"), ("import", "quick-etcd")]);
        let got = benchmarks(&mut store, &[ids[1].clone(), ids[0].clone()]).unwrap();
        assert_eq!(got[0].id, ids[1]);
        assert_eq!(got[0].kind, "import");
        assert_eq!(got[1].compared().id, ids[0]);
    }

    #[test]
    fn other_runs_are_refused_saying_where_to_see_them() {
        let (_dir, mut store, ids) = store_with(&[
            ("interfere", "interfere"),
            ("import", "jobfile-import"),
            ("setup", "quick-etcd"),
            ("check", "interfere"),
        ]);
        let mut err = |id: &String| {
            benchmarks(&mut store, std::slice::from_ref(id))
                .unwrap_err()
                .to_string()
        };
        let i = &ids[0];
        assert_eq!(
            err(i),
            format!("run {i} is an interfere run, and compare takes benchmark runs (bench, check, assess, import): show it with `disktier show {i}` or draw it with `disktier report {i}`")
        );
        let j = &ids[1];
        let e = err(j);
        assert!(
            e.starts_with(&format!("run {j} is the run of the fio job file ")),
            "{e}"
        );
        assert!(e.contains("and compare takes single-job runs"), "{e}");
        let s = &ids[2];
        assert_eq!(
            err(s),
            format!("run {s} is a setup run, and compare takes benchmark runs (bench, check, assess, import): show it with `disktier show {s}`")
        );
        let c = &ids[3];
        let e = err(c);
        assert!(
            e.starts_with(&format!("run {c} (a check run) cannot be compared: its stored document is unreadable as a benchmark result (")),
            "{e}"
        );
        // The first run that cannot be compared stops the reading.
        assert!(matches!(
            benchmarks(&mut store, &[ids[2].clone(), "nope".into()]),
            Err(CannotCompare::NotABenchmark { .. })
        ));
        assert!(matches!(
            benchmarks(&mut store, &["nope".into(), ids[2].clone()]),
            Err(CannotCompare::Store(_))
        ));
    }
}
