//! The errors `disktier interfere` can meet, each naming the object it concerns and, where one
//! exists, the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InterfereError {
    /// `known`: the mitigations there are, as the user types them.
    #[error("unknown mitigation {name:?}: use one of {}", .known.join(", "))]
    UnknownMitigation { name: String, known: Vec<String> },

    #[error("unknown aggressor {0:?}: use ostree, bulk-seq or rand-write")]
    UnknownAggressor(String),

    #[error("{0} is not a directory: pass the directory the data lives in (e.g. /var/lib/etcd)")]
    NotADirectory(PathBuf),

    #[error("{0} is on a read-only filesystem: interfere writes its probe's and the aggressor's files there; remount it read-write (mount -o remount,rw) or pass a directory on a writable filesystem on the disk to measure")]
    ReadOnly(PathBuf),

    #[error("cannot find the block device behind {path}: {why}")]
    NoDevice { path: PathBuf, why: String },

    /// Quotes the OS error (no `source()`): the journal lists failed undos as text.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },

    #[error("{what} failed for pid {pid}")]
    Syscall {
        what: &'static str,
        pid: i32,
        #[source]
        source: std::io::Error,
    },

    #[error("the scheduler of {device} reads {got:?} after writing {wanted:?}: the kernel did not accept it")]
    SchedulerNotApplied {
        device: String,
        wanted: String,
        got: String,
    },

    #[error(
        "{file} reads {got:?} after writing {wanted:?}: the kernel did not accept the setting"
    )]
    NotApplied {
        file: PathBuf,
        wanted: String,
        got: String,
    },

    #[error(
        "another disktier interfere (pid {pid}) is running and holds {lock}: wait for it to finish"
    )]
    Busy { pid: String, lock: PathBuf },

    #[error("the run directory {path} is not safe for the interfere journal ({why}): remove it, or set DISKTIER_RUN_DIR (or XDG_RUNTIME_DIR) to a directory only you can write")]
    UnsafeRunDir { path: PathBuf, why: String },

    #[error("the journal {path} is unreadable or not disktier's ({why}): nothing in it was replayed; inspect it, undo by hand what disktier changed, then delete it")]
    BadJournal { path: PathBuf, why: String },

    #[error("--aggressor-cmd {line:?}: {why}")]
    BadCommand { line: String, why: String },
    #[error("the aggressor process failed: {0}")]
    Aggressor(String),

    #[error("the probe failed")]
    Probe(#[from] disktier_engine::EngineError),

    /// Too little room for what the scenarios write: `writes` names it, `fix` what to change
    /// (`--aggressor-size` only where the built-in writer's size decides it).
    #[error("{path} has {} free, but {writes}: {fix}", human_bytes(*free))]
    NoSpace {
        path: PathBuf,
        free: u64,
        writes: String,
        fix: &'static str,
    },

    /// DIR is on a kernel pseudo-filesystem: no disk is behind it to write or to measure.
    #[error("{path} is on {fs}, a kernel pseudo-filesystem that no disk is behind: pass the directory etcd's data lives in (e.g. /var/lib/etcd), on the disk to measure")]
    PseudoFs { path: PathBuf, fs: String },

    #[error("{0}")]
    BadInput(String),
}

/// A byte count as a person reads it, `32 MiB`, with the exact count beside it when the unit
/// rounds it (`31.98 MiB (33538048 bytes)`): the free-space refusal printed raw bytes alone
/// (QA: "has 33538048 bytes free, but the aggressor writes 16777216").
pub fn human_bytes(b: u64) -> String {
    let h = disktier_units::Bytes(b).to_string();
    if h.contains('.') {
        format!("{h} ({b} bytes)")
    } else {
        h
    }
}

impl InterfereError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        InterfereError::Io {
            path: path.into(),
            error: source,
        }
    }
}

pub type Result<T, E = InterfereError> = std::result::Result<T, E>;
