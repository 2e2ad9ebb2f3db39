//! `disktier bench JOBFILE`: runs a fio job file. The engine's [`jobfile`] parser gives the
//! structure (sections, globals, run sets, groups); each job's options are read by the command
//! line's own option parser ([`JobArgs`]), so a job file accepts exactly what `bench --OPTION`
//! does. Jobs between stonewalls run at the same time; results are printed per job and per
//! reporting group and saved as one run. `--engine fio` hands the same file to fio.

use super::jobargs::JobArgs;
use super::jobargs::{EngineChoice, RunArgs};
use super::{progress, Ctx, Outcome};
use crate::app::jobfile::{fio_outs, measure_file, JobOut};
use anyhow::{bail, Context};
use clap::Parser;
use disktier_engine::fio::DocContext;
use disktier_engine::jobfile::{self, FileJob, JobFile};
use disktier_engine::jobset;
use disktier_engine::{EngineError, IoEngineKind, Job, Measured, RunOptions, SCHEMA_VERSION};
use disktier_units::fmt_ns;
use serde_json::{json, Value};
use std::path::Path;

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
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
        .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
}

/// The command line's job options, alone (one job file option at a time).
#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct Opts {
    #[command(flatten)]
    job: JobArgs,
}

/// What the file asked for beyond the options, said in the output.
const LIBAIO_NOTE: &str = "ioengine=libaio runs through io_uring with the same queue-depth semantics: iodepth I/Os in flight per job thread, submitted as iodepth_batch_submit says";

/// The job a section describes: fio's defaults (psync engine, as fio without `ioengine`), the
/// section's target, then its options read one by one by the command line's parser (so an error
/// names its line). `ioengine=libaio` becomes io_uring.
fn to_job(src: &str, fj: &FileJob, lenient: bool) -> anyhow::Result<(Job, bool)> {
    let mut job = Job {
        name: fj.name.clone(),
        target: fj
            .target
            .as_ref()
            .and_then(|t| t.value.clone())
            .unwrap_or_else(|| ".".into())
            .into(),
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
        let arg = match &value {
            Some(v) => format!("--{}={v}", o.key.replace('_', "-")),
            None => format!("--{}", o.key.replace('_', "-")),
        };
        match Opts::try_parse_from([&arg]) {
            Ok(_) => args.push(arg),
            Err(_) if lenient => {}
            Err(e) => {
                let why = e.to_string();
                let why = why
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ");
                bail!(
                    "{src} line {}: {}{}: {why}",
                    o.line,
                    o.key,
                    o.value.as_ref().map_or(String::new(), |v| format!("={v}"))
                );
            }
        }
    }
    // Each option once (the parser merged globals and the job's own), read together so that
    // options that depend on each other (fsync and fdatasync) are judged together.
    let all = Opts::try_parse_from(&args)
        .with_context(|| format!("{src} line {}: job [{}]", fj.line, fj.name))?;
    job = all.job.apply(job);
    if let Err(e) = job.validate() {
        let option = match &e {
            EngineError::BadOption { option, .. } => Some(*option),
            EngineError::DirectAlignment { option, .. } => Some(*option),
            _ => None,
        };
        let line = option.and_then(|k| fj.options.iter().find(|o| o.key == k));
        return Err(match line {
            Some(o) => anyhow::anyhow!("{src} line {}: job [{}]: {e}", o.line, fj.name),
            None => anyhow::anyhow!("{src} line {}: job [{}]: {e}", fj.line, fj.name),
        });
    }
    Ok((job, libaio))
}

/// Reads and parses the file, bounded before it is read.
fn load(path: &Path, lenient: bool) -> anyhow::Result<(String, JobFile)> {
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
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the job file {src} (it must be UTF-8 text)"))?;
    let f = if lenient {
        jobfile::parse_for_fio(&text, &src)?
    } else {
        jobfile::parse(&text, &src)?
    };
    Ok((src, f))
}

/// `bench JOBFILE`: runs the file's jobs with `run`'s engine and settings. `misfits` are the
/// options given that cannot apply to a job file (refused).
pub fn run(ctx: &Ctx, target: &Path, run: &RunArgs, misfits: &[&str]) -> anyhow::Result<Outcome> {
    if !misfits.is_empty() {
        bail!(
            "{} is a fio job file: its jobs take their options from the file, so {} cannot apply; put them in its [global] section",
            target.display(),
            misfits.join(", ")
        );
    }
    let lenient = run.engine == EngineChoice::Fio;
    let (src, file) = load(target, lenient)?;
    let mut jobs = Vec::new();
    let mut notes = Vec::new();
    for fj in &file.jobs {
        let (job, libaio) = to_job(&src, fj, lenient)?;
        if libaio && !lenient && !notes.iter().any(|n: &String| n == LIBAIO_NOTE) {
            notes.push(LIBAIO_NOTE.to_string());
        }
        jobs.push(job);
    }
    let opts = RunOptions {
        stop: progress::stop_flag(),
        progress: progress::reporter(ctx, "jobs"),
        keep_files: run.keep_files,
        destructive: run.destructive,
        layout: !run.no_layout,
        io_log: None,
        profile: None,
        quick: false,
    };
    let started_at = disktier_engine::now_rfc3339();
    let result = measure_file(&file, target, &jobs, run.engine.into(), &opts);
    progress::clear();
    let (engine, outs) = result?;
    let interrupted = outs.iter().any(|o| o.measured.doc.interrupted);
    let reporting = |g: u32| file.jobs.iter().any(|j| j.group == g && j.group_reporting);
    let value = document(&src, engine, &started_at, &reporting, &outs, &notes);
    if ctx.json() {
        super::print_json(&value)?;
    } else {
        print!("{}", render(&value));
    }
    if let Some(id) = ctx.store().save("bench", None, &value)? {
        ctx.note(format!("saved as run {id}"));
    }
    if interrupted {
        bail!("interrupted by a signal: the result above is partial (created files were removed unless --keep-files)");
    }
    Ok(Outcome::Pass)
}

/// fio's JSON of a job file (`disktier import fio --jobs`) as the document `bench JOBFILE`
/// saves.
pub fn import_document(v: &Value, source_name: &str) -> anyhow::Result<Value> {
    let outs = fio_outs(v, source_name, &DocContext::default())?;
    // fio's JSON leaves flag options (group_reporting, stonewall) out of its option lists; with
    // group_reporting it prints one entry per group, so a group of one entry is reported as one.
    let reporting = |g: u32| outs.iter().filter(|o| o.group == g).count() == 1;
    let started = outs
        .first()
        .map(|o| o.measured.doc.started_at.clone())
        .unwrap_or_default();
    Ok(document(
        source_name,
        "fio",
        &started,
        &reporting,
        &outs,
        &["imported from fio's JSON: host facts are unknown".to_string()],
    ))
}

/// Prints an imported job-file document and saves it (kind "import").
pub fn finish_import(ctx: &Ctx, value: &Value) -> anyhow::Result<()> {
    if ctx.json() {
        super::print_json(value)?;
    } else {
        print!("{}", render(value));
    }
    if let Some(id) = ctx.store().save("import", None, value)? {
        ctx.note(format!("saved as run {id}"));
    }
    Ok(())
}

/// The run as one document: `jobs` (`{name, group, results, ...}`, each `results` shaped as
/// bench's) and `groups` (`{group, jobs, group_reporting, results}` merged as fio's
/// group_reporting does).
fn document(
    src: &str,
    engine: &str,
    started_at: &str,
    reporting: &dyn Fn(u32) -> bool,
    outs: &[JobOut],
    notes: &[String],
) -> Value {
    let jobs: Vec<Value> = outs
        .iter()
        .map(|o| {
            let d = &o.measured.doc;
            json!({
                "name": o.name,
                "group": o.group,
                "start_s": o.start_s,
                "started_at": d.started_at,
                "job": d.job,
                "target": d.target,
                "duration_s": d.duration_s,
                "interrupted": d.interrupted,
                "results": d.results,
                "warnings": d.warnings,
            })
        })
        .collect();
    let mut group_ids: Vec<u32> = outs.iter().map(|o| o.group).collect();
    group_ids.dedup();
    let groups: Vec<Value> = group_ids
        .iter()
        .map(|g| {
            let members: Vec<&JobOut> = outs.iter().filter(|o| o.group == *g).collect();
            let ms: Vec<&Measured> = members.iter().map(|o| &o.measured).collect();
            let mut names: Vec<&str> = members.iter().map(|o| o.name.as_str()).collect();
            // fio lists each numjobs clone without group_reporting: name each job once.
            names.dedup();
            json!({
                "group": g,
                "jobs": names,
                "group_reporting": reporting(*g),
                "results": jobset::merge_results(&ms),
            })
        })
        .collect();
    let first = outs.first().map(|o| &o.measured.doc);
    json!({
        "schema_version": SCHEMA_VERSION,
        "kind": "jobfile",
        "jobfile": src,
        "engine": engine,
        "started_at": started_at,
        "target": first.map(|d| &d.target),
        "host": first.map(|d| &d.host),
        "duration_s": outs.iter().map(|o| o.measured.doc.duration_s).sum::<f64>(),
        "interrupted": outs.iter().any(|o| o.measured.doc.interrupted),
        "jobs": jobs,
        "groups": groups,
        "notes": notes,
    })
}

/// The document as tables: per group, one row per job and direction (or the group's merged
/// row when the file asked for group_reporting).
fn render(v: &Value) -> String {
    let mut s = format!(
        "{} (engine {})\n",
        v["jobfile"].as_str().unwrap_or(""),
        v["engine"].as_str().unwrap_or("")
    );
    for n in v["notes"].as_array().into_iter().flatten() {
        s.push_str(&format!("note: {}\n", n.as_str().unwrap_or("")));
    }
    s.push_str(&format!(
        "{:<16} {:<6} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}\n",
        "job", "", "ios", "IOPS", "MiB/s", "p50", "p99", "max"
    ));
    let rows = |s: &mut String, name: &str, r: &Value| {
        for dir in ["read", "write", "sync"] {
            let d = &r[dir];
            if !d.is_object() {
                continue;
            }
            let p = |k: &str| {
                d["lat_ns"]["percentiles"][k]
                    .as_u64()
                    .map_or("-".into(), |x| fmt_ns(x as f64))
            };
            let mib = if dir == "sync" {
                "-".to_string()
            } else {
                format!("{:.2}", d["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0)
            };
            s.push_str(&format!(
                "{:<16} {:<6} {:>9} {:>10.1} {:>9} {:>10} {:>10} {:>10}\n",
                name,
                dir,
                d["ios"].as_u64().unwrap_or(0),
                d["iops"].as_f64().unwrap_or(0.0),
                mib,
                p("50"),
                p("99"),
                fmt_ns(d["lat_ns"]["max"].as_f64().unwrap_or(0.0))
            ));
        }
    };
    for g in v["groups"].as_array().into_iter().flatten() {
        let id = g["group"].as_u64().unwrap_or(0);
        let names: Vec<&str> = g["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        s.push_str(&format!("group {id}: {}\n", names.join(", ")));
        if g["group_reporting"].as_bool() == Some(true) {
            rows(&mut s, &format!("group {id}"), &g["results"]);
            continue;
        }
        for j in v["jobs"].as_array().into_iter().flatten() {
            if j["group"].as_u64() == Some(id) {
                rows(&mut s, j["name"].as_str().unwrap_or(""), &j["results"]);
            }
        }
    }
    for j in v["jobs"].as_array().into_iter().flatten() {
        for w in j["warnings"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "warning: [{}] {}\n",
                j["name"].as_str().unwrap_or(""),
                w.as_str().unwrap_or("")
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_file_option_is_a_command_line_option() {
        for k in jobfile::JOB_OPTIONS {
            let v = match *k {
                "rw" => "write",
                "ioengine" => "psync",
                "cpus_allowed" => "0",
                "runtime" | "ramp_time" => "1s",
                "bs" | "size" | "offset" => "4k",
                "direct" | "time_based" | "norandommap" => "1",
                _ => "1",
            };
            let arg = format!("--{}={v}", k.replace('_', "-"));
            assert!(Opts::try_parse_from([&arg]).is_ok(), "{arg}");
        }
    }

    fn parse(text: &str) -> anyhow::Result<Vec<Job>> {
        let f = jobfile::parse(text, "t.fio")?;
        f.jobs
            .iter()
            .map(|j| to_job("t.fio", j, false).map(|(j, _)| j))
            .collect()
    }

    #[test]
    fn sections_become_jobs_with_fios_defaults() {
        let jobs = parse(
            "[global]\nbs=4k\nsize=1m\ndirectory=/tmp\n[a]\nrw=randread\nnumjobs=3\ndirect\n[b]\nrw=write\nfdatasync=1\nioengine=sync\nruntime=2\n",
        )
        .unwrap();
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].numjobs, 3);
        assert!(jobs[0].direct);
        assert_eq!(
            jobs[0].ioengine,
            IoEngineKind::Psync,
            "fio's default engine"
        );
        assert_eq!(jobs[0].target, Path::new("/tmp"));
        assert_eq!(jobs[1].fdatasync, 1);
        assert_eq!(jobs[1].runtime, Some(std::time::Duration::from_secs(2)));
        assert_eq!(jobs[1].size, Some(1 << 20));
    }

    #[test]
    fn libaio_runs_through_io_uring() {
        let f = jobfile::parse("[a]\nioengine=libaio\niodepth=32\n", "t").unwrap();
        let (j, libaio) = to_job("t", &f.jobs[0], false).unwrap();
        assert!(libaio);
        assert_eq!((j.ioengine, j.iodepth), (IoEngineKind::IoUring, 32));
    }

    #[test]
    fn bad_values_name_their_line() {
        let e = parse("[a]\n\nbs=4q\n").unwrap_err().to_string();
        assert!(e.starts_with("t.fio line 3: bs=4q"), "{e}");
        let e = parse("[a]\nioengine=posixaio\n").unwrap_err().to_string();
        assert!(e.contains("line 2: ioengine=posixaio"), "{e}");
        // Checked after reading: the engine's own check, with the option's line.
        let e = parse("[a]\nrw=write\nbs=2300\ndirect=1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3: job [a]") && e.contains("bs=2300"),
            "{e}"
        );
        let e = parse("[a]\nfsync=1\nfdatasync=1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3"), "{e}");
    }
}
