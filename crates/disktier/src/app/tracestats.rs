//! Trace statistics: one pass over a DTTRACE file (footprint, mix, sizes, sequentiality, reuse).

use anyhow::Context;
use disktier_cachesim::stats::{self, TraceStats};
use disktier_cachesim::Reader;
use std::fs::File;
use std::path::Path;

/// A trace's statistics and what its header says.
pub struct Described {
    /// The trace's source, from its header.
    pub source: String,
    /// Wall-clock time of the first record (0 when unknown).
    pub start_unix_ns: u64,
    /// `truncated` is set when the trace has no trailer.
    pub stats: TraceStats,
}

/// Opens a trace for reading. The reader's errors name the file, so the context does not again.
pub fn open_trace(path: &Path) -> anyhow::Result<Reader<std::io::BufReader<File>>> {
    Reader::open(path).context("cannot read the trace")
}

/// Reads the trace at `path` once and describes it at `block`-sized blocks.
pub fn describe(path: &Path, block: u64) -> anyhow::Result<Described> {
    let mut rd = open_trace(path)?;
    let source = rd.header().source.clone();
    let start_unix_ns = rd.header().start_unix_ns;
    let mut err = None;
    let it = std::iter::from_fn(|| match rd.next() {
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            err = Some(e);
            None
        }
        None => None,
    });
    let mut s = stats::compute(it, block)?;
    if let Some(e) = err {
        return Err(e).with_context(|| format!("reading the trace {}", path.display()));
    }
    s.truncated = rd.truncated();
    Ok(Described {
        source,
        start_unix_ns,
        stats: s,
    })
}
