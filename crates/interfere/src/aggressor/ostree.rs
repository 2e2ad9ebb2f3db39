//! The `ostree` aggressor: an OS update unpacking many objects (the OSTree-vs-etcd issue
//! [recipe-mco-ostree-etcd]). Objects are mostly small (1-64 KiB) with a few large ones (1-16 MiB),
//! written into `objects/<xx>/` the way ostree's repository is laid out: each object goes to a
//! staging file first and is renamed into place, and the writer policy decides the fsyncs — one
//! `syncfs` at the end (ostree before ostreedev/ostree#2147), an fsync per object before its rename
//! (after #2147, which still ends with a syncfs, then nearly free), or none (`ostree pull
//! --disable-fsync`).

use super::{Rng, Tally, Ticker};
use crate::error::{InterfereError, Result};
use crate::mitigation::WriterPolicy;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
/// One object in 40 is large. With small objects averaging ~32 KiB and large ones ~8.5 MiB,
/// about 85% of the bytes are in large objects and 97.5% of the files are small, roughly the
/// mix of an OS tree (many small config and library files, a few big binaries and firmware).
const LARGE_ONE_IN: u64 = 40;

/// The size of object number `n` for a seed (the whole sequence depends only on the seed).
pub fn object_sizes(seed: u64) -> impl Iterator<Item = u64> {
    let mut rng = Rng::new(seed);
    std::iter::from_fn(move || {
        Some(if rng.next_u64().is_multiple_of(LARGE_ONE_IN) {
            rng.range(MIB, 16 * MIB)
        } else {
            rng.range(KIB, 64 * KIB)
        })
    })
}

pub fn run(
    spec: &super::AggressorSpec,
    stop: &AtomicBool,
    progress: &dyn Fn(Tally),
) -> Result<Tally> {
    let staging = spec.dir.join("staging");
    let objects = spec.dir.join("objects");
    for d in [&staging, &objects] {
        std::fs::create_dir_all(d).map_err(|e| InterfereError::io(d, e))?;
    }
    let mut data = vec![0u8; (16 * MIB) as usize];
    Rng::new(spec.seed ^ 0x5eed).fill(&mut data);
    let mut ticker = Ticker::new(progress);
    let mut written = 0u64;
    let mut n = 0u64;
    let mut made_dirs = [false; 256];
    for size in object_sizes(spec.seed) {
        if written >= spec.size || stop.load(Ordering::Relaxed) {
            break;
        }
        let size = size.min(spec.size - written);
        let tmp = staging.join(format!("{n}.tmp"));
        let bucket = (n % 256) as usize;
        let dir = objects.join(format!("{bucket:02x}"));
        if !made_dirs[bucket] {
            std::fs::create_dir_all(&dir).map_err(|e| InterfereError::io(&dir, e))?;
            made_dirs[bucket] = true;
        }
        let mut f = std::fs::File::create(&tmp).map_err(|e| InterfereError::io(&tmp, e))?;
        // Offset into the random buffer so objects differ; sizes never exceed 16 MiB.
        let start = (n as usize * 4099) % (data.len() - size as usize + 1);
        f.write_all(&data[start..start + size as usize])
            .map_err(|e| InterfereError::io(&tmp, e))?;
        if spec.policy == WriterPolicy::PerObject {
            f.sync_all().map_err(|e| InterfereError::io(&tmp, e))?;
        }
        drop(f);
        let dest = dir.join(format!("{n:08x}.file"));
        std::fs::rename(&tmp, &dest).map_err(|e| InterfereError::io(&dest, e))?;
        written += size;
        n += 1;
        ticker.tick(written, n);
    }
    ticker.report(written, n);
    if spec.policy != WriterPolicy::NoFsync && !stop.load(Ordering::Relaxed) {
        let d = std::fs::File::open(&spec.dir).map_err(|e| InterfereError::io(&spec.dir, e))?;
        crate::sys::syncfs(&d).map_err(|e| InterfereError::io(&spec.dir, e))?;
    }
    Ok(Tally {
        bytes: written,
        seconds: ticker.elapsed(),
        objects: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggressor::{AggressorKind, AggressorSpec};

    #[test]
    fn mostly_small_some_large() {
        let sizes: Vec<u64> = object_sizes(42).take(4000).collect();
        let large = sizes.iter().filter(|s| **s >= MIB).count();
        assert!(large > 40 && large < 200, "{large} large objects of 4000");
        assert!(sizes.iter().all(|s| (KIB..=16 * MIB).contains(s)));
        assert_eq!(sizes, object_sizes(42).take(4000).collect::<Vec<_>>());
    }

    #[test]
    fn writes_exactly_the_size_asked() {
        let t = tempfile::tempdir().unwrap();
        let spec = AggressorSpec {
            kind: AggressorKind::Ostree,
            dir: t.path().to_path_buf(),
            size: 3 * MIB + 17,
            policy: WriterPolicy::PerObject,
            seed: 1,
            command: None,
        };
        let reported = std::cell::Cell::new(0);
        let tally = run(&spec, &AtomicBool::new(false), &|t| reported.set(t.bytes)).unwrap();
        assert_eq!(tally.bytes, 3 * MIB + 17);
        // Reported before the final syncfs, which a cap can cut short.
        assert_eq!(reported.get(), tally.bytes);
        let on_disk: u64 = walk(&t.path().join("objects"));
        assert_eq!(on_disk, tally.bytes);
        assert!(tally.objects > 5);
    }

    fn walk(p: &std::path::Path) -> u64 {
        std::fs::read_dir(p)
            .unwrap()
            .flatten()
            .map(|e| {
                if e.file_type().unwrap().is_dir() {
                    walk(&e.path())
                } else {
                    e.metadata().unwrap().len()
                }
            })
            .sum()
    }
}
