//! disktier's measuring engine: a job model with fio's semantics, native I/O backends
//! (io_uring, psync, sync), latency histograms, the seeds' benchmarks as profiles, and the
//! versioned result document every other part of disktier reads.

pub mod host;
pub mod result;

pub use result::*;
