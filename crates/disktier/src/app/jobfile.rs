//! A fio job file: read and bounded, its sections turned into jobs, measured (every job checked
//! first, then the run sets in order, the jobs of each at the same time, with the native engine,
//! or the whole file handed to fio), and the run (or fio's JSON of one) as one document.

use super::job::LIBAIO_NOTE;
use super::measure::Tool;
use anyhow::{bail, Context};
use disktier_engine::fio::{self, DocContext};
use disktier_engine::jobfile::{self, FileJob, JobFile};
use disktier_engine::jobset;
use disktier_engine::result::{GroupEntry, JobEntry, JobFileDoc};
use disktier_engine::{
    EngineError, IoEngineKind, Job, Measured, ProgressFn, RunOptions, SCHEMA_VERSION,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Whether `path` is a fio job file rather than a target: a regular file named `*.fio`, or one
/// whose first line that is not blank or a comment is a `[section]` header.
pub fn is_job_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    if path.extension().is_some_and(|e| e == "fio") {
        return true;
    }
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let Ok(text) = std::str::from_utf8(&head[..n]) else {
        return false;
    };
    text.lines()
        .map(jobfile::content)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
}

/// The job a section describes: fio's defaults (psync engine, as fio without `ioengine`), the
/// section's target, then its options read one by one by `parser` (so an error names its line).
/// `ioengine=libaio` becomes io_uring; the flag says so.
pub fn to_job(
    src: &str,
    fj: &FileJob,
    lenient: bool,
    parser: &dyn OptionParser,
) -> anyhow::Result<(Job, bool)> {
    let target: PathBuf = fj
        .target
        .as_ref()
        .and_then(|t| t.value.clone())
        .unwrap_or_else(|| ".".into())
        .into();
    // fio: `directory=` names a directory ("fio: /dev/loop4 is not a directory"); a device, a
    // file or nothing there is not taken as the target (QA: a missing one became a file).
    if let Some(o) = fj.target.as_ref().filter(|o| o.key == "directory") {
        let why = match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => None,
            Ok(_) => Some("not a directory (fio refuses it too): name a file or a block device with filename="),
            Err(_) => Some("no such directory (fio refuses it too): create it first, or fix the path"),
        };
        if let Some(why) = why {
            bail!(
                "{src} line {}: directory={}: {why}",
                o.line,
                target.display()
            );
        }
    }
    // fio: `filename=` names a file or a device; a directory there fails ("err=21 ... Is a
    // directory"), so it is not taken as a directory target either (QA: `filename=/var/tmp` ran
    // the job in a file disktier made in /var/tmp, where fio runs nothing).
    if let Some(o) = fj.target.as_ref().filter(|o| o.key == "filename") {
        if target.is_dir() {
            bail!(
                "{src} line {}: filename={}: a directory (fio refuses it too: Is a directory): name it with directory= to run in a file made there, or name a file or a block device",
                o.line,
                target.display()
            );
        }
    }
    let mut job = Job {
        name: fj.name.clone(),
        target: crate::app::measure::canonical(&target),
        ioengine: IoEngineKind::Psync,
        ..Job::default()
    };
    let mut libaio = false;
    let mut args = Vec::new();
    for o in &fj.options {
        let mut value = o.value.clone();
        if o.key == "ioengine" && value.as_deref() == Some("libaio") {
            value = Some("io_uring".into());
            libaio = true;
        }
        // fio runs the file (`lenient`): the checks before fio starts read what only fio
        // reads as fio does ([`options::as_fio_reads`]).
        if lenient {
            if options::fio_reads_as_unset(&o.key, value.as_deref()) {
                continue;
            }
            value = value.map(|v| options::as_fio_reads(&o.key, v));
        }
        let arg = match &value {
            Some(v) => format!("--{}={v}", o.key.replace('_', "-")),
            None => format!("--{}", o.key.replace('_', "-")),
        };
        match parser.check(&arg) {
            Ok(()) => args.push(arg),
            Err(_) if lenient && options::left_to_fio(&o.key) => {}
            Err(why) => {
                bail!(
                    "{src} line {}: {}{}: {why}{}",
                    o.line,
                    o.key,
                    o.value.as_ref().map_or(String::new(), |v| format!("={v}")),
                    options::checked_before_fio(lenient)
                );
            }
        }
    }
    // Each option once (the parser merged globals and the job's own), read together so that
    // options that depend on each other (fsync and fdatasync) are judged together.
    job = parser
        .apply(&args, job)
        .with_context(|| format!("{src} line {}: job [{}]", fj.line, fj.name))?;
    if let Err(e) = job.validate() {
        let option = match &e {
            EngineError::BadOption { option, .. } => Some(*option),
            EngineError::DirectAlignment { option, .. } => Some(*option),
            _ => None,
        };
        let line = option.and_then(|k| fj.options.iter().find(|o| o.key == k));
        // In the file's words (QA: time_based without runtime= was told "pass --runtime").
        let (at, e) = (line.map_or(fj.line, |o| o.line), terms::InFileTerms(e));
        bail!("{src} line {at}: job [{}]: {e}", fj.name);
    }
    Ok((job, libaio))
}

/// Reads and parses the file, bounded before it is read; returns its name as shown and the file.
/// `lenient` (fio runs the file) keeps what only fio understands.
pub fn load(path: &Path, lenient: bool) -> anyhow::Result<(String, JobFile)> {
    let src = path.display().to_string();
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read the job file {src}"))?
        .len();
    if len > jobfile::MAX_FILE_BYTES as u64 {
        bail!(
            "{src} is {len} bytes: a job file may be at most {} bytes",
            jobfile::MAX_FILE_BYTES
        );
    }
    // Read within the bound too: a file that grew since its size was read stops there (the
    // parser then refuses it as too big).
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| {
            std::io::Read::read_to_string(
                &mut std::io::Read::take(f, jobfile::MAX_FILE_BYTES as u64 + 1),
                &mut text,
            )
        })
        .with_context(|| format!("cannot read the job file {src} (it must be UTF-8 text)"))?;
    let f = if lenient {
        jobfile::parse_for_fio(&text, &src)?
    } else {
        jobfile::parse(&text, &src)?
    };
    Ok((src, f))
}

/// A job file read and its jobs resolved: what `bench JOBFILE` runs.
pub struct Loaded {
    /// The file's name as shown.
    pub src: String,
    pub file: JobFile,
    /// One job per section, in the file's order.
    pub jobs: Vec<Job>,
    /// What the file asked for beyond the options (libaio), said in the output.
    pub notes: Vec<String>,
}

/// Reads the job file at `path` ([`load`]) and turns each section into a job ([`to_job`]).
pub fn load_jobs(path: &Path, lenient: bool, parser: &dyn OptionParser) -> anyhow::Result<Loaded> {
    let (src, file) = load(path, lenient)?;
    let mut jobs = Vec::new();
    let mut notes = Vec::new();
    for fj in &file.jobs {
        let (job, libaio) = to_job(&src, fj, lenient, parser)?;
        if libaio && !lenient && !notes.iter().any(|n: &String| n == LIBAIO_NOTE) {
            notes.push(LIBAIO_NOTE.to_string());
        }
        jobs.push(job);
    }
    Ok(Loaded {
        src,
        file,
        jobs,
        notes,
    })
}

impl Loaded {
    /// The run of this file as one document ([`document`]): a group is reported merged when
    /// one of its jobs asked for group_reporting.
    pub fn document(&self, engine: &str, started_at: &str, outs: &[JobOut]) -> JobFileDoc {
        let reporting = |g: u32| {
            self.file
                .jobs
                .iter()
                .any(|j| j.group == g && j.group_reporting)
        };
        document(&self.src, engine, started_at, &reporting, outs, &self.notes)
    }
}

/// One job's figures in the output.
pub struct JobOut {
    pub name: String,
    pub group: u32,
    /// Seconds from the start of the file's run to the start of this job's run set (native).
    pub start_s: Option<f64>,
    pub measured: Measured,
}

/// Runs the job file at `path` (parsed as `file`, its jobs resolved as `jobs`) with `tool`;
/// returns the engine's name for the document and one output per job.
pub fn measure_file(
    file: &JobFile,
    path: &Path,
    jobs: &[Job],
    tool: Tool,
    opts: &RunOptions,
) -> anyhow::Result<(&'static str, Vec<JobOut>)> {
    // Every job is checked before anything runs, with either engine.
    for j in jobs {
        disktier_engine::preflight(j, opts).map_err(terms::InFileTerms)?;
    }
    Ok(match tool {
        Tool::Native => ("disktier", run_native(file, jobs, opts)?),
        Tool::Fio => {
            // The files fio will make (fio leaves them; the native engine removes its own):
            // `<name>.<clone>.0` in a directory, or a job's missing `filename` (QA: `a.0.0`
            // stayed behind).
            let made: Vec<PathBuf> = jobs
                .iter()
                .flat_map(|j| fio::files_to_make(j, j.target.is_dir()))
                .collect();
            let out = run_fio(path, jobs, opts);
            if !opts.keep_files {
                for p in &made {
                    let _ = std::fs::remove_file(p);
                }
            }
            ("fio", out?)
        }
    })
}

/// Runs the run sets in order, the jobs of each at the same time.
fn run_native(file: &JobFile, jobs: &[Job], opts: &RunOptions) -> anyhow::Result<Vec<JobOut>> {
    let mut outs = Vec::new();
    let t0 = std::time::Instant::now();
    for set in file.run_sets() {
        if opts.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let start_s = t0.elapsed().as_secs_f64();
        let these: Vec<Job> = set.iter().map(|&i| jobs[i].clone()).collect();
        let ms = jobset::run_together(&these, opts).map_err(terms::InFileTerms)?;
        for (i, m) in set.iter().zip(ms) {
            outs.push(JobOut {
                name: file.jobs[*i].name.clone(),
                group: file.jobs[*i].group,
                start_s: Some(start_s),
                measured: m,
            });
        }
    }
    Ok(outs)
}

/// Hands the file to fio (json+, for the groups' merged percentiles) as a job is: a stop is
/// passed on and marks the figures interrupted, and fio is killed past the jobs' time limits
/// added up (QA: a SIGTERM left fio running the whole file; the run exited 0, saved whole).
fn run_fio(path: &Path, jobs: &[Job], opts: &RunOptions) -> anyhow::Result<Vec<JobOut>> {
    let runner = disktier_cmd::RealRunner;
    if !disktier_cmd::CommandRunner::has_program(&runner, fio::FIO) {
        bail!("fio was not found: install it (Debian package: fio) or use --engine native");
    }
    let cmd = disktier_cmd::Cmd::new(fio::FIO).args([
        "--output-format=json+".to_string(),
        path.display().to_string(),
    ]);
    let limit = jobs
        .iter()
        .map(fio::timeout_for)
        .fold(std::time::Duration::ZERO, |a, b| a.saturating_add(b));
    let ran = || format!("fio could not run the job file {}", path.display());
    let out = fio::output_watched(&runner, &cmd, fio::FIO, Some(&opts.stop), limit)
        .map_err(terms::InFileTerms)
        .with_context(ran)?;
    let stopped = opts.stop.load(std::sync::atomic::Ordering::SeqCst);
    // Stopped by a signal, fio may exit non-zero but still prints what it measured.
    if !(out.success() || stopped && out.stdout.contains('{')) {
        return Err(anyhow::Error::new(disktier_cmd::CmdError::Failed {
            cmd: cmd.to_string(),
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }))
        .with_context(ran);
    }
    let v = fio::parse(&out.stdout, "fio's output")?;
    let dc = DocContext {
        host: disktier_engine::host::detect(),
        ..DocContext::default()
    };
    let mut outs = fio_outs(&v, "fio's output", &dc)?;
    for o in &mut outs {
        o.measured.doc.interrupted = stopped;
    }
    Ok(outs)
}

/// One output per job of fio's JSON of a job file (what fio ran, or an imported file).
pub fn fio_outs(
    v: &serde_json::Value,
    source_name: &str,
    dc: &DocContext,
) -> anyhow::Result<Vec<JobOut>> {
    Ok(fio::jobs(v, source_name, dc)?
        .into_iter()
        .map(JobOut::from)
        .collect())
}

/// A job fio ran, read from its output (JSON or text), which gives no start offset.
impl From<fio::FioJob> for JobOut {
    fn from(j: fio::FioJob) -> Self {
        JobOut {
            name: j.name,
            group: j.group,
            start_s: None,
            measured: j.measured,
        }
    }
}

/// fio's jobs read from its output (JSON or text: `import fio --jobs`, `import fio-text
/// --jobs`) as the document `bench JOBFILE` saves, with the import's `notes`.
pub fn imported_document(source_name: &str, outs: &[JobOut], notes: &[String]) -> JobFileDoc {
    // fio's output leaves flag options (group_reporting, stonewall) out of its option lists;
    // with group_reporting it prints one entry per group, so a group of one entry is reported
    // as one.
    let reporting = |g: u32| outs.iter().filter(|o| o.group == g).count() == 1;
    let started = outs
        .first()
        .map(|o| o.measured.doc.started_at.clone())
        .unwrap_or_default();
    document(source_name, "fio", &started, &reporting, outs, notes)
}

/// The run as one document: `jobs` (`{name, group, results, ...}`, each `results` shaped as
/// bench's) and `groups` (`{group, jobs, group_reporting, results}` merged as fio's
/// group_reporting does).
pub fn document(
    src: &str,
    engine: &str,
    started_at: &str,
    reporting: &dyn Fn(u32) -> bool,
    outs: &[JobOut],
    notes: &[String],
) -> JobFileDoc {
    let jobs: Vec<JobEntry> = outs
        .iter()
        .map(|o| {
            let d = &o.measured.doc;
            JobEntry {
                name: o.name.clone(),
                group: o.group,
                start_s: o.start_s,
                started_at: d.started_at.clone(),
                job: d.job.clone(),
                target: d.target.clone(),
                duration_s: d.duration_s,
                interrupted: d.interrupted,
                results: d.results.clone(),
                warnings: d.warnings.clone(),
            }
        })
        .collect();
    let mut group_ids: Vec<u32> = outs.iter().map(|o| o.group).collect();
    group_ids.dedup();
    let groups: Vec<GroupEntry> = group_ids
        .iter()
        .map(|g| {
            let members: Vec<&JobOut> = outs.iter().filter(|o| o.group == *g).collect();
            let ms: Vec<&Measured> = members.iter().map(|o| &o.measured).collect();
            let mut names: Vec<String> = members.iter().map(|o| o.name.clone()).collect();
            // fio lists each numjobs clone without group_reporting: name each job once.
            names.dedup();
            GroupEntry {
                group: *g,
                jobs: names,
                group_reporting: reporting(*g),
                results: jobset::merge_results(&ms),
            }
        })
        .collect();
    let first = outs.first().map(|o| &o.measured.doc);
    JobFileDoc {
        schema_version: SCHEMA_VERSION,
        kind: "jobfile".into(),
        jobfile: src.to_string(),
        engine: engine.to_string(),
        started_at: started_at.to_string(),
        target: first.map(|d| d.target.clone()),
        host: first.map(|d| d.host.clone()),
        duration_s: measured_seconds(outs),
        interrupted: outs.iter().any(|o| o.measured.doc.interrupted),
        jobs,
        groups,
        notes: notes.to_vec(),
    }
}

/// Seconds measured, summed over the run sets (docs/result-schema.md): the jobs of a run set
/// run at the same time, so a set counts as its longest job, once. The native engine knows each
/// job's run set (the jobs of one share its `start_s`); fio's JSON does not say when a job
/// started, and its reporting groups stand in for the sets (a stonewall, which starts a run
/// set, also starts a group; `new_group` without one splits a set into groups counted apart).
fn measured_seconds(outs: &[JobOut]) -> f64 {
    #[derive(PartialEq)]
    enum Set {
        Start(u64),
        Group(u32),
    }
    let mut sets: Vec<(Set, f64)> = Vec::new();
    for o in outs {
        let set = match o.start_s {
            Some(s) => Set::Start(s.to_bits()),
            None => Set::Group(o.group),
        };
        let d = o.measured.doc.duration_s;
        match sets.iter_mut().find(|(k, _)| *k == set) {
            Some((_, longest)) => *longest = longest.max(d),
            None => sets.push((set, d)),
        }
    }
    sets.iter().map(|(_, d)| d).sum()
}

/// A job file's run: its document (as printed and saved) and each job's result.
pub struct FileRun {
    pub doc: JobFileDoc,
    pub outs: Vec<JobOut>,
    /// A signal stopped it: the figures are partial.
    pub interrupted: bool,
}

/// `bench FILE.fio`: reads the file's jobs (as fio would when fio runs them: `lenient`), runs
/// them with `run`'s settings and returns the run's document. `misfits` are the options given
/// beside the file that cannot apply to it (its jobs take theirs from the file): refused. A run
/// that completed no I/O at all is refused ([`check_measured`]). `stop` and `progress` come
/// from the front end.
pub fn run(
    path: &Path,
    run: super::measure::RunSettings,
    misfits: &[&str],
    stop: Arc<AtomicBool>,
    progress: Option<Arc<ProgressFn>>,
) -> anyhow::Result<FileRun> {
    if !misfits.is_empty() {
        bail!(
            "{} is a fio job file: its jobs take their options from the file, so {} cannot apply; put them in its [global] section",
            path.display(),
            misfits.join(", ")
        );
    }
    let lenient = run.tool == Tool::Fio;
    let loaded = load_jobs(path, lenient, &FileOptions)?;
    let opts = RunOptions {
        stop,
        progress,
        keep_files: run.keep_files,
        destructive: run.destructive,
        layout: run.layout,
        io_log: None,
        profile: None,
        quick: false,
        // The engine's warnings name options as the file does (`set direct=1`).
        spelling: disktier_engine::Spelling::JobFile,
    };
    let started_at = disktier_engine::now_rfc3339();
    let (engine, mut outs) = measure_file(&loaded.file, path, &loaded.jobs, run.tool, &opts)?;
    check_measured(path, &mut outs)?;
    Ok(FileRun {
        doc: loaded.document(engine, &started_at, &outs),
        interrupted: outs.iter().any(|o| o.measured.doc.interrupted),
        outs,
    })
}

/// One exported run per job, labelled with the job's name and place in the file (two
/// sections, or fio's numjobs clones, may share a name).
pub fn metrics(outs: &[JobOut]) -> Vec<crate::exposition::RunMetrics> {
    use crate::exposition::{local_node, RunMetrics};
    outs.iter()
        .enumerate()
        .map(|(i, o)| {
            let d = &o.measured.doc;
            let mut m = RunMetrics::from_doc("bench", &local_node(d), d);
            m.labels.extra.push(("job", o.name.clone()));
            m.labels.extra.push(("job_index", i.to_string()));
            m
        })
        .collect()
}

/// As for one job: a run of the file that completed no I/O at all is not a result (an error,
/// [`NothingMeasured`](super::measure::NothingMeasured) when a signal stopped it); a job of
/// several that completed none gets a warning saying so.
pub fn check_measured(target: &Path, outs: &mut [JobOut]) -> anyhow::Result<()> {
    let interrupted = outs.iter().any(|o| o.measured.doc.interrupted);
    let nothing = |o: &JobOut| super::measure::completed_nothing(&o.measured.doc);
    if outs.iter().all(nothing) {
        if interrupted {
            let shown = target.display().to_string();
            return Err(super::measure::NothingMeasured::new(&shown).into());
        }
        // As for one job (`measure`), in the file's own option names (QA: "give them a
        // longer runtime" for a 4 MiB job with ramp_time=3 and runtime=1).
        let in_ramp = |o: &JobOut| super::measure::ramp_of_sized(&o.measured.doc).is_some();
        if outs.iter().all(in_ramp) {
            bail!(
                "the jobs of {} completed no I/O after their ramp_time: their I/O all fell inside the ramp, which is not measured (and nothing is saved); drop ramp_time=, or give time_based=1 with a runtime=, or a larger size=",
                target.display()
            );
        }
        bail!(
            "the jobs of {} completed no I/O: nothing was measured (and nothing is saved); give them a longer runtime= (with time_based=1), or a larger size=",
            target.display()
        );
    }
    for o in outs.iter_mut().filter(|o| nothing(o)) {
        o.measured
            .doc
            .warnings
            .push("this job completed no I/O: its figures are empty".into());
    }
    Ok(())
}

#[path = "jobfile/options.rs"]
mod options;
pub use options::{FileOptions, OptionParser};
#[path = "jobfile/render.rs"]
mod render;
#[path = "jobfile/terms.rs"]
mod terms;
pub use render::render_text;

#[cfg(test)]
#[path = "jobfile/tests.rs"]
mod tests;
