//! Render: what the catalog says of an instance type's local disks, and a platform's rendered
//! files written into a directory, all or nothing.

use anyhow::Context;
use disktier_atomicfile::{AtomicError, Mode, Staged};
use disktier_catalog::Catalog;
use disktier_disks::render::{FileKind, LocalDisks, Rendered};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// What `cat` says of an EC2 instance type's local disks: instance store or not, and if not,
/// up to four types of the same size and cloud that have it (the `d` variant of its family
/// first, m6i.xlarge -> m6id.xlarge, then by name).
pub fn local_disks(cat: &Catalog, instance_type: &str) -> LocalDisks {
    match cat.instance(instance_type) {
        None => LocalDisks::Unknown,
        Some(i) if i.store.is_some() => LocalDisks::Yes,
        Some(i) => {
            let (family, size) = instance_type.split_once('.').unwrap_or((instance_type, ""));
            let sibling = format!("{family}d.{size}");
            let mut similar: Vec<String> = cat
                .instances
                .iter()
                .filter(|o| o.cloud == i.cloud && o.store.is_some())
                .filter(|o| o.name.split_once('.').is_some_and(|(_, s)| s == size))
                .map(|o| o.name.clone())
                .collect();
            similar.sort_by_key(|n| (*n != sibling, n.clone()));
            similar.truncate(4);
            LocalDisks::No { similar }
        }
    }
}

/// What is at `path` now: `None` when nothing is. A symbolic link (found by QA: render followed
/// one out of `-o DIR`, with or without `--overwrite`) or anything but a regular file is refused,
/// as setup refuses a linked fstab.
fn existing(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => anyhow::bail!(
            "{} is a symbolic link: render does not follow links out of the output directory; remove it, or choose another -o DIR",
            path.display()
        ),
        Ok(m) if !m.is_file() => anyhow::bail!(
            "{} is not a regular file: remove it, or choose another -o DIR",
            path.display()
        ),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    }
    let mut buf = Vec::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(Some(buf))
}

/// `content` staged beside `path` ([`disktier_atomicfile`]: `O_EXCL`, so never a link; written,
/// synced and renamed in only when every file is staged), with `path`'s mode: 0755 for a
/// script, else the mode of the file it replaces, 0644 for a new one.
fn stage(path: &Path, content: &str, executable: bool) -> anyhow::Result<Staged> {
    let mode = if executable {
        Mode::Exact(0o755)
    } else {
        Mode::KeepOr(0o644)
    };
    Staged::with(path, content.as_bytes(), mode).map_err(|e| written(path, e))
}

/// A staged file's error in render's words: `writing PATH: ...`.
fn written(path: &Path, e: AtomicError) -> anyhow::Error {
    let what = format!("writing {}", path.display());
    match e {
        AtomicError::Create { .. } => anyhow::Error::new(e).context(what),
        AtomicError::Write { source, .. } => anyhow::Error::new(source).context(what),
    }
}

/// Writes the files into `dir`. Nothing is written when any existing file differs and
/// `overwrite` is off, or when any output path is a symbolic link or not a regular file, so a
/// refused run leaves the directory as it was. The files are written in full beside their
/// places first and only then renamed into them, so a run that fails while writing (a full
/// disk) leaves every file as it was, not cut short (QA: a full filesystem left an empty unit).
/// `stop` (set by Ctrl-C, SIGTERM or SIGHUP) is looked at after each file is staged: set, the
/// staged files are removed and nothing is written (left item: a signal then left hidden
/// `.NAME.*.tmp` files in DIR); once the renames start they all finish.
pub fn write_files(
    dir: &Path,
    rendered: &Rendered,
    overwrite: bool,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<&'static str>> {
    // A file (or a link to one) at DIR: `-o FILE` said 'creating FILE: File exists (os error
    // 17)' (QA), or, for a path below a file, 'Not a directory'.
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        anyhow::bail!(
            "-o {} is not a directory: -o takes a directory to write one file per object into (created if missing); choose another -o DIR, or leave -o out to print them",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut status = Vec::new();
    for f in &rendered.files {
        let path = dir.join(&f.name);
        match existing(&path)? {
            Some(old) if old == f.content.as_bytes() => status.push("unchanged"),
            Some(_) if !overwrite => anyhow::bail!(
                "{} exists and differs from what is rendered: pass --overwrite, or choose another -o DIR",
                path.display()
            ),
            Some(_) | None => status.push("written"),
        }
    }
    let mut staged = Vec::new();
    for (f, st) in rendered.files.iter().zip(&status) {
        if *st == "unchanged" {
            continue;
        }
        let path = dir.join(&f.name);
        staged.push((stage(&path, &f.content, f.kind == FileKind::Shell)?, path));
        if stop.load(Ordering::SeqCst) {
            // Dropping `staged` removes the temporary files.
            anyhow::bail!(
                "interrupted by a signal: nothing was written to {}",
                dir.display()
            );
        }
    }
    // A rename replaces what is there: a link put there since it was checked is replaced, not
    // followed.
    for (tmp, path) in staged {
        tmp.commit().map_err(|e| written(&path, e))?;
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (session 27): `render ... -o FILE` said 'creating FILE: File exists (os error 17)'.
    #[test]
    fn an_output_that_is_a_file_is_named_as_such() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("afile");
        std::fs::write(&f, b"x").unwrap();
        let rendered = Rendered {
            platform: disktier_disks::render::Platform::Systemd,
            files: Vec::new(),
            notes: vec![],
        };
        let stop = AtomicBool::new(false);
        let e = write_files(&f, &rendered, false, &stop)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not a directory: -o takes a directory"),
            "{e}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"x");
    }

    /// A signal while the files are staged (the stop flag set) removes them and writes
    /// nothing: the directory is as it was, with no `.NAME.*.tmp` left.
    #[test]
    fn a_stop_while_staging_leaves_the_directory_as_it_was() {
        use disktier_disks::render::{Platform, RenderedFile};
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.mount"), "old\n").unwrap();
        let file = |name: &str| RenderedFile {
            name: name.into(),
            kind: FileKind::Unit,
            content: format!("{name} new\n"),
        };
        let rendered = Rendered {
            platform: Platform::Systemd,
            files: vec![file("a.mount"), file("b.service")],
            notes: vec![],
        };
        let err = write_files(d.path(), &rendered, true, &AtomicBool::new(true)).unwrap_err();
        assert!(
            err.to_string().starts_with("interrupted by a signal"),
            "{err}"
        );
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.mount"]);
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.mount")).unwrap(),
            "old\n"
        );
        // Not stopped: both written.
        let st = write_files(d.path(), &rendered, true, &AtomicBool::new(false)).unwrap();
        assert_eq!(st, ["written", "written"]);
    }

    #[test]
    fn local_disks_names_the_d_sibling_first() {
        let cat = Catalog::embedded();
        assert!(matches!(local_disks(&cat, "m6id.xlarge"), LocalDisks::Yes));
        assert!(matches!(
            local_disks(&cat, "nosuch.xlarge"),
            LocalDisks::Unknown
        ));
        let LocalDisks::No { similar } = local_disks(&cat, "m6i.xlarge") else {
            panic!("m6i.xlarge has no instance store");
        };
        assert_eq!(similar.first().map(String::as_str), Some("m6id.xlarge"));
        assert!(similar.len() <= 4);
        assert!(similar.iter().all(|n| n.ends_with(".xlarge")));
        assert!(similar[1..].windows(2).all(|w| w[0] <= w[1]));
    }
}
