//! Report: the HTML report of stored runs (and a plan document) written atomically to a file.

use anyhow::Context;
use disktier_catalog::plan::StoragePlan;
use disktier_store::report::{render, ReportInput, Skipped};
use disktier_store::StoredRun;
use std::path::Path;

/// Reads and checks a `disktier plan --format json` document.
pub fn read_plan(path: &Path) -> anyhow::Result<StoragePlan> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the plan {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not JSON: write it with `disktier plan --format json > {}`",
            path.display(),
            path.display()
        )
    })?;
    if !v.get("options").is_some_and(|o| o.is_array()) {
        anyhow::bail!(
            "{} has no \"options\" list: it is not a `disktier plan --format json` document",
            path.display()
        );
    }
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        Some(1) => serde_json::from_value(v).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a `disktier plan --format json` document: {e}",
                path.display()
            )
        }),
        other => anyhow::bail!(
            "{} has schema_version {other:?}; this disktier reads version 1 plans",
            path.display()
        ),
    }
}

/// Renders `runs` and writes the HTML to `path`: through a temporary file with a random name
/// created with `O_EXCL` in the same directory (never a name another user can predict and
/// plant), renamed over `path`, so a failed write never leaves half a report. A `path` that is
/// a symlink or not a regular file is refused rather than replaced.
pub fn write_report(
    runs: &[StoredRun],
    plan: Option<&StoragePlan>,
    path: &Path,
) -> anyhow::Result<()> {
    write_report_skipping(runs, &[], plan, path)
}

/// [`write_report`], naming `skipped` runs (selected, but their stored rows do not read) in the
/// report without drawing them.
pub fn write_report_skipping(
    runs: &[StoredRun],
    skipped: &[Skipped],
    plan: Option<&StoragePlan>,
    path: &Path,
) -> anyhow::Result<()> {
    write_atomic(path, render_page(runs, skipped, plan)?.as_bytes())
}

/// The report's HTML, generated now (`report -o -` prints it as it is).
pub fn render_page(
    runs: &[StoredRun],
    skipped: &[Skipped],
    plan: Option<&StoragePlan>,
) -> anyhow::Result<String> {
    let now = now_utc();
    Ok(render(&ReportInput {
        runs,
        skipped,
        plan,
        generated_at: &now,
    })?)
}

/// Writes `bytes` to `path` through a random `O_EXCL` temporary file in its directory and a
/// rename; keeps the mode of a file it replaces (0644 for a new one).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let mode = match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_symlink() => anyhow::bail!(
            "{} is a symlink: refusing to replace it; pass the path of the file itself",
            path.display()
        ),
        Ok(md) if !md.file_type().is_file() => anyhow::bail!(
            "{} exists and is not a regular file: pass another -o",
            path.display()
        ),
        Ok(md) => {
            if md.len() > 0 && !is_a_report(path) {
                anyhow::bail!(
                    "refusing to replace {}: it exists and is not a disktier report (a report \
                     starts with <!DOCTYPE html> and is titled \"disktier report\"); pass \
                     another -o, or remove that file first if it may go",
                    path.display()
                );
            }
            md.permissions().mode() & 0o777
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0o644,
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file: pass a file name", path.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .with_context(|| format!("cannot write {}", path.display()))?;
    // On failure the temporary file is removed when `tmp` drops.
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Whether the file at `path` is a report disktier wrote (so replacing it loses nothing the
/// store does not hold): its head is the page header `render` writes. Anything else at `-o`,
/// such as the result store itself or a config file, is refused rather than overwritten.
fn is_a_report(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    let head = String::from_utf8_lossy(&head);
    read.is_ok()
        && head.starts_with("<!DOCTYPE html>")
        && head.contains("<title>disktier report</title>")
}

fn now_utc() -> String {
    let t = disktier_store::model::now_rfc3339();
    format!("{} UTC", t.get(..16).unwrap_or(&t).replace('T', " "))
}
