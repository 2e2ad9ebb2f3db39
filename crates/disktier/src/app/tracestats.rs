//! Trace statistics: one pass over a DTTRACE file (footprint, mix, sizes, sequentiality, reuse).

use super::traceread::{open_counted, ticking, ProgressFn};
use anyhow::Context;
use disktier_cachesim::stats::{self, TraceStats};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A trace's statistics and what its header says.
pub struct Described {
    /// The trace's source, from its header.
    pub source: String,
    /// Wall-clock time of the first record (0 when unknown).
    pub start_unix_ns: u64,
    /// `truncated` is set when the trace has no trailer.
    pub stats: TraceStats,
}

/// The block size a trace is described at: a power of two (0 is not).
fn check_block(block: u64) -> anyhow::Result<()> {
    if block == 0 || !block.is_power_of_two() {
        anyhow::bail!("--block {block} is not a power of two: try 4KiB");
    }
    Ok(())
}

/// Reads the trace at `path` once and describes it at `block`-sized blocks (a power of two,
/// checked before the trace is opened); `progress`, when given, hears about once a second how
/// much of the file was read (a long trace takes minutes).
pub fn describe(
    path: &Path,
    block: u64,
    progress: Option<ProgressFn<'_>>,
) -> anyhow::Result<Described> {
    check_block(block)?;
    let read = Arc::new(AtomicU64::new(0));
    // The reader's errors name the file, so the context does not again.
    let (mut rd, total_bytes) =
        open_counted(path, Arc::clone(&read)).context("cannot read the trace")?;
    let source = rd.header().source.clone();
    let start_unix_ns = rd.header().start_unix_ns;
    let mut err = None;
    // Each volume of a multi-volume trace (Alibaba, Tencent) in its own address space: the
    // footprint and reuse count distinct data, not equal offsets on different volumes.
    let mut volumes = disktier_cachesim::trace::Volumes::new(&mut rd, &source);
    let it = std::iter::from_fn(|| match volumes.next() {
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            err = Some(e);
            None
        }
        None => None,
    });
    let mut s = ticking(progress, &read, total_bytes, || stats::compute(it, block))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_must_be_a_power_of_two_before_the_trace_is_read() {
        assert!(check_block(1).is_ok() && check_block(4096).is_ok());
        for bad in [0, 3, 4097] {
            assert_eq!(
                check_block(bad).unwrap_err().to_string(),
                format!("--block {bad} is not a power of two: try 4KiB")
            );
        }
        // The block is refused even when the trace does not exist.
        let e = describe(Path::new("/nonexistent/t.dttrace"), 3, None)
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "--block 3 is not a power of two: try 4KiB");
    }
}
