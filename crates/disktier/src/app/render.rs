//! Render: a platform's rendered files written into a directory, all or nothing.

use anyhow::Context;
use disktier_disks::render::{FileKind, Rendered};
use std::path::Path;

/// Writes the files into `dir`. Nothing is written when any existing file differs and
/// `overwrite` is off, so a refused run leaves the directory as it was.
pub fn write_files(
    dir: &Path,
    rendered: &Rendered,
    overwrite: bool,
) -> anyhow::Result<Vec<&'static str>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut status = Vec::new();
    for f in &rendered.files {
        let path = dir.join(&f.name);
        match std::fs::read(&path) {
            Ok(old) if old == f.content.as_bytes() => status.push("unchanged"),
            Ok(_) if !overwrite => anyhow::bail!(
                "{} exists and differs from what is rendered: pass --overwrite, or choose another -o DIR",
                path.display()
            ),
            Ok(_) => status.push("written"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => status.push("written"),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
    for (f, st) in rendered.files.iter().zip(&status) {
        if *st == "unchanged" {
            continue;
        }
        let path = dir.join(&f.name);
        std::fs::write(&path, &f.content).with_context(|| format!("writing {}", path.display()))?;
        if f.kind == FileKind::Shell {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("making {} executable", path.display()))?;
        }
    }
    Ok(status)
}
