//! Measure a fio job file: every job checked first, then the run sets in order (the jobs of
//! each at the same time) with the native engine, or the whole file handed to fio.

use super::measure::Tool;
use anyhow::{bail, Context};
use disktier_engine::fio::{self, DocContext};
use disktier_engine::jobfile::JobFile;
use disktier_engine::jobset;
use disktier_engine::{Job, Measured, RunOptions};
use std::path::Path;

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
        disktier_engine::preflight(j, opts)?;
    }
    Ok(match tool {
        Tool::Native => ("disktier", run_native(file, jobs, opts)?),
        Tool::Fio => ("fio", run_fio(path)?),
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
        let ms = jobset::run_together(&these, opts)?;
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

/// Hands the file to fio (json+ output, for the groups' merged percentiles).
fn run_fio(path: &Path) -> anyhow::Result<Vec<JobOut>> {
    let runner = disktier_cmd::RealRunner;
    if !disktier_cmd::CommandRunner::has_program(&runner, fio::FIO) {
        bail!("fio was not found: install it (Debian package: fio) or use --engine native");
    }
    let cmd = disktier_cmd::Cmd::new(fio::FIO).args([
        "--output-format=json+".to_string(),
        path.display().to_string(),
    ]);
    let out = disktier_cmd::CommandRunner::run(&runner, &cmd)
        .with_context(|| format!("fio could not run the job file {}", path.display()))?;
    let v = fio::parse(&out.stdout, "fio's output")?;
    let dc = DocContext {
        host: disktier_engine::host::detect(),
        ..DocContext::default()
    };
    fio_outs(&v, "fio's output", &dc)
}

/// One output per job of fio's JSON of a job file (what fio ran, or an imported file).
pub fn fio_outs(
    v: &serde_json::Value,
    source_name: &str,
    dc: &DocContext,
) -> anyhow::Result<Vec<JobOut>> {
    Ok(fio::jobs(v, source_name, dc)?
        .into_iter()
        .map(|j| JobOut {
            name: j.name,
            group: j.group,
            start_s: None,
            measured: j.measured,
        })
        .collect())
}
