//! `disktier interfere`: what a bulk writer (an OS update, an image pull, a noisy neighbour) does
//! to etcd's fdatasync latency on the same disk, and which mitigation helps — the I/O class of the
//! writer, the device's scheduler, a cgroup weight, throttle or latency target, or the writer's own
//! fsync policy — at what cost to the writer's time (the OSTree-vs-etcd issue
//! [recipe-mco-ostree-etcd]).
//!
//! Every mitigation is applied for real and read back; every change to the system is journaled
//! before it is made and undone afterwards, also after a crash (see [`journal`]).

pub mod aggressor;
pub mod cgroup;
pub mod error;
pub mod ioprio;
pub mod journal;
pub mod mitigation;
pub mod report;
pub mod scenario;
pub mod scheduler;
mod sys;

pub use aggressor::{AggressorKind, AggressorSpec};
pub use error::InterfereError;
pub use mitigation::{Combo, Mitigation, WriterPolicy};
pub use report::{render_text, InterfereDoc, Scenario, ScenarioVerdict};
pub use scenario::{restore, run, Applied, Config};
