//! Where a command's output goes: its result to stdout through [`print`] (and [`outln!`]), its
//! notes and warnings to stderr through [`note`] (and [`errln!`]).
//!
//! Writing to stdout can fail two ways, and `print!` panics on both (QA: a measured run was
//! lost, and the verdict's exit code with it):
//! - **the reader went away** (`disktier check etcd DIR | head -1`, EPIPE): not an error. The
//!   rest of the output is dropped, since nobody reads it, and the command goes on to its own
//!   exit code: a check that failed still exits 1 (a broken pipe is success, but the verdict
//!   stands).
//! - **the output cannot be written** (`> /dev/full`, a full disk: ENOSPC; EIO): [`OutputError`],
//!   "cannot write the output: No space left on device", exit 2. A run is saved before its
//!   output is printed, so it is in the store either way.
//!
//! stderr carries notes and progress only: a write error there is ignored, so a closed or full
//! stderr (a dropped ssh session) never stops or kills a run.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when stdout's reader went away: later output is dropped without trying.
static READER_GONE: AtomicBool = AtomicBool::new(false);

/// stdout could not take the output (not a reader that went away: that is no error).
#[derive(Debug)]
pub struct OutputError(std::io::Error);

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write the output: {}", os_message(&self.0))
    }
}

/// The cause is quoted in the message, not chained (ARCHITECTURE.md: one or the other).
impl std::error::Error for OutputError {}

/// "No space left on device", without std's " (os error 28)".
pub fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// Writes `text`, text output meant for a reader, to stdout and flushes it, so a failure is seen
/// here and not lost at exit. Its control characters and bidi overrides, which come from job
/// names, paths, host names and stored or imported documents, are shown escaped
/// ([`crate::text::printable_output`]), so a terminal shows the data and not what an escape
/// sequence or a U+202E makes of it (QA: a fio job named `x\u{1b}]0;...\u{7}` retitled the
/// terminal through `import fio --jobs`, a U+202E in a stored target reversed `history`'s row).
pub fn print(text: &str) -> Result<(), OutputError> {
    write_bytes(crate::text::printable_output(text).as_bytes())
}

/// Writes `text` as it is: a document for a program (JSON, whose serializer escapes control
/// characters; the Prometheus exposition; YAML manifests; an HTML page), whose data must not be
/// changed on the way.
pub fn print_raw(text: &str) -> Result<(), OutputError> {
    write_bytes(text.as_bytes())
}

/// [`print_raw`] for bytes (generated completions, man pages).
pub fn write_bytes(bytes: &[u8]) -> Result<(), OutputError> {
    if READER_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => gone_or_error(e),
    }
}

/// A reader that went away is recorded and is no error; anything else is an [`OutputError`].
fn gone_or_error(e: std::io::Error) -> Result<(), OutputError> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        READER_GONE.store(true, Ordering::Relaxed);
        Ok(())
    } else {
        Err(OutputError(e))
    }
}

/// Writes a line to stderr; a failure is ignored (module doc).
pub fn note(msg: impl std::fmt::Display) {
    // Notes quote paths and names from the user and the node: their escape sequences are
    // shown, not played on the terminal, as in errors and on stdout (QA).
    let msg = crate::text::printable(&msg.to_string(), true);
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

/// `println!` that returns the write's error instead of panicking: `outln!("...")?;`.
macro_rules! outln {
    () => {
        $crate::out::print("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::print(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that ignores a write error instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::note(format_args!($($arg)*))
    };
}

/// What a `print!`/`eprintln!` panic that code outside this module still raised (a command
/// not yet ported to [`print`]) means for the exit: `Some(Ok(()))` for a stdout reader that
/// went away, `Some(Err(..))` for any other failed print, `None` for any other panic.
pub fn from_print_panic(payload: &(dyn std::any::Any + Send)) -> Option<Result<(), String>> {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())?;
    let (stream, cause) = msg
        .strip_prefix("failed printing to stdout: ")
        .map(|c| ("output", c))
        .or_else(|| {
            msg.strip_prefix("failed printing to stderr: ")
                .map(|c| ("error stream", c))
        })?;
    if stream == "output" && cause.starts_with("Broken pipe") {
        return Some(Ok(()));
    }
    let cause = match cause.rfind(" (os error ") {
        Some(i) => &cause[..i],
        None => cause,
    };
    Some(Err(format!("cannot write the {stream}: {cause}")))
}

/// Whether a panic's payload is a failed `print!`/`eprintln!` ([`from_print_panic`]).
pub fn is_print_panic(payload: &(dyn std::any::Any + Send)) -> bool {
    from_print_panic(payload).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_cause_without_the_errno() {
        let e = OutputError(std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert_eq!(
            e.to_string(),
            "cannot write the output: No space left on device"
        );
    }

    #[test]
    fn print_panics_are_told_apart() {
        let p: Box<dyn std::any::Any + Send> =
            Box::new("failed printing to stdout: Broken pipe (os error 32)".to_string());
        assert_eq!(from_print_panic(&*p), Some(Ok(())));
        let p: Box<dyn std::any::Any + Send> = Box::new(
            "failed printing to stdout: No space left on device (os error 28)".to_string(),
        );
        assert_eq!(
            from_print_panic(&*p),
            Some(Err(
                "cannot write the output: No space left on device".to_string()
            ))
        );
        let p: Box<dyn std::any::Any + Send> = Box::new("index out of bounds");
        assert_eq!(from_print_panic(&*p), None);
    }
}
