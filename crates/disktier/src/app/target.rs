//! What `bench` runs on: a fio job file, or a target (a file, a directory or a block device)
//! given as the positional argument or in fio's spellings (`--filename`, `--directory`).

use super::jobfile::is_job_file;
use anyhow::bail;
use std::path::{Path, PathBuf};

/// A fio job file to run, or a target to measure.
#[derive(Debug, PartialEq, Eq)]
pub enum BenchTarget {
    JobFile(PathBuf),
    Target(PathBuf),
}

/// The target `bench` was given, and whether it is a job file ([`is_job_file`]). A `*.fio`
/// that does not exist is refused by that name (QA: `bench nothere.fio` said "no workload for
/// nothere.fio").
pub fn bench_target(
    positional: Option<&Path>,
    filename: Option<&Path>,
    directory: Option<&Path>,
) -> anyhow::Result<BenchTarget> {
    let target = given_target(positional, filename, directory)?;
    if is_job_file(&target) {
        return Ok(BenchTarget::JobFile(target));
    }
    if target.extension().is_some_and(|e| e == "fio") && std::fs::symlink_metadata(&target).is_err()
    {
        bail!(
            "{} does not exist: give the path of a fio job file to run it, or a file, directory or device to bench",
            target.display()
        );
    }
    Ok(BenchTarget::Target(target))
}

/// The target: the positional one, or fio's `--filename`/`--directory`. fio's `--directory`
/// names a directory to create files in; a recipe that gives it a device (the bcache-on-EBS
/// recipe's `--directory=/dev/<device dir>`) is told what fio would do, not run on the device.
fn given_target(
    positional: Option<&Path>,
    filename: Option<&Path>,
    directory: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    for (option, p) in [("--filename", filename), ("--directory", directory)] {
        if let Some(p) = p {
            one_fio_path(option, p)?;
        }
    }
    if let Some(d) = directory {
        use std::os::unix::fs::FileTypeExt;
        // fio refuses anything but a directory ("is not a directory"): a mistyped directory
        // must not become a file measured on whatever disk holds its parent (QA).
        return match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => Ok(d.to_path_buf()),
            Ok(m) if m.file_type().is_block_device() => bail!(
                "--directory names a directory to create files in (as in fio), and {} is a block device: to measure the device itself, give it as the target (`disktier bench {} ...`) or as --filename",
                d.display(),
                d.display()
            ),
            Ok(_) => bail!(
                "--directory {} is not a directory (as fio says too): give an existing directory, or the file as --filename",
                d.display()
            ),
            Err(e) => bail!(
                "--directory {}: {e}: create the directory first (fio does not create it either)",
                d.display()
            ),
        };
    }
    // fio's --filename names a file or a device: fio fails a directory there ("Is a
    // directory"), so it is not taken as a directory target either (QA: --filename /var/tmp ran
    // in a file made there).
    if let (None, Some(f)) = (positional, filename) {
        if f.is_dir() {
            bail!(
                "--filename {} is a directory (fio refuses it too: Is a directory): give it as --directory or as the target to run in a file made there, or name a file or a block device",
                f.display()
            );
        }
    }
    match (positional, filename) {
        (Some(t), _) | (None, Some(t)) => Ok(t.to_path_buf()),
        (None, None) => {
            bail!("give a target: a file, directory or block device (or --directory / --filename)")
        }
    }
}

/// fio reads a ':' in `filename` and `directory` as a list (`--filename=/dev/sdb:/dev/sdc`:
/// both files, each a share of the size; fio's HOWTO, "filename"), which disktier does not run.
/// Taken as one path, it measured one file named `a:b` (created, then removed) instead, or said
/// the path did not exist: refused as a job file's `filename=a:b` is.
fn one_fio_path(option: &str, p: &Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if p.as_os_str().as_bytes().contains(&b':') {
        bail!(
            "{option}={}: fio reads ':' as a list of files (each given a share of the size), which disktier does not run: give one file, device or directory (for several files, a directory with --numjobs); a path whose name holds ':' can be given as the target itself (`disktier bench PATH`)",
            crate::text::printable(&p.display().to_string(), false)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_and_fios_spellings() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let t = |a: Option<&Path>, f: Option<&Path>, dir: Option<&Path>| {
            bench_target(a, f, dir).map_err(|e| e.to_string())
        };
        assert_eq!(t(Some(p), None, None), Ok(BenchTarget::Target(p.into())));
        // QA (session 29): --filename DIR ran in a file made in DIR; fio fails it (Is a
        // directory), so it is refused naming --directory.
        let e = t(None, Some(p), None).unwrap_err();
        assert!(
            e.contains("is a directory (fio refuses it too") && e.contains("--directory"),
            "{e}"
        );
        let new = p.join("new");
        assert_eq!(
            t(None, Some(&new), None),
            Ok(BenchTarget::Target(new.clone()))
        );
        assert_eq!(t(None, None, Some(p)), Ok(BenchTarget::Target(p.into())));
        assert!(t(None, None, None)
            .unwrap_err()
            .starts_with("give a target"));
        let file = p.join("f");
        std::fs::write(&file, b"x").unwrap();
        let e = t(None, None, Some(&file)).unwrap_err();
        assert!(e.contains("is not a directory (as fio says too)"), "{e}");
        let e = t(None, None, Some(&p.join("nothere"))).unwrap_err();
        assert!(e.contains("create the directory first"), "{e}");
        let e = t(Some(&p.join("nothere.fio")), None, None).unwrap_err();
        assert!(
            e.ends_with("or a file, directory or device to bench"),
            "{e}"
        );
        // QA: fio's list of files was taken as one file named `a:b` (created and measured).
        let list = format!("{}:{}", p.join("a").display(), p.join("b").display());
        for (f, d) in [
            (Some(Path::new(&list)), None),
            (None, Some(Path::new(&list))),
        ] {
            let e = t(None, f, d).unwrap_err();
            assert!(e.contains("fio reads ':' as a list of files"), "{e}");
        }
        let colon = p.join("a:b");
        assert_eq!(
            t(Some(&colon), None, None),
            Ok(BenchTarget::Target(colon.clone()))
        );
        let job = p.join("j.fio");
        std::fs::write(&job, "[a]\nrw=read\n").unwrap();
        assert_eq!(
            t(Some(&job), None, None),
            Ok(BenchTarget::JobFile(job.clone()))
        );
    }
}
