//! Separate address spaces for the volumes of a multi-volume trace. Alibaba's and Tencent's
//! public traces hold many volumes in one file (the stream is the device or volume id), MSR's
//! the disk number and a fio iolog the file: byte 0 of one volume is not byte 0 of another,
//! so the caches, the curve and `trace stats` must not count one as a hit on the other. A
//! blkparse stream is a process on one device, left in one address space. disktier's engine
//! (`trace record`, `bench --trace`) writes one stream per file or device its jobs do I/O to
//! (jobs on one path share it; numjobs on a directory gives each job a file of its own), so its
//! streams are kept apart too.
//!
//! [`VolumeMap`] gives the first volume met the offsets it has (a one-volume trace reads
//! unchanged) and every further one its own [`VOLUME_SPAN`] of the 2^63-byte range:
//! volume `i` (in order of first appearance) is moved up by `i * VOLUME_SPAN`.

use super::{Record, MAX_END};
use crate::TraceError;
use std::collections::HashMap;

/// The bytes each volume of a multi-volume trace gets: 2^48 (256 TiB), four times the largest
/// EBS volume (io2 Block Express, 64 TiB) and above Alibaba's and Tencent CBS's volumes
/// (32 TiB at most), with room for [`MAX_VOLUMES`] of them.
pub const VOLUME_SPAN: u64 = 1 << 48;

/// The most volumes one trace may hold: each takes a [`VOLUME_SPAN`], all below [`MAX_END`]
/// (32,767).
pub const MAX_VOLUMES: u64 = MAX_END / VOLUME_SPAN;

/// Whether the streams of a trace written by `source` (its header's source) are separate
/// volumes or files rather than processes or jobs on one device.
pub fn streams_are_volumes(source: &str) -> bool {
    matches!(
        source,
        "msr" | "alibaba" | "tencent" | "fio-iolog" | "disktier-engine"
    )
}

/// Moves each volume's records into its own address space (see the module's comment).
#[derive(Debug, Default)]
pub struct VolumeMap {
    /// Off for a source whose streams share one device: records pass unchanged.
    on: bool,
    /// Each volume's index, in order of first appearance.
    index: HashMap<u32, u64>,
    /// The furthest byte the first volume reached, checked when a second one appears.
    first_end: u64,
}

impl VolumeMap {
    /// A map for a trace whose header names `source`.
    pub fn for_source(source: &str) -> VolumeMap {
        VolumeMap {
            on: streams_are_volumes(source),
            ..VolumeMap::default()
        }
    }

    /// How many volumes were met (0 when the map is off).
    pub fn volumes(&self) -> u64 {
        self.index.len() as u64
    }

    /// Moves `r` into its volume's range; an error when its volume does not fit one.
    #[inline]
    pub fn map(&mut self, r: &mut Record) -> Result<(), TraceError> {
        if !self.on {
            return Ok(());
        }
        let next = self.index.len() as u64;
        let i = *self.index.entry(r.stream).or_insert(next);
        if i == 0 {
            self.first_end = self.first_end.max(r.end());
            if self.index.len() == 1 {
                return Ok(());
            }
        } else if i == next {
            // A new volume: the first one now has to fit its span too.
            if next >= MAX_VOLUMES {
                return Err(self.error(format!(
                    "it holds more than {MAX_VOLUMES} volumes (streams), more than one trace can keep apart"
                )));
            }
            if self.first_end > VOLUME_SPAN {
                let first = self.index.iter().find(|(_, &v)| v == 0).map(|(&s, _)| s);
                return Err(self.too_far(first.unwrap_or(0), self.first_end));
            }
        }
        if r.end() > VOLUME_SPAN {
            return Err(self.too_far(r.stream, r.end()));
        }
        r.offset += i * VOLUME_SPAN;
        Ok(())
    }

    fn too_far(&self, stream: u32, end: u64) -> TraceError {
        self.error(format!(
            "volume {stream} reaches byte {end}, past the 256 TiB each volume of a multi-volume trace is given: import that volume's lines alone"
        ))
    }

    fn error(&self, why: String) -> TraceError {
        TraceError::Invalid {
            what: "multi-volume trace",
            why,
        }
    }
}

/// [`VolumeMap`] over a stream of records (a [`super::Reader`]): an error ends it.
pub struct Volumes<I> {
    inner: I,
    map: VolumeMap,
    failed: bool,
}

impl<I> Volumes<I> {
    pub fn new(inner: I, source: &str) -> Volumes<I> {
        Volumes {
            inner,
            map: VolumeMap::for_source(source),
            failed: false,
        }
    }
}

impl<I: Iterator<Item = Result<Record, TraceError>>> Iterator for Volumes<I> {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.inner.next()?.and_then(|mut r| {
            self.map.map(&mut r)?;
            Ok(r)
        });
        self.failed = item.is_err();
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Op;

    fn rec(stream: u32, offset: u64) -> Record {
        let mut r = Record::new(0, offset, 4096, Op::Read);
        r.stream = stream;
        r
    }

    #[test]
    fn each_volume_gets_its_own_range_and_the_first_keeps_its_offsets() {
        // The engine's streams are its jobs' files or devices, kept apart as volumes are.
        assert!(streams_are_volumes("disktier-engine"));
        let mut m = VolumeMap::for_source("alibaba");
        let mut got = Vec::new();
        for (s, o) in [(7, 0), (9, 0), (7, 4096), (3, 8192), (9, 4096)] {
            let mut r = rec(s, o);
            m.map(&mut r).unwrap();
            got.push(r.offset);
        }
        let span = VOLUME_SPAN;
        assert_eq!(got, [0, span, 4096, 2 * span + 8192, span + 4096]);
        assert_eq!(m.volumes(), 3);
    }

    #[test]
    fn streams_of_one_device_are_left_alone() {
        for source in ["blkparse", "test"] {
            let mut m = VolumeMap::for_source(source);
            let mut r = rec(5, 4096);
            m.map(&mut r).unwrap();
            let mut r2 = rec(6, 4096);
            m.map(&mut r2).unwrap();
            assert_eq!((r.offset, r2.offset), (4096, 4096), "{source}");
        }
    }

    #[test]
    fn a_volume_past_its_span_is_refused_naming_it() {
        // One volume: any offset (the record range check bounds it).
        let mut m = VolumeMap::for_source("msr");
        let mut far = rec(1, MAX_END - 4096);
        m.map(&mut far).unwrap();
        assert_eq!(far.offset, MAX_END - 4096);
        // A second volume appears: the first no longer fits its span.
        let e = m.map(&mut rec(2, 0)).unwrap_err().to_string();
        assert!(
            e.contains("volume 1 reaches byte") && e.contains("alone"),
            "{e}"
        );
        // A second volume's own offset past its span.
        let mut m = VolumeMap::for_source("tencent");
        m.map(&mut rec(1, 0)).unwrap();
        let e = m.map(&mut rec(2, VOLUME_SPAN)).unwrap_err().to_string();
        assert!(e.contains("volume 2 reaches byte"), "{e}");
        // The last byte of the last span is still in range.
        let mut m = VolumeMap::for_source("tencent");
        for s in 0..MAX_VOLUMES as u32 - 1 {
            m.map(&mut rec(s, 0)).unwrap();
        }
        let mut last = rec(u32::MAX, VOLUME_SPAN - 4096);
        m.map(&mut last).unwrap();
        assert_eq!(last.end(), MAX_VOLUMES * VOLUME_SPAN);
        assert!(last.check().is_ok());
        let e = m.map(&mut rec(u32::MAX - 1, 0)).unwrap_err().to_string();
        assert!(e.contains("more than 32767 volumes"), "{e}");
    }
}
