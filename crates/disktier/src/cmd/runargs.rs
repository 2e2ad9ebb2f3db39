//! The options of a run that are not job options (`--engine`, `--keep-files`, `--destructive`,
//! `--no-layout`), shared by `bench`, `check` and `trace record`. The job options themselves are
//! [`crate::app::job::JobOptions`].

use crate::app::measure::{RunSettings, Tool};

value_enum! {
    /// Which engine runs the job.
    pub enum EngineChoice => Tool {
        /// disktier's own engine (io_uring, psync, sync), with HDR latency histograms.
        Native,
        /// fio, with its JSON read into the same result document (fio must be installed).
        Fio,
    }
}

/// Options of a run that are not job options: shared by `bench`, `check` and `trace record`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Engine that runs the job.
    #[arg(long, value_enum, default_value_t = EngineChoice::Native)]
    pub engine: EngineChoice,
    /// Keep the files disktier created (they are removed after the run by default).
    #[arg(long)]
    pub keep_files: bool,
    /// Allow write jobs on a block device that holds a filesystem, a partition table, a mount or
    /// holders. Its data will be destroyed.
    #[arg(long)]
    pub destructive: bool,
    /// Do not fill files with data before read jobs: a short file is only extended (sparse),
    /// with either engine. A file that already has the size is never rewritten.
    #[arg(long)]
    pub no_layout: bool,
}

impl From<&RunArgs> for RunSettings {
    fn from(a: &RunArgs) -> RunSettings {
        RunSettings {
            tool: a.engine.into(),
            keep_files: a.keep_files,
            destructive: a.destructive,
            layout: !a.no_layout,
        }
    }
}
