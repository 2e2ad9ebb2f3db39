//! Running a job: check the target, lay out files, start `numjobs` threads on the chosen
//! backend, report progress about four times a second, stop on the runtime or on the stop flag,
//! and turn the threads' accumulators into the result document. Files disktier created are
//! removed at the end (unless `keep_files`), also when the run fails or is interrupted.
//!
//! The phases, each a module: [`prepare`] (checks, files, backend), [`lay_out`] (files and
//! handles), [`dispatch`] (the threads), [`monitor`] (stop, progress, CPU time), [`collect`]
//! (the result document).

mod collect;
mod dispatch;
mod lay_out;
mod monitor;
mod openers;
mod prepare;

pub(crate) use collect::build_series;
pub use collect::now_rfc3339;
pub use prepare::{blank_device_read, preflight, validate_for_target};
// The shared types lived here before `types`; kept so that `engine::run::X` still works.
pub use crate::types::{IoLog, IoOp, IoRecord, Measured, Progress, ProgressFn, RunOptions};

use crate::error::EngineError;
use crate::job::Job;
use crate::profile::Workload;
use crate::target::Kind;
use crate::types::Created;
use prepare::Setup;

/// Runs a profile's workload.
pub fn run_workload(w: &Workload, opts: &RunOptions) -> Result<Measured, EngineError> {
    match w {
        Workload::Job(j) => run(j, opts),
        Workload::SmallFiles {
            dir,
            files,
            file_size,
        } => crate::smallfiles::run(dir, *files, *file_size, opts),
    }
}

/// Runs `job` and measures it. When the filesystem fills up the error is
/// [`EngineError::DiskFull`], and the files this run created are already removed.
pub fn run(job: &Job, opts: &RunOptions) -> Result<Measured, EngineError> {
    run_inner(job, opts).map_err(EngineError::full_disk)
}

fn run_inner(job: &Job, opts: &RunOptions) -> Result<Measured, EngineError> {
    prepare::validate_for_target(job)?;
    let started_at = now_rfc3339();
    let mut prepared = prepare::prepare(job, opts)?;
    let mut created = Created {
        paths: Vec::new(),
        keep: opts.keep_files,
    };
    let device = prepared.target.kind == Kind::Device;
    if !device {
        lay_out::lay_out_files(
            job,
            &prepared.uses,
            opts,
            &mut created,
            &mut prepared.warnings,
        )?;
    }
    let files = lay_out::open_all(job, &prepared.uses, device)?;
    let setup = Setup::new(job, &prepared.uses, prepared.target.logical_block_size);
    let io = dispatch::dispatch(
        job,
        &prepared.resolved,
        &prepared.uses,
        &files,
        &setup,
        opts,
    );
    let measured = collect::collect(job, prepared, started_at, io, &setup, opts)?;
    drop(files);
    drop(created);
    Ok(measured)
}
