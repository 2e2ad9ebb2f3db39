//! Import: results other tools produced (the etcd-perf image's text, one job or every job of
//! fio's JSON or of fio's text report) as result documents, judged as a measured run is.

use super::judge;
use disktier_engine::etcdperf;
use disktier_engine::fio::{self, DocContext, FioMeasured};
use disktier_engine::result::Verdict;
use disktier_engine::verdict;
use disktier_engine::RunDoc;
use std::path::Path;

/// `import fio`'s options, as typed.
pub struct FioOptions<'a> {
    /// The file fio wrote; `-` is standard input.
    pub file: &'a Path,
    /// The built-in profile the job corresponds to, recorded with the result.
    pub profile: Option<&'a str>,
    /// Which job of the file to import (without `jobs`).
    pub job: usize,
    /// Import every job as one job-file document.
    pub jobs: bool,
    /// What fio measured, named by the user: replaces the file or directory fio's JSON names
    /// (kept in the job's fio options), or names it where the JSON names none.
    pub target: Option<&'a str>,
    /// The host fio ran on (its JSON does not say).
    pub host: Option<&'a str>,
}

/// What `import fio` read.
pub enum FioImport {
    /// With `jobs`: the job-file document, as `bench JOBFILE` saves it.
    Jobs(serde_json::Value),
    /// One job: its result document and its etcd verdict's lines.
    Run(Box<RunDoc>, Vec<String>),
}

/// Reads fio's JSON as `o` asks: the profile named is checked first, then the input (standard
/// input for `-`) is read capped, an unreadable file or one that is not text said apart.
pub fn fio(o: FioOptions<'_>) -> anyhow::Result<FioImport> {
    let profile = o.profile.map(super::job::profile).transpose()?;
    let dc = DocContext {
        profile: profile.map(|p| p.name().to_string()),
        // The host that ran fio is not in its JSON: left empty rather than guessed.
        ..DocContext::default()
    };
    let stdin = is_stdin(o.file);
    if o.jobs {
        // Read as a single job's import is: capped, and an unreadable file or one that is not
        // text said apart.
        let (text, name) = if stdin {
            let name = "standard input".to_string();
            (fio::read_capped(Ok(std::io::stdin()), &name)?, name)
        } else {
            let name = o.file.display().to_string();
            (fio::read_capped(std::fs::File::open(o.file), &name)?, name)
        };
        let v = fio::parse(&text, &name)?;
        fio::check_any_figures(&v, &name)?;
        let mut outs = super::jobfile::fio_outs(&v, &name, &DocContext::default())?;
        for out in &mut outs {
            named(&mut out.measured.doc, o.target, o.host);
        }
        let notes = [fio_json_note(o.host.is_some())];
        let doc = super::jobfile::imported_document(&name, &outs, &notes);
        return Ok(FioImport::Jobs(serde_json::to_value(doc)?));
    }
    let mut m = if stdin {
        let text = fio::read_capped(Ok(std::io::stdin()), "standard input")?;
        fio::import_text(&text, "standard input", o.job, dc)?
    } else {
        fio::import_file(o.file, o.job, dc)?
    };
    named(&mut m.doc, o.target, o.host);
    let (doc, extra) = fio_run(m);
    Ok(FioImport::Run(Box::new(doc), extra))
}

/// The target and host the user named for a run read from fio's JSON. A named target takes the
/// place of the path fio's JSON gives (the job's fio options keep fio's); where the JSON gives
/// none, a `/dev/` name is a device and any other a directory, as `import fio-text` takes it.
fn named(doc: &mut RunDoc, target: Option<&str>, host: Option<&str>) {
    if let Some(t) = target {
        if doc.target.path.is_empty() {
            doc.target.kind = if t.starts_with("/dev/") {
                "device"
            } else {
                "directory"
            }
            .into();
        }
        doc.target.path = t.to_string();
    }
    if let Some(h) = host {
        doc.host.hostname = h.to_string();
    }
}

/// The note of a job-file import of fio's JSON.
fn fio_json_note(host_named: bool) -> String {
    if host_named {
        "imported from fio's JSON: host facts other than its name are unknown".into()
    } else {
        "imported from fio's JSON: host facts are unknown".into()
    }
}

/// `import fio-text`'s options, as typed.
pub struct FioTextOptions<'a> {
    /// The file fio printed; `-` is standard input.
    pub file: &'a Path,
    pub profile: Option<&'a str>,
    /// Which job report of the file to import (without `jobs`).
    pub job: usize,
    /// Import every job report as one job-file document, as `import fio --jobs` does.
    pub jobs: bool,
    /// What the text does not say: the target measured and the host.
    pub target: Option<&'a str>,
    pub host: Option<&'a str>,
}

/// Reads fio's text report as `o` asks (the profile checked first, the input read capped) and
/// judges it as an `import fio` of JSON is: one document and its etcd verdict's lines, or with
/// `jobs` every job report as the job-file document `import fio --jobs` makes.
pub fn fio_text(o: FioTextOptions<'_>) -> anyhow::Result<FioImport> {
    let profile = o.profile.map(super::job::profile).transpose()?;
    let ctx = fio::text::TextContext {
        profile: profile.map(|p| p.name().to_string()),
        target: o.target.map(str::to_string),
        host: o.host.map(str::to_string),
    };
    let (text, name) = if is_stdin(o.file) {
        let name = "standard input".to_string();
        (fio::text::read_capped(Ok(std::io::stdin()), &name)?, name)
    } else {
        fio::text::read_file(o.file)?
    };
    if o.jobs {
        let r = fio::text::parse(&text, &name)?;
        let t = fio::text::jobs(&r, &name, &ctx)?;
        let outs: Vec<super::jobfile::JobOut> = t.jobs.into_iter().map(Into::into).collect();
        let doc = super::jobfile::imported_document(&name, &outs, &t.notes);
        return Ok(FioImport::Jobs(serde_json::to_value(doc)?));
    }
    let m = fio::text::import_text(&text, &name, o.job, ctx)?;
    let (doc, extra) = judged_text(m);
    Ok(FioImport::Run(Box::new(doc), extra))
}

/// [`judged`] for fio's text report, which prints no sync count: the etcd verdict (its
/// interval and its syncs/s) is taken as if each write was synced (fdatasync=1, etcd's job),
/// and said so; the stored count stays unknown (0, shown `-`).
fn judged_text(mut m: FioMeasured) -> (RunDoc, Vec<String>) {
    let writes = m.doc.results.write.as_ref().map(|w| (w.ios, w.iops));
    let assumed = match (m.doc.results.sync.as_mut(), writes) {
        (Some(s), Some((ios, iops))) if s.ios == 0 && ios > 0 => {
            (s.ios, s.iops) = (ios, iops);
            true
        }
        _ => false,
    };
    let (mut doc, extra) = judged(m, None);
    if let Some(s) = doc.results.sync.as_mut().filter(|_| assumed) {
        (s.ios, s.iops) = (0, 0.0);
        if !doc.verdicts.is_empty() {
            doc.warnings.push(
                "fio's text prints no sync count: the etcd verdict's interval and syncs/s take one fdatasync per write (fdatasync=1, etcd's job)".into(),
            );
        }
    }
    (doc, extra)
}

/// `-` names standard input.
fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == "-"
}

/// Whether an imported run with these verdicts passed: its `etcd` verdict (disktier's own, not
/// the etcd-perf image's) settles it, as `check etcd` would; a run without one passes.
pub fn passed(verdicts: &[Verdict]) -> bool {
    !matches!(verdicts.iter().find(|v| v.name == "etcd"), Some(v) if !v.pass)
}

/// The etcd-perf image's output saved in `path` as a result document. The output holds no
/// date: the file's modification time stands for when it ran.
pub fn etcd_perf(path: &Path, named: etcdperf::Named) -> anyhow::Result<RunDoc> {
    let mut e = etcdperf::parse_file(path)?;
    // parse_file read it whole, within its bound; a file changed since is read as far as it.
    if let Ok(text) = std::fs::File::open(path).and_then(|f| {
        let mut t = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(f, etcdperf::MAX_BYTES as u64),
            &mut t,
        )?;
        Ok(t)
    }) {
        from_fio_json(&mut e, &text);
    }
    let started_at = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| {
            time::OffsetDateTime::from(t)
                .format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    Ok(e.to_named_run_doc(&path.display().to_string(), started_at, named))
}

/// The etcd-perf image pipes fio's `--output-format=json` into its output (`fio ... | tee`,
/// between two lines of dashes, before the p99 line it reads from that JSON): what fio's text
/// report would give (block size, writes, run time, the write and fdatasync latencies) is read
/// from it where the text gave nothing.
fn from_fio_json(e: &mut etcdperf::EtcdPerf, text: &str) {
    use serde_json::Value;
    let Ok(v) = fio::parse(text, "") else {
        return;
    };
    let j = &v["jobs"][0];
    let u = |b: &Value, k: &str| b.get(k).and_then(Value::as_u64);
    let f = |b: &Value, k: &str| b.get(k).and_then(Value::as_f64).filter(|x| *x >= 0.0);
    let stats = |b: &Value| {
        (u(b, "N")? > 0).then_some(())?;
        Some(etcdperf::LineStats {
            min: u(b, "min")?,
            max: u(b, "max")?,
            mean: f(b, "mean")?,
            stdev: f(b, "stddev")?,
        })
    };
    let w = &j["write"];
    e.writes = e.writes.or(u(w, "total_ios").filter(|n| *n > 0));
    e.runtime_ms = e.runtime_ms.or(u(w, "runtime").filter(|n| *n > 0));
    e.write_lat = e.write_lat.or_else(|| stats(&w["clat_ns"]));
    e.sync_lat = e.sync_lat.or_else(|| stats(&j["sync"]["lat_ns"]));
    // Options before fio's --name are its global ones (the image's command line puts them there).
    let opt = |k: &str| {
        [&j["job options"], &v["global options"]]
            .iter()
            .find_map(|o| o.get(k).and_then(Value::as_str))
    };
    let size = |k: &str| opt(k).and_then(|s| disktier_units::parse_fio_size(s).ok());
    e.bs = e.bs.or(size("bs").filter(|b| *b > 0));
    e.file_bytes = e.file_bytes.or(size("size").filter(|b| *b > 0));
    e.image_job = e.image_job.or(match e.bs {
        Some(2300) => Some(etcdperf::ImageJob::Classic),
        Some(8000) => Some(etcdperf::ImageJob::Current),
        _ => None,
    });
}

/// One job of fio's JSON, as the engine imported it, as disktier's result: a warning on what
/// the import cannot know, and the etcd verdict when the job synced. Returns the document and
/// the verdict's lines.
pub fn fio_run(m: FioMeasured) -> (RunDoc, Vec<String>) {
    // Only the sync latency's interval (the etcd verdict's) is read from the bins, so the
    // interpolation is worth a word only for a job that synced and whose JSON had none.
    let mut note = fio_json_note(!m.doc.host.hostname.is_empty());
    if m.doc.results.sync.is_some() && m.sync_hist.is_none() {
        note.push_str("; without json+ bins, sync latencies between fio's listed percentiles are interpolated");
    }
    judged(m, Some(&note))
}

/// An imported run with `note` added to its warnings (the text import's engine writes its
/// own) and, when it synced, the etcd verdict: the document and the verdict's lines.
fn judged(m: FioMeasured, note: Option<&str>) -> (RunDoc, Vec<String>) {
    let mut doc = m.doc;
    if let Some(n) = note {
        doc.warnings.push(n.to_string());
    }
    let mut extra = Vec::new();
    if doc.results.sync.is_some() {
        if let Ok(v) = judge::etcd(
            &mut doc,
            m.sync_hist.as_ref(),
            verdict::EtcdCriteria::default(),
            None,
        ) {
            extra = v.lines;
        }
    }
    (doc, extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(name: &str, pass: bool) -> Verdict {
        serde_json::from_value(serde_json::json!({
            "name": name, "metric": "sync.p99", "value": 1.0, "threshold": 2.0, "pass": pass
        }))
        .unwrap()
    }

    #[test]
    fn the_etcd_verdict_alone_settles_the_outcome() {
        assert!(passed(&[]));
        assert!(passed(&[
            verdict("etcd-perf", false),
            verdict("etcd", true)
        ]));
        assert!(!passed(&[
            verdict("etcd-perf", true),
            verdict("etcd", false)
        ]));
    }

    #[test]
    fn the_profile_is_checked_before_the_input_is_read() {
        let o = FioOptions {
            file: Path::new("/nonexistent/fio.json"),
            profile: Some("nosuch"),
            job: 0,
            jobs: true,
            target: None,
            host: None,
        };
        let e = fio(o).err().unwrap().to_string();
        assert!(e.starts_with("unknown profile `nosuch`"), "{e}");
        assert!(is_stdin(Path::new("-")) && !is_stdin(Path::new("./-")));
    }

    #[test]
    fn jobs_read_the_file_and_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("out.json");
        std::fs::write(&f, "not json").unwrap();
        for jobs in [true, false] {
            let o = FioOptions {
                file: &f,
                profile: None,
                job: 0,
                jobs,
                target: None,
                host: None,
            };
            let e = format!("{:#}", fio(o).err().unwrap());
            assert!(e.contains(&f.display().to_string()), "{e}");
        }
    }
}
