//! The kubeconfig files kube would read, looked at before it reads them: kube reads each whole
//! (`std::fs::read_to_string`), so `KUBECONFIG=/dev/zero` (or `--kubeconfig` naming a device or
//! a huge file) read until memory ran out (QA on dt-s24: 1.3 GiB resident after 4 s of `fleet
//! run`, still growing). A regular file past [`MAX_BYTES`], a device, a directory or a socket
//! is refused, naming it; a FIFO (`--kubeconfig <(...)`) is left to kube, which waits for its
//! writer as any reader of a named pipe does.

use crate::error::{FleetError, Result};
use std::path::{Path, PathBuf};

/// The largest kubeconfig file read: one holding the certificates of a hundred clusters inline is
/// well under 1 MiB; the cap is the one of disktier's other files read whole (a `--catalog`
/// file, a `report --plan` file).
pub const MAX_BYTES: u64 = 16 << 20;

/// The files kube reads for these options: `--kubeconfig`, else each of `KUBECONFIG`'s
/// (colon-separated, as kube splits it), else `~/.kube/config`.
pub(super) fn paths(flag: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = flag {
        return vec![p.to_path_buf()];
    }
    match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(v) => std::env::split_paths(&v)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        None => std::env::var_os("HOME")
            .map(|h| vec![Path::new(&h).join(".kube/config")])
            .unwrap_or_default(),
    }
}

/// Refuses a file of `paths` that kube would read without end; a file that is missing or cannot
/// be looked at is left to kube, whose error says so.
pub(super) fn check(paths: &[PathBuf]) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    for path in paths {
        let Ok(m) = std::fs::metadata(path) else {
            continue;
        };
        let t = m.file_type();
        let why = if t.is_file() && m.len() > MAX_BYTES {
            format!(
                "it is {} bytes, larger than {} MiB, which no kubeconfig is",
                m.len(),
                MAX_BYTES >> 20
            )
        } else if t.is_file() || t.is_fifo() {
            continue;
        } else if t.is_dir() {
            "it is a directory".into()
        } else if t.is_char_device() || t.is_block_device() {
            "it is a device, not a file".into()
        } else {
            "it is a socket, not a file".into()
        };
        return Err(FleetError::KubeconfigFile {
            path: path.clone(),
            why,
        });
    }
    Ok(())
}
