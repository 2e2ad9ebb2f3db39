//! Errors of reading fio's text report.

/// Why fio's text report could not be imported; each says what to do.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FioTextError {
    #[error("cannot read {source_name}: {why}")]
    Read { source_name: String, why: String },
    #[error("{source_name} is not text ({why}): pass fio's --output-format=normal output as fio printed it")]
    NotText { source_name: String, why: String },
    #[error("{source_name} is larger than {max_mib} MiB, more than fio's text report of any run: pass the file fio printed (`fio ... > FILE`)")]
    TooLarge { source_name: String, max_mib: usize },
    #[error("{source_name} has no job report line (\"NAME: (groupid=0, jobs=1): err= 0: ...\"): it is not fio's text output (for fio's JSON use `disktier import fio`, for the etcd-perf image's `disktier import etcd-perf`)")]
    NoJobs { source_name: String },
    #[error("{source_name} holds more than {max} job reports: run fio with --group_reporting, or split the file")]
    TooManyJobs { source_name: String, max: usize },
    #[error("{source_name}: job {index} ({name}) has no \"read:\", \"write:\" or \"trim:\" line: {}", if *.error == 0 { "import the full report fio printed, not an excerpt".to_string() } else { crate::fio::no_figures_why(*.error) })]
    NoFigures {
        source_name: String,
        index: usize,
        name: String,
        /// fio's `err=` for the job (0: none).
        error: u64,
    },
    #[error("{source_name}: {what}: fio does not write that, so the file was edited or damaged; import fio's own output")]
    Implausible { source_name: String, what: String },
    #[error("{source_name} has {jobs} job report(s), so job {index} does not exist: pass --job 0 to {last}")]
    NoSuchJob {
        source_name: String,
        jobs: usize,
        index: usize,
        last: usize,
    },
}
