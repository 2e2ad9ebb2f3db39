//! disktier's measuring engine: a job model with fio's semantics, native I/O backends (io_uring,
//! psync, sync), latency histograms, the user recipes' benchmarks (docs/sources.md) as profiles,
//! and the versioned result document every other part of disktier reads.

pub mod advice;
pub mod error;
pub mod etcdperf;
pub mod etcdserver;
pub mod fio;
pub mod host;
pub mod job;
pub mod jobfile;
pub mod jobset;
pub mod layout;
pub mod plan;
pub mod profile;
pub mod result;
pub mod run;
pub mod smallfiles;
pub mod stats;
pub mod sync_io;
pub mod target;
pub mod types;
pub mod uring;
pub mod verdict;
pub mod worker;

pub use advice::{Advice, OptionName, Render, Spelling};
pub use error::EngineError;
pub use job::*;
pub use profile::*;
pub use result::*;
pub use run::*;
pub use target::inspect;
pub use types::*;
