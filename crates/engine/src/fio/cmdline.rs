//! fio's command line for a [`Job`]: the same option names, `--output-format=json+`,
//! `--group_reporting`, and the job's files as fio names them.

use super::FIO;
use crate::job::Job;
use disktier_cmd::Cmd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Escapes a path for fio's `filename`/`directory` options, in which ':' separates several
/// files (fio's HOWTO, "filename": "escape the colon with a backslash"); a backslash itself is
/// not special to fio, so only ':' is escaped.
pub fn escape_path(p: &Path) -> String {
    p.display().to_string().replace(':', "\\:")
}

/// Why fio cannot be given `p` as its target, if it cannot: fio copies the path unescaped into
/// its JSON output, where a newline or other control character makes the result unreadable
/// (after fio has run the whole job), and disktier passes fio its options as text, which a
/// path that is not UTF-8 is not.
pub fn path_problem(p: &Path) -> Option<&'static str> {
    match p.to_str() {
        None => Some("is not UTF-8, and fio's options are passed to it as text"),
        Some(s) if s.contains(['\n', '\r']) => Some(
            "holds a newline, which fio copies unescaped into its JSON output, so its result could not be read",
        ),
        Some(s) if s.chars().any(char::is_control) => Some(
            "holds a control character, which fio copies unescaped into its JSON output, so its result could not be read",
        ),
        Some(_) => None,
    }
}

/// How to format a duration for fio's time options (fio accepts `us`, `ms`, `s` suffixes).
fn fio_time(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_micros().max(1))
    }
}

/// The fio command that runs `job`. `target_is_dir` chooses `--directory` (per-job files
/// `<name>.<jobnum>.0` created inside, as fio names them) over `--filename` (a file or device).
pub fn command(job: &Job, target_is_dir: bool) -> Cmd {
    let mut args: Vec<String> = vec![
        format!("--name={}", job.name),
        if target_is_dir {
            format!("--directory={}", escape_path(&job.target))
        } else {
            format!("--filename={}", escape_path(&job.target))
        },
        format!("--rw={}", job.rw.name()),
        format!("--bs={}", job.bs),
        format!("--ioengine={}", job.ioengine.name()),
        format!("--iodepth={}", job.iodepth),
        format!("--numjobs={}", job.numjobs),
        format!("--direct={}", u8::from(job.direct)),
    ];
    if job.rw.mixed() {
        args.push(format!("--rwmixread={}", job.rwmixread));
    }
    if let Some(s) = job.size {
        args.push(format!("--size={s}"));
    }
    if job.offset > 0 {
        args.push(format!("--offset={}", job.offset));
    }
    if job.fsync > 0 {
        args.push(format!("--fsync={}", job.fsync));
    }
    if job.fdatasync > 0 {
        args.push(format!("--fdatasync={}", job.fdatasync));
    }
    if let Some(r) = job.runtime {
        args.push(format!("--runtime={}", fio_time(r)));
    }
    if job.time_based {
        args.push("--time_based=1".into());
    }
    if !job.ramp_time.is_zero() {
        args.push(format!("--ramp_time={}", fio_time(job.ramp_time)));
    }
    args.push(format!("--randseed={}", job.randseed));
    if job.norandommap {
        args.push("--norandommap=1".into());
    }
    if !job.cpus_allowed.is_empty() {
        args.push(format!("--cpus_allowed={}", job.cpus_allowed));
    }
    if job.iodepth_batch_submit != 1 {
        args.push(format!(
            "--iodepth_batch_submit={}",
            job.iodepth_batch_submit
        ));
    }
    args.push("--group_reporting=1".into());
    // json+ adds each latency series' histogram bins, from which the p99's confidence interval
    // is read as from the native engine's histogram instead of interpolated.
    args.push("--output-format=json+".into());
    Cmd::new(FIO).args(args)
}

/// The per-job files fio creates in a directory target: `<name>.<jobnum>.0` (fio's default
/// `filename_format`, `$jobname.$jobnum.$filenum`).
pub fn job_files(job: &Job) -> Vec<PathBuf> {
    (0..job.numjobs)
        .map(|n| job.target.join(format!("{}.{n}.0", job.name)))
        .collect()
}

/// The files fio will make for `job` that do not exist yet, to remove afterwards (fio leaves
/// them; the native engine removes its own): [`job_files`] in a directory target, else the
/// target itself when missing.
pub fn files_to_make(job: &Job, is_dir: bool) -> Vec<PathBuf> {
    let files = if is_dir {
        job_files(job)
    } else {
        vec![job.target.clone()]
    };
    files.into_iter().filter(|p| !p.exists()).collect()
}
