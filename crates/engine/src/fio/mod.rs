//! fio as a second engine and as an import format: builds fio's command line from a [`Job`]
//! (same option names, `--output-format=json+`, `--group_reporting`), runs it through a
//! [`CommandRunner`], and reads fio's JSON (fio 3.x, `jobs[]` as documented in fio's HOWTO,
//! "JSON output") into the same [`RunDoc`] the native engine writes, so the two can be compared
//! number for number and judged by the same verdicts.
//!
//! Mapping (fio -> RunDoc): `jobs[i].{read,write}.total_ios/io_bytes/iops/bw_bytes` ->
//! `results.{read,write}.{ios,bytes,iops,bw_bytes}`; `clat_ns` (completion latency, what the
//! native engine times; fio's `lat_ns` adds submission) -> `lat_ns` with percentile keys
//! `"99.000000"` -> `"99"`; `sync.lat_ns` (fsync/fdatasync, whose `total_ios` fio 3.33 leaves at
//! 0, so the count is `lat_ns.N`) -> `results.sync`; `usr_cpu`/`sys_cpu` (percent of
//! `job_runtime`) -> seconds. `trim` (fio's third direction) has no place in a [`RunDoc`]: its
//! run time counts, its figures are left out and a warning says so ([`trim`]).

mod cmdline;
mod figures;
mod histogram;
mod import;
mod plausible;
mod run;
#[cfg(test)]
mod tests;
pub mod text;
pub mod textread;
mod trim;
mod value;

pub use cmdline::*;
pub use figures::check_any_figures;
pub use histogram::*;
pub use import::*;
pub use run::*;

use crate::advice::{Pass, Render, Spelling};
use disktier_cmd::CmdError;
use std::path::PathBuf;
use std::time::Duration;

/// Errors of the fio engine and of importing fio's JSON.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    /// fio could not be started or failed without printing a result.
    #[error("fio failed")]
    Run(#[from] CmdError),
    /// The text is not fio's JSON output.
    #[error(
        "{source_name} is not fio JSON output ({why}): produce it with fio --output-format=json"
    )]
    NotJson { source_name: String, why: String },
    /// The file (or standard input) could not be read.
    #[error("cannot read {source_name}: {why}")]
    Read { source_name: String, why: String },
    /// fio's JSON with an empty job list: fio ran nothing.
    #[error("{source_name} holds no jobs (its \"jobs\" list is empty): import the output of a fio run that ran at least one job")]
    NoJobs { source_name: String },
    /// The job (or, with `--jobs`, every job) read, wrote, synced and trimmed nothing: fio
    /// could not run it. A result of nothing would pass as an import that measured.
    #[error("{source_name}: job {index} ({name}) has no figures: {}", no_figures_why(*.error))]
    NoFigures {
        source_name: String,
        index: usize,
        name: String,
        /// fio's `error` for the job (0: none).
        error: u64,
    },
    /// The JSON is fio's, but lacks something a result needs.
    #[error("{source_name}: {what} is missing from fio's JSON: is it the output of fio --output-format=json (fio 3.x)?")]
    Missing { source_name: String, what: String },
    /// A figure fio cannot have written (a negative count, more IOPS than its I/Os allow,
    /// percentiles that fall): an edited or damaged file, refused rather than shown.
    #[error("{source_name}: {what}: fio does not write that, so the file was edited or damaged; import fio's own output")]
    Implausible { source_name: String, what: String },
    /// The asked-for job index is not in the file.
    #[error(
        "{source_name} has {jobs} job(s), so job {index} does not exist: pass --job 0 to {last}"
    )]
    NoSuchJob {
        source_name: String,
        jobs: usize,
        index: usize,
        last: usize,
    },
    /// fio ran past its time limit and was killed.
    #[error("{}", timeout_message(*.after, Spelling::CommandLine))]
    Timeout { after: Duration },
    /// The target's path cannot be handed to fio ([`path_problem`]).
    #[error(
        "fio cannot run on {path:?}: the path {why}: use --engine native, or a path without it"
    )]
    Path { path: PathBuf, why: &'static str },
    /// `--no-layout` could not extend a file before fio ran.
    #[error("could not extend {path} for fio (--no-layout)")]
    Layout {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// [`FioError::Timeout`]'s message, its advice in the caller's spelling.
fn timeout_message(after: Duration, sp: Spelling) -> String {
    use crate::advice::OptionName::{Runtime, Size};
    format!(
        "fio ran for more than {}s, its time limit for this job (runtime, ramp and layout plus a margin), and was killed: check that the target is not hung (dmesg), or {}",
        after.as_secs(),
        crate::advice![Pass, " a shorter ", Runtime, " or smaller ", Size].render(sp)
    )
}

/// fio's errors name no job option but in a time limit's advice (a job file's run is told
/// `set a shorter runtime=`).
impl Render for FioError {
    fn render(&self, sp: Spelling) -> String {
        match self {
            FioError::Timeout { after } => timeout_message(*after, sp),
            e => e.to_string(),
        }
    }
}

/// Why a job fio reported has no figures, and what to do, for both imports (JSON and text).
pub(crate) fn no_figures_why(error: u64) -> String {
    if error == 0 {
        "fio completed no read, write or trim in it: import the full report of a run that did I/O"
            .into()
    } else {
        format!("fio reported error {error} for it and ran no I/O: fix what fio's message for the job said and run it again")
    }
}

/// What fio is called on this machine.
pub const FIO: &str = "fio";
