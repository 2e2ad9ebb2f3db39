//! The `bulk-seq` aggressor: one large file written sequentially in 1 MiB buffered writes (an
//! image pull, a backup). With `syncfs-at-end` it fsyncs once when done; with `per-object-fsync`
//! it fsyncs every 16 MiB (each "object" being a 16 MiB stretch, like a chunked uploader);
//! with `no-fsync` it leaves writeback to the kernel.

use super::{Rng, Tally, Ticker};
use crate::error::{InterfereError, Result};
use crate::mitigation::WriterPolicy;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

const CHUNK: usize = 1 << 20;
const OBJECT: u64 = 16 << 20;

pub fn run(
    spec: &super::AggressorSpec,
    stop: &AtomicBool,
    progress: &dyn Fn(Tally),
) -> Result<Tally> {
    let path = spec.dir.join("bulk.dat");
    let mut f = std::fs::File::create(&path).map_err(|e| InterfereError::io(&path, e))?;
    let mut buf = vec![0u8; CHUNK];
    Rng::new(spec.seed).fill(&mut buf);
    let mut ticker = Ticker::new(progress);
    let mut written = 0u64;
    let mut since_sync = 0u64;
    while written < spec.size && !stop.load(Ordering::Relaxed) {
        let n = (spec.size - written).min(CHUNK as u64) as usize;
        f.write_all(&buf[..n])
            .map_err(|e| InterfereError::io(&path, e))?;
        written += n as u64;
        since_sync += n as u64;
        if spec.policy == WriterPolicy::PerObject && since_sync >= OBJECT {
            f.sync_data().map_err(|e| InterfereError::io(&path, e))?;
            since_sync = 0;
        }
        ticker.tick(written, 1);
    }
    ticker.report(written, 1);
    if spec.policy != WriterPolicy::NoFsync && !stop.load(Ordering::Relaxed) {
        f.sync_all().map_err(|e| InterfereError::io(&path, e))?;
    }
    Ok(Tally {
        bytes: written,
        seconds: ticker.elapsed(),
        objects: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggressor::{AggressorKind, AggressorSpec};

    #[test]
    fn writes_the_size_and_stops_on_the_flag() {
        let t = tempfile::tempdir().unwrap();
        let mut spec = AggressorSpec {
            kind: AggressorKind::BulkSeq,
            dir: t.path().to_path_buf(),
            size: 5 * CHUNK as u64 + 3,
            policy: WriterPolicy::SyncfsAtEnd,
            seed: 1,
            command: None,
        };
        let reported = std::cell::Cell::new(0);
        let tally = run(&spec, &AtomicBool::new(false), &|t| reported.set(t.bytes)).unwrap();
        assert_eq!(tally.bytes, spec.size);
        // Reported before the final fsync, which a cap can cut short.
        assert_eq!(reported.get(), spec.size);
        assert_eq!(
            std::fs::metadata(t.path().join("bulk.dat")).unwrap().len(),
            spec.size
        );
        spec.size = 1 << 30;
        let tally = run(&spec, &AtomicBool::new(true), &|_| {}).unwrap();
        assert_eq!(tally.bytes, 0);
    }
}
