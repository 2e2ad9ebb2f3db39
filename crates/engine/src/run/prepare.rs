//! Before any I/O: classify the target, work out the files and regions the threads use
//! (as fio names and sizes them), refuse unsafe or impossible runs, and pick the backend.

use crate::advice;
use crate::advice::{Advice, OptionName, Pass};
use crate::error::EngineError;
use crate::job::{IoEngineKind, Job};
use crate::plan::IoPlan;
use crate::target::{self, Classified, Kind};
use crate::types::RunOptions;
use crate::uring;
use crate::worker::SyncKind;
use std::path::PathBuf;
use std::time::Duration;

/// A job checked against its target and resolved for running.
pub(super) struct Prepared {
    pub target: Classified,
    pub uses: Vec<FileUse>,
    /// The job as it runs: size resolved, backend chosen.
    pub resolved: Job,
    pub warnings: Vec<String>,
}

/// What to do when a file holds nothing from the offset on. At offset 0 the file itself is
/// empty (QA: an empty file was told "pass a smaller --offset"): it needs a size.
fn empty_region_fix(offset: u64) -> Advice {
    if offset == 0 {
        advice![
            "give ",
            OptionName::Size,
            " for the bytes to run on (an existing file also needs --destructive to be grown), or pick another target"
        ]
    } else {
        smaller_offset()
    }
}

/// "pass a smaller --offset or a larger target".
fn smaller_offset() -> Advice {
    advice![
        Pass,
        " a smaller ",
        OptionName::Offset,
        " or a larger target"
    ]
}

/// Classifies the target, plans the files, refuses what must not run and resolves the job.
pub(super) fn prepare(job: &Job, opts: &RunOptions) -> Result<Prepared, EngineError> {
    let c = target::classify(&job.target)?;
    let mut warnings = Vec::new();
    let uses = plan_files(job, &c, &mut warnings)?;
    check_target(job, &c, &uses, opts)?;
    if !job.direct && job.rw.reads() && job.time_based {
        let region: u64 = uses.iter().map(|u| u.len).sum();
        let fs = c.info.fs_type.as_deref().unwrap_or("");
        if crate::verdict::RAM_FILESYSTEMS.contains(&fs) {
            // QA: on tmpfs the advice was "pass --direct", which tmpfs refuses ("has no
            // O_DIRECT: pass --direct=false"); there is no disk behind it to reach.
            warnings.push(format!(
                "{} is on {fs}: its data is in RAM, so these reads measure memory, not a disk \
                 ({fs} has no O_DIRECT to bypass it)",
                job.target.display()
            ));
        } else if region < mem_total() {
            // In the caller's words: `pass --direct`, or `set direct=1` in a job file.
            let advice = crate::advice::Advice::new(vec![
                format!(
                    "buffered reads loop over {} MiB, which fits in RAM: after the first pass \
                     they measure the page cache, not the disk; ",
                    region >> 20
                )
                .into(),
                crate::advice::Pass,
                " ".into(),
                crate::advice::Word::On(crate::advice::OptionName::Direct),
            ]);
            warnings.push(advice.render(opts.spelling));
        }
    }
    warnings.extend(blank_read_warning(job, &c));
    let mut resolved = job.clone();
    resolved.size = Some(uses[0].len);
    resolved.ioengine = choose_engine(job, &mut warnings);
    if resolved.ioengine != IoEngineKind::IoUring && job.iodepth > 1 {
        warnings.push(format!(
            "ioengine {} issues one I/O at a time: iodepth={} has no effect (as in fio)",
            resolved.ioengine, job.iodepth
        ));
    }
    Ok(Prepared {
        target: c,
        uses,
        resolved,
        warnings,
    })
}

/// What every thread of the run shares, worked out once from the job.
pub(super) struct Setup {
    pub numjobs: usize,
    pub ramp_ns: u64,
    pub runtime_ns: Option<u64>,
    pub sync_kind: SyncKind,
    /// Sync after this many writes; 0 when the job does not sync.
    pub sync_every: u32,
    /// Buffer alignment.
    pub align: usize,
    /// I/Os the whole run issues when it is not time based (for the ETA).
    pub total_ios: Option<u64>,
}

impl Setup {
    pub fn new(job: &Job, uses: &[FileUse], logical_block_size: Option<u64>) -> Setup {
        let align = logical_block_size.unwrap_or(512).max(512) as usize;
        let align = if job.direct { align.max(4096) } else { 4096 };
        let n = job.numjobs as usize;
        let sync_kind = if job.fdatasync > 0 {
            SyncKind::Fdatasync
        } else if job.fsync > 0 {
            SyncKind::Fsync
        } else {
            SyncKind::None
        };
        let sync_every = if job.rw.writes() {
            job.fdatasync.max(job.fsync)
        } else {
            0
        };
        let total_ios: Option<u64> = if job.time_based {
            None
        } else {
            Some(
                (0..n)
                    .map(|j| {
                        let u = &uses[j.min(uses.len() - 1)];
                        IoPlan::new(job, j as u32, u.start, u.len).blocks()
                    })
                    .sum(),
            )
        };
        Setup {
            numjobs: n,
            ramp_ns: nanos(job.ramp_time),
            runtime_ns: job.runtime.map(nanos),
            sync_kind,
            sync_every,
            align,
            total_ios,
        }
    }
}

/// `d` in nanoseconds, at most u64::MAX (584 years): `as u64` kept the low 64 bits, so a
/// runtime of 18446744074 s (2^64 ns and a little) ran 0.29 s and was reported complete, and a
/// ramp_time of 18446744073 s overflowed `t0 + ramp` (QA: a panic in a debug build).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One file (or device) the job threads use, and its region.
#[derive(Debug)]
pub(super) struct FileUse {
    pub path: PathBuf,
    /// Start and length of the region each thread works on.
    pub start: u64,
    pub len: u64,
    pub existed: bool,
    pub cur_len: u64,
}

/// Works out the files, regions and checks for `job` on the classified target.
fn plan_files(
    job: &Job,
    c: &Classified,
    warnings: &mut Vec<String>,
) -> Result<Vec<FileUse>, EngineError> {
    let t = &job.target;
    let uses = match c.kind {
        Kind::Directory => {
            let size = job
                .size
                .ok_or_else(|| EngineError::DirectorySizeRequired { path: t.clone() })?;
            (0..job.numjobs)
                .map(|j| {
                    let path = t.join(format!("{}.{j}.0", job.name));
                    let cur = std::fs::metadata(&path).ok();
                    if let Some(m) = &cur {
                        if !m.is_file() {
                            return Err(EngineError::WrongKind {
                                path: path.clone(),
                                is: "directory or special file",
                                wanted: "disktier creates its per-job files there".into(),
                                fix: advice!["remove it or ", Pass, " another ", OptionName::Name],
                            });
                        }
                    }
                    Ok(FileUse {
                        path,
                        start: job.offset,
                        len: size,
                        existed: cur.is_some(),
                        cur_len: cur.map_or(0, |m| m.len()),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        }
        Kind::File | Kind::NewFile => {
            let len = match job.size {
                Some(s) => s,
                None if c.kind == Kind::File && c.len > job.offset => c.len - job.offset,
                None if c.kind == Kind::File => {
                    return Err(EngineError::EmptyRegion {
                        path: t.clone(),
                        len: c.len,
                        offset: job.offset,
                        fix: empty_region_fix(job.offset),
                    })
                }
                None => return Err(EngineError::SizeRequired { path: t.clone() }),
            };
            vec![FileUse {
                path: t.clone(),
                start: job.offset,
                len,
                existed: c.kind == Kind::File,
                cur_len: c.len,
            }]
        }
        Kind::Device => {
            if job.offset >= c.len {
                return Err(EngineError::EmptyRegion {
                    path: t.clone(),
                    len: c.len,
                    offset: job.offset,
                    fix: smaller_offset(),
                });
            }
            let avail = c.len - job.offset;
            let len = match job.size {
                Some(s) if s > avail => {
                    warnings.push(format!(
                        "size {} is larger than {} from offset {}: using the {} bytes there are",
                        s,
                        t.display(),
                        job.offset,
                        avail
                    ));
                    avail
                }
                Some(s) => s,
                None => avail,
            };
            vec![FileUse {
                path: t.clone(),
                start: job.offset,
                len,
                existed: true,
                cur_len: c.len,
            }]
        }
    };
    for u in &uses {
        // A file's offsets end at i64::MAX (pwrite, lseek): an --offset near u64::MAX overflowed
        // `start + len` in the checks below (QA: a panic in a debug build, a wrong check in a
        // release one).
        if u.start
            .checked_add(u.len)
            .is_none_or(|end| end > i64::MAX as u64)
        {
            return Err(EngineError::BadOption {
                option: "offset",
                value: job.offset.to_string(),
                fix: advice![
                    format!(
                        "the region ends past the largest file offset ({} bytes) with size {}: ",
                        i64::MAX,
                        u.len
                    ),
                    Pass,
                    " a smaller ",
                    OptionName::Offset,
                    " or ",
                    OptionName::Size
                ],
            });
        }
        if u.len < job.bs {
            return Err(EngineError::BadOption {
                option: "size",
                value: u.len.to_string(),
                fix: advice![
                    format!(
                        "{} has room for less than one block of bs={}: ",
                        u.path.display(),
                        job.bs
                    ),
                    Pass,
                    " a larger ",
                    OptionName::Size,
                    " or smaller ",
                    OptionName::Bs
                ],
            });
        }
    }
    Ok(uses)
}

/// The checks that refuse a run before anything is written.
fn check_target(
    job: &Job,
    c: &Classified,
    uses: &[FileUse],
    opts: &RunOptions,
) -> Result<(), EngineError> {
    let t = &job.target;
    if c.kind == Kind::Device {
        if let Some(p) = opts
            .profile
            .as_deref()
            .and_then(crate::profile::Profile::from_name)
        {
            if p.needs_filesystem() {
                return Err(EngineError::WrongKind {
                    path: job.target.clone(),
                    is: "block device",
                    wanted: format!("the {p} profile measures a filesystem"),
                    fix: "pass a directory on the filesystem to test (e.g. /var/lib/etcd)".into(),
                });
            }
        }
    }
    if job.direct {
        target::check_direct(c, t)?;
        if let Some(lbs) = c.logical_block_size.filter(|l| *l > 512) {
            for (option, value) in [("bs", job.bs), ("offset", job.offset)] {
                if value % lbs != 0 {
                    return Err(EngineError::DirectAlignment {
                        path: t.clone(),
                        option,
                        value,
                        align: lbs,
                    });
                }
            }
        }
    }
    // A read-only filesystem or device: refused before any I/O when the job would write, or
    // create or lay out a file to read.
    let lays_out = c.kind != Kind::Device
        && uses
            .iter()
            .any(|u| !u.existed || u.start + u.len > u.cur_len);
    if job.rw.writes() || lays_out {
        c.check_writable(t)?;
    }
    if c.kind == Kind::Device && job.rw.writes() && !opts.destructive {
        if let Some(why) = target::device_in_use(t, c)? {
            return Err(target::refuse(t, why));
        }
    }
    if c.kind != Kind::Device && !opts.destructive {
        for u in uses.iter().filter(|u| u.existed) {
            let why = if job.rw.writes() {
                Some("is a write job")
            } else if u.start + u.len > u.cur_len {
                Some("read job would have to grow it (layout)")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(super::openers::existing(&u.path, u.cur_len, why));
            }
        }
    }
    if c.kind != Kind::Device {
        let need: u64 = uses
            .iter()
            .map(|u| (u.start + u.len).saturating_sub(u.cur_len))
            .sum();
        c.check_room(t, need, |_| {
            advice![
                Pass,
                " a smaller ",
                OptionName::Size,
                " or pick another target"
            ]
        })?;
    }
    Ok(())
}

/// [`Job::validate`], with one question put to the target first: a job whose `bs` or `offset`
/// O_DIRECT cannot take is refused as such only where the target takes O_DIRECT at all. QA on
/// dt-s23: `check etcd /dev/shm/x --direct` said "bs=2300 is not a multiple of 512 bytes ...: use
/// a multiple of 512 or pass --direct=false", and once --bs 4k was given, "/dev/shm/x is on
/// tmpfs, which has no O_DIRECT: pass --direct=false": the fix that works came second.
pub fn validate_for_target(job: &Job) -> Result<(), EngineError> {
    match job.validate() {
        Err(e @ EngineError::DirectAlignment { .. }) => {
            // A target that cannot be classified yet (a path to create) keeps the alignment
            // error; classify's own errors are the run's to report, after the job is valid.
            if let Ok(c) = target::classify(&job.target) {
                target::check_direct(&c, &job.target)?;
            }
            Err(e)
        }
        r => r,
    }
}

/// The checks [`run`](super::run) makes before any I/O, for callers that hand the job to another engine
/// (`--engine fio`): validates the job, classifies the target and refuses unsafe or impossible
/// runs with the same errors. Returns the target's description for the result document.
/// (Added by the engine-CLI area.)
pub fn preflight(job: &Job, opts: &RunOptions) -> Result<crate::result::TargetInfo, EngineError> {
    validate_for_target(job)?;
    let c = target::classify(&job.target)?;
    let uses = plan_files(job, &c, &mut Vec::new())?;
    check_target(job, &c, &uses, opts)?;
    Ok(c.info)
}

/// Picks the backend, falling back to psync (with a warning) when io_uring is unavailable.
fn choose_engine(job: &Job, warnings: &mut Vec<String>) -> IoEngineKind {
    let probe = if job.ioengine == IoEngineKind::IoUring {
        uring::probe()
    } else {
        Ok(())
    };
    engine_after_probe(job, probe, warnings)
}

/// [`choose_engine`] given the probe's answer (separate so that the fallback can be tested
/// without turning io_uring off on the machine).
fn engine_after_probe(
    job: &Job,
    probe: Result<(), String>,
    warnings: &mut Vec<String>,
) -> IoEngineKind {
    if job.ioengine == IoEngineKind::IoUring {
        if let Err(why) = probe {
            warnings.push(format!(
                "io_uring is unavailable ({why}): fell back to psync, where iodepth has no effect"
            ));
            return IoEngineKind::Psync;
        }
    }
    job.ioengine
}

/// [`unwritten_read_warning`] for a job that reads a blank device (no filesystem, partition
/// table, mount or holder), whichever tool runs it.
pub fn blank_device_read(job: &Job) -> Option<String> {
    blank_read_warning(job, &target::classify(&job.target).ok()?)
}

fn blank_read_warning(job: &Job, c: &Classified) -> Option<String> {
    (c.kind == Kind::Device
        && job.rw.reads()
        && matches!(target::device_in_use(&job.target, c), Ok(None)))
    .then(|| unwritten_read_warning(&job.target))
}

/// Reads straight from a device read whatever its blocks hold, and blocks never written may
/// not be on the media at all (QA, the bcache-on-EBS recipe's read test on a blank device: 5x
/// the figure of the same image with a filesystem on it). disktier lays out files before it
/// reads them but never writes a device it was asked to read, so for a blank device it says so.
fn unwritten_read_warning(device: &std::path::Path) -> String {
    format!(
        "{} holds no filesystem, partition table or mount, and reads see its blocks as they are: blocks never written (a new volume, a trimmed SSD, a sparse or thin backing) can be answered without touching the media, so a blank device reads faster than one with data; write the range first (`disktier bench {} --rw write --bs 1M`) for figures of data",
        device.display(),
        device.display()
    )
}

/// RAM size from /proc/meminfo (`MemTotal`, in KiB); 0 when unknown.
fn mem_total() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
#[path = "prepare_tests.rs"]
mod tests;
