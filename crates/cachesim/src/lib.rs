//! Block I/O traces and cache simulation: predict a cache's hit ratio, its traffic to each device
//! and the resulting performance before the cache is bought (the bcache-on-EBS recipe
//! [recipe-bcache-ebs], issue #7).
//!
//! - [`trace`]: the compact binary trace format (`DTTRACE`), a streaming writer and reader.
//! - [`import`]: streaming importers for blkparse, MSR Cambridge, Alibaba, Tencent CBS and fio
//!   iologs (gzip/zstd detected by magic bytes).
//! - [`stats`]: footprint, mix, size histogram, sequentiality and reuse of a trace.
//! - [`policy`]: cache policies (LRU, ARC, S3-FIFO, a bcache model, a dm-cache smq model).
//! - [`mrc`]: exact LRU miss-ratio curves from stack distances and SHARDS sampling.
//! - [`sim`]: replays a trace through policies and sizes and accounts bytes per device.
//! - [`sample`]: whether a SHARDS sample stands for the trace (its block accesses against N·R).
//! - [`stream`]: one pass over a trace, in chunks, for every replay and curve at once.
//! - [`device`]: device models that turn simulated traffic into predicted IOPS and latency.
//! - [`budget`]: hit-ratio curves for the planner and ranking within a monthly budget.

pub mod budget;
pub mod device;
pub mod error;
pub mod hash;
pub mod import;
pub mod mrc;
pub mod policy;
pub mod sample;
pub mod series;
pub mod sim;
pub mod simconfig;
pub mod simulator;
pub mod stats;
pub mod stream;
pub mod trace;

pub use error::TraceError;
pub use trace::{Op, Reader, Record, Writer};
