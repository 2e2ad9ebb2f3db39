//! Lays out (or reserves) what the job's files lack, reporting progress as the "layout"
//! phase, and opens the handles the threads share.

use super::prepare::FileUse;
use crate::error::EngineError;
use crate::job::Job;
use crate::layout::{self, Laid};
use crate::plan::now_ns;
use crate::types::{Created, Progress, RunOptions};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

/// Lays out what is short, with a plain buffered handle; the files it creates go into
/// `created` (removed at the end unless kept).
pub(super) fn lay_out_files(
    job: &Job,
    uses: &[FileUse],
    opts: &RunOptions,
    created: &mut Created,
    warnings: &mut Vec<String>,
) -> Result<(), EngineError> {
    let total: u64 = uses
        .iter()
        .map(|u| (u.start + u.len).saturating_sub(u.cur_len))
        .sum();
    let mut done_before = 0u64;
    let t_layout = now_ns();
    for u in uses {
        // A file that already holds the region needs nothing laid out: it is opened read-only
        // (for the page cache to be dropped), so that a read job on a read-only filesystem
        // runs; the job's own handles are opened for what the job does ([`open_all`]).
        let nothing_to_add = u.existed && u.start + u.len <= u.cur_len;
        let mut o = std::fs::OpenOptions::new();
        o.read(true);
        if !nothing_to_add {
            o.write(true).truncate(false);
        }
        if !u.existed {
            // The file did not exist when the target was checked: create it exclusively and
            // refuse a symlink, so that nothing planted in between is followed or overwritten.
            o.create_new(true).custom_flags(libc::O_NOFOLLOW);
        }
        let f = o.open(&u.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                super::openers::existing(&u.path, 0, "appeared after disktier checked the target")
            }
            _ => EngineError::from_open(&u.path, if nothing_to_add { "read" } else { "write" }, e),
        })?;
        if !u.existed {
            // Only what this run created is removed at the end.
            created.paths.push(u.path.clone());
        }
        let mut report = |b: u64| {
            if let Some(p) = &opts.progress {
                let el = Duration::from_nanos(now_ns() - t_layout);
                let rate = (done_before + b) as f64 / el.as_secs_f64().max(1e-9);
                let left = total.saturating_sub(done_before + b) as f64;
                p(&Progress {
                    elapsed: el,
                    eta: (rate > 0.0).then(|| Duration::from_secs_f64(left / rate)),
                    iops: 0.0,
                    bw_bytes: rate,
                    p99_ns: None,
                    phase: "layout",
                });
            }
        };
        let laid = layout::lay_out(
            &f,
            &u.path,
            u.start + u.len,
            job.rw.reads(),
            opts.layout,
            &opts.stop,
            &mut report,
        )?;
        if laid == Laid::Sparse && job.rw.reads() {
            warnings.push(layout::sparse_warning(&u.path));
        }
        if !job.direct && job.rw.reads() {
            layout::drop_cache(&f);
        }
        done_before += (u.start + u.len).saturating_sub(u.cur_len);
    }
    Ok(())
}

/// Opens the job's handles: one per file (threads on the same file or device share it).
pub(super) fn open_all(
    job: &Job,
    uses: &[FileUse],
    device: bool,
) -> Result<Vec<File>, EngineError> {
    uses.iter()
        .map(|u| open_for_job(&u.path, job, device))
        .collect()
}

fn open_for_job(path: &Path, job: &Job, device: bool) -> Result<File, EngineError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    let mut flags = 0;
    if job.rw.writes() {
        o.write(true);
        if device {
            // Exclusive open: fails with EBUSY if the device is mounted or claimed by md/dm.
            flags |= libc::O_EXCL;
        }
    }
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    o.custom_flags(flags);
    let access = if job.rw.writes() { "write" } else { "read" };
    // Right after a device was written and closed, the kernel's partition rescan and udev's
    // probe can hold it exclusively for a moment: retry EBUSY for up to a second before saying
    // it is busy (a mounted device stays busy).
    let mut tries = 0;
    loop {
        match o.open(path) {
            Ok(f) => return Ok(f),
            Err(e) if device && e.raw_os_error() == Some(libc::EBUSY) && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(EngineError::from_open(path, access, e)),
        }
    }
}
