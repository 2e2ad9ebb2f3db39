//! The error type of every cachesim module: each message names the object and, where one
//! exists, the fix. The I/O errors quote the OS error (in the message, no `source()`): their
//! text is shown on its own (importers' reports, `trace record`'s disk-full check).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Quotes the OS error (no `source()`): importers and `trace record` show this text as is.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Quotes the OS error rather than wrapping it: `trace record` reads the text (a full disk).
    #[error("I/O error on the trace stream: {0}")]
    Stream(std::io::Error),
    #[error("{0}: not a disktier trace (no DTTRACE header); import other formats with `disktier trace import FORMAT FILE -o OUT`")]
    NotATrace(String),
    /// The input starts with the DTTRACE magic but its header is cut short or damaged: a
    /// trace not written in full (a copy cut short, a writer killed before its first block).
    #[error("{what}: the DTTRACE header is cut short or damaged ({why}), so the trace cannot be read: it was not written in full; record or import it again")]
    BadHeader { what: String, why: String },
    #[error("{what}: trace format version {found} is newer than this disktier understands ({supported}); upgrade disktier")]
    Version {
        what: String,
        found: u8,
        supported: u8,
    },
    #[error("trace is corrupt at record {index}: {why}")]
    Corrupt { index: u64, why: String },
    #[error(
        "{path}:{line}: malformed {format} line: {why} (drop --strict to skip malformed lines)"
    )]
    Malformed {
        path: PathBuf,
        format: &'static str,
        line: u64,
        why: String,
    },
    /// No record in the input: `why` says whether it was empty, or quotes the first
    /// malformed line's reason.
    #[error("{path}: no valid {format} records found: {why}")]
    Empty {
        path: PathBuf,
        format: &'static str,
        malformed: u64,
        first: Vec<u64>,
        why: String,
    },
    #[error("unknown trace format {0:?}: use one of blkparse, msr, alibaba, tencent, fio-iolog")]
    UnknownFormat(String),
    #[error("unknown cache policy {0:?}: use one of lru, arc, s3fifo, bcache, lvmcache")]
    UnknownPolicy(String),
    #[error("invalid {what}: {why}")]
    Invalid { what: &'static str, why: String },
    /// A comma-separated option with an empty item (`lru,,arc`).
    #[error(transparent)]
    EmptyItem(disktier_units::UnitError),
    /// The output names the input file (by device and inode: another spelling, a symlink or a
    /// hard link to it): writing it would destroy the input.
    #[error("-o {} is the input file {} (the same file under another name): write the trace somewhere else", .output.display(), .input.display())]
    SameFile { input: PathBuf, output: PathBuf },
    /// `-o` names a block device or a socket: a trace is written to a file, a FIFO or a
    /// character device (`/dev/null`, `/dev/stdout`), never over a disk.
    #[error("-o {}: {what}: a trace goes to a file (or a FIFO, or a character device such as /dev/null); pass a file's path", .output.display())]
    BadOutput { output: PathBuf, what: &'static str },
    /// The output's filesystem (or quota) is full: the import wrote part of the trace and left
    /// no file behind (a FIFO or device took what was written).
    #[error("cannot write the trace {}: {error}: free space there, or write the trace (-o) elsewhere", .output.display())]
    OutputFull {
        output: PathBuf,
        error: std::io::Error,
    },
    /// A signal stopped the import: `output` was not touched.
    #[error("interrupted by a signal: nothing was written ({} is as it was)", .output.display())]
    Interrupted { output: PathBuf },
}

impl From<std::io::Error> for TraceError {
    fn from(e: std::io::Error) -> Self {
        TraceError::Stream(e)
    }
}

impl TraceError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.into(),
            error: source,
        }
    }
}
