//! The aggressors: bulk writers that run next to the probe. Each one writes a given number of
//! bytes into a scratch directory on the probe's filesystem and reports how far it got and how
//! long it took, because the aggressor's time is the cost side of every mitigation.
//!
//! They run in a separate process (see [`process`]) so that an I/O class or a cgroup applies to
//! the aggressor as a whole and never to the probe.

pub mod bulk_seq;
pub mod command;
pub mod ostree;
pub mod process;
pub mod rand_write;

use crate::error::{InterfereError, Result};
use crate::mitigation::WriterPolicy;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Which bulk writer runs next to the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggressorKind {
    /// An OS update unpacking many objects (the OSTree-vs-etcd issue [recipe-mco-ostree-etcd]:
    /// `ostree pull` of a 1 GB+ oscontainer).
    Ostree,
    /// One large sequential buffered write (a backup, an image pull, a log shipper).
    BulkSeq,
    /// Direct random writes at depth (a noisy database neighbour).
    RandWrite,
    /// The user's own command (`--aggressor-cmd`), see [`command`].
    Command,
}

impl AggressorKind {
    pub fn name(self) -> &'static str {
        match self {
            AggressorKind::Ostree => "ostree",
            AggressorKind::BulkSeq => "bulk-seq",
            AggressorKind::RandWrite => "rand-write",
            AggressorKind::Command => "command",
        }
    }

    pub fn from_name(s: &str) -> Result<AggressorKind> {
        match s {
            "ostree" => Ok(AggressorKind::Ostree),
            "bulk-seq" => Ok(AggressorKind::BulkSeq),
            "rand-write" => Ok(AggressorKind::RandWrite),
            "command" => Ok(AggressorKind::Command),
            _ => Err(InterfereError::UnknownAggressor(s.to_string())),
        }
    }

    /// The default amount written. Sized so that on this project's test machines (a virtio
    /// disk doing ~350 MB/s buffered, 2 cores) the aggressor keeps writing for most of a 60 s
    /// probe once the probe's fsyncs compete with it; `--aggressor-size` changes it.
    pub fn default_size(self) -> u64 {
        match self {
            AggressorKind::Ostree => 4 << 30,
            AggressorKind::BulkSeq => 8 << 30,
            AggressorKind::RandWrite => 2 << 30,
            // Whatever the command writes: nothing to size.
            AggressorKind::Command => 0,
        }
    }

    /// Whether the writer's fsync policy means anything for this aggressor: rand-write uses
    /// O_DIRECT, whose writes bypass the page cache, so there is nothing for an fsync to flush.
    pub fn has_writer_policy(self) -> bool {
        matches!(self, AggressorKind::Ostree | AggressorKind::BulkSeq)
    }

    /// Why the writer-* mitigations mean nothing for this aggressor (None when they do).
    pub fn why_no_writer_policy(self) -> Option<&'static str> {
        match self {
            AggressorKind::Ostree | AggressorKind::BulkSeq => None,
            AggressorKind::RandWrite => Some("the rand-write aggressor writes with O_DIRECT, which bypasses the page cache: there is no writeback for an fsync policy to change"),
            AggressorKind::Command => Some("the aggressor is your own command, whose fsync calls disktier cannot change: compare your command's variants instead (run interfere once per variant)"),
        }
    }
}

/// Everything an aggressor process needs to know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggressorSpec {
    pub kind: AggressorKind,
    /// A directory the aggressor creates files in (it must exist).
    pub dir: PathBuf,
    /// Bytes to write.
    pub size: u64,
    pub policy: WriterPolicy,
    /// Object sizes and contents come from this seed, so that every scenario writes the same.
    pub seed: u64,
    /// The user's command, for [`AggressorKind::Command`].
    #[serde(default)]
    pub command: Option<command::UserCommand>,
}

impl AggressorSpec {
    /// The command-line arguments of the hidden `__aggressor` subcommand for this spec.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "--kind".into(),
            self.kind.name().into(),
            "--dir".into(),
            self.dir.to_string_lossy().into_owned(),
            "--size".into(),
            self.size.to_string(),
            "--policy".into(),
            self.policy.name().into(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        if let Some(c) = &self.command {
            v.push("--program".into());
            v.push(c.program.to_string_lossy().into_owned());
            v.push("--line".into());
            v.push(c.line.clone());
            // The arguments last, after `--`, so that none is taken for an option.
            v.push("--".into());
            v.extend(c.args.iter().cloned());
        }
        v
    }
}

/// How far an aggressor got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub bytes: u64,
    pub seconds: f64,
    /// Files written (ostree objects; 1 for bulk-seq and rand-write).
    pub objects: u64,
}

/// Runs an aggressor in this process until it has written `spec.size` bytes (and synced them as
/// its policy says) or `stop` is set; `progress` is called now and then.
pub fn run(spec: &AggressorSpec, stop: &AtomicBool, progress: &dyn Fn(Tally)) -> Result<Tally> {
    if !spec.dir.is_dir() {
        return Err(InterfereError::NotADirectory(spec.dir.clone()));
    }
    match spec.kind {
        AggressorKind::Ostree => ostree::run(spec, stop, progress),
        AggressorKind::BulkSeq => bulk_seq::run(spec, stop, progress),
        AggressorKind::RandWrite => rand_write::run(spec, stop, progress),
        AggressorKind::Command => {
            let c = spec.command.as_ref().ok_or_else(|| {
                InterfereError::Aggressor("the command aggressor needs a command".into())
            })?;
            command::run(spec, c, stop, progress).map(|(t, _)| t)
        }
    }
}

/// splitmix64: a tiny seeded generator; the same seed gives the same objects in every scenario.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Calls `progress` at most every 250 ms.
pub(crate) struct Ticker<'a> {
    start: Instant,
    last: Instant,
    progress: &'a dyn Fn(Tally),
}

impl<'a> Ticker<'a> {
    pub fn new(progress: &'a dyn Fn(Tally)) -> Self {
        let now = Instant::now();
        Ticker {
            start: now,
            last: now,
            progress,
        }
    }

    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    pub fn tick(&mut self, bytes: u64, objects: u64) {
        if self.last.elapsed().as_millis() >= 250 {
            self.report(bytes, objects);
        }
    }

    /// Reports now, whenever the last report was. Called when the writes are done and the
    /// final sync starts: that sync can outlast the cap on a slow disk, and a capped or stopped
    /// writer is reported with its last progress (QA: a bulk-seq writer whose 400 MiB took
    /// 0.2 s, under one tick, was "stopped after 2.0 s having written 0 B" in its syncfs).
    pub fn report(&mut self, bytes: u64, objects: u64) {
        self.last = Instant::now();
        (self.progress)(Tally {
            bytes,
            seconds: self.elapsed(),
            objects,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_carry_the_whole_spec() {
        let s = AggressorSpec {
            kind: AggressorKind::Ostree,
            dir: "/x/y".into(),
            size: 123,
            policy: WriterPolicy::PerObject,
            seed: 7,
            command: None,
        };
        let a = s.to_args().join(" ");
        assert_eq!(
            a,
            "--kind ostree --dir /x/y --size 123 --policy per-object-fsync --seed 7"
        );
    }

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        assert_eq!(a.next_u64(), b.next_u64());
        assert!((0..1000).all(|_| (5..=9).contains(&a.range(5, 9))));
    }
}
