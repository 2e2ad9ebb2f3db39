//! Importing into a file (`trace import -o`): atomically through a temporary file and a
//! rename, or straight into a FIFO or a character device; stopped by a signal at the next read.

use super::{import_reader, Format, ImportReport};
use crate::TraceError;
use disktier_atomicfile::{Mode, Staged};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Imports into a file at `output`, atomically: the trace is written to a new file in the
/// output's directory (created exclusively) and renamed over `output` only once it is complete,
/// so an error or a stop leaves an existing `output` as it was (QA: Ctrl-C truncated a good
/// trace) and no half-written trace behind. An `output` that is the input file, by device and
/// inode whatever its spelling, is refused before anything is written (QA: `-o ./x` for input
/// `x` truncated the input). `stop`, set by a signal handler, ends the import within one read.
pub fn import_to_file(
    format: Format,
    input: &Path,
    output: &Path,
    strict: bool,
    stop: Arc<AtomicBool>,
) -> Result<ImportReport, TraceError> {
    if same_file(input, output) {
        return Err(TraceError::SameFile {
            input: input.to_path_buf(),
            output: output.to_path_buf(),
        });
    }
    // A FIFO or a character device (/dev/null, /dev/stdout) is written into as it is: it cannot
    // be replaced by a rename, and replacing /dev/null with a file would break the machine (QA).
    // A block device or a socket is refused.
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(t) = std::fs::metadata(output).map(|m| m.file_type()) {
            if t.is_fifo() || t.is_char_device() {
                return import_into_stream(format, input, output, strict, stop);
            }
            let what = if t.is_block_device() {
                Some("a block device")
            } else if t.is_socket() {
                Some("a socket")
            } else if t.is_dir() {
                // Found only by the rename at the end, after the whole input was read, and
                // named as 'Not a directory' (QA: `-o /var/tmp/traces/`).
                Some("a directory")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(TraceError::BadOutput {
                    output: output.to_path_buf(),
                    what,
                });
            }
        }
    }
    // A path ending in `/` names a directory, which a trace cannot be: `-o traces/` for a
    // `traces` that does not exist was read whole and then refused as 'Not a directory' (QA).
    if output.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(TraceError::BadOutput {
            output: output.to_path_buf(),
            what: "a directory's path (it ends in /)",
        });
    }
    // Through a symlink to an existing file, as writing to it would: the link stays.
    let dest = std::fs::canonicalize(output)
        .ok()
        .filter(|p| p.is_file())
        .unwrap_or_else(|| output.to_path_buf());
    // The input first: opening a FIFO waits for its writer, and a temporary file made before
    // that wait stayed behind when a second Ctrl-C ended the process in it (QA).
    let reader = StopReader::open(input, &stop)?;
    // What File::create gives (the umask applies), not a private 0600.
    let mut tmp = Staged::beside(&dest, Mode::Umask(0o666))
        .map_err(|e| TraceError::io(output, e.into_io()))?;
    let res = import_reader(
        format,
        reader,
        input,
        std::io::BufWriter::new(tmp.file()),
        strict,
    )
    .and_then(|(report, w)| {
        // Synced by the commit below.
        w.into_inner()
            .map_err(|e| TraceError::io(output, e.into_error()))?;
        Ok(report)
    })
    .map_err(|e| full(output, e));
    match res {
        // A signal that came while a read waited (a pipe, a FIFO) ends that read with the end
        // of the input, not an error: what was read is cut short all the same (QA: Ctrl-C on
        // `producer | disktier trace import ... /dev/stdin` replaced a good trace).
        Ok(report) if !stop.load(Ordering::SeqCst) => {
            tmp.commit()
                .map_err(|e| full(output, TraceError::io(output, e.into_io())))?;
            Ok(report)
        }
        // Dropping `tmp` removes it.
        _ if stop.load(Ordering::SeqCst) => Err(TraceError::Interrupted {
            output: output.to_path_buf(),
        }),
        other => other,
    }
}

/// [`import_to_file`] into a FIFO or a character device: written as it goes (nothing to
/// replace atomically); a write error, such as /dev/full's ENOSPC, is the import's error.
fn import_into_stream(
    format: Format,
    input: &Path,
    output: &Path,
    strict: bool,
    stop: Arc<AtomicBool>,
) -> Result<ImportReport, TraceError> {
    let reader = StopReader::open(input, &stop)?;
    let out = std::fs::OpenOptions::new()
        .write(true)
        .open(output)
        .map_err(|e| TraceError::io(output, e))?;
    let res = import_reader(format, reader, input, std::io::BufWriter::new(out), strict)
        .and_then(|(report, w)| {
            w.into_inner()
                .map_err(|e| TraceError::io(output, e.into_error()))?;
            Ok(report)
        })
        .map_err(|e| full(output, e));
    if stop.load(Ordering::SeqCst) {
        return Err(TraceError::Interrupted {
            output: output.to_path_buf(),
        });
    }
    res
}

/// A write error of `output` that says its filesystem or quota is full, as one that names the
/// output and the fix (QA: a full disk or `-o /dev/full` said 'I/O error on the trace stream:
/// No space left on device (os error 28)', naming neither the file nor what to do).
fn full(output: &Path, e: TraceError) -> TraceError {
    use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    match e {
        TraceError::Stream(error) | TraceError::Io { error, .. }
            if matches!(error.kind(), StorageFull | QuotaExceeded | FileTooLarge) =>
        {
            TraceError::OutputFull {
                output: output.to_path_buf(),
                error,
            }
        }
        e => e,
    }
}

/// Whether `a` and `b` are one file (device and inode, symlinks followed).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// A reader that fails once `stop` is set, so that an import of gigabytes ends at the next read.
struct StopReader<R> {
    inner: R,
    stop: Arc<AtomicBool>,
}

impl StopReader<File> {
    /// The input file, read until `stop` is set.
    fn open(input: &Path, stop: &Arc<AtomicBool>) -> Result<StopReader<File>, TraceError> {
        Ok(StopReader {
            inner: File::open(input).map_err(|e| TraceError::io(input, e))?,
            stop: Arc::clone(stop),
        })
    }
}

impl<R: Read> Read for StopReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::SeqCst) {
            // Not ErrorKind::Interrupted: readers retry that one.
            return Err(std::io::Error::other("interrupted by a signal"));
        }
        self.inner.read(buf)
    }
}
