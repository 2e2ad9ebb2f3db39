//! disktier: which disk should this data live on, is it fast enough, what does it cost, and can
//! it be set up safely? `main` only parses, dispatches and maps the outcome to an exit code.

// First: its `outln!`/`errln!` macros are used by the modules below.
#[macro_use]
mod out;

mod app;
mod cli;
mod cmd;
mod completion_words;
mod exposition;
mod global;
pub mod image;
mod numbers;
mod termination;
mod text;

use std::process::ExitCode;

/// Exit codes (documented in the man page): 0 ok, 1 a verdict failed, 2 usage or runtime error.
/// A reader of stdout that went away changes none of them (`out`): a failed check piped into
/// `head` still exits 1.
fn main() -> ExitCode {
    quiet_print_panics();
    let cli = cli::parse();
    let outcome =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cli::dispatch(cli))) {
            Ok(r) => r,
            // A `print!` that failed in a command not yet writing through `out` (the panic unwound
            // through the command's cleanup guards): the same exit as `out` gives.
            Err(payload) => match out::from_print_panic(&*payload) {
                Some(Ok(())) => Ok(cmd::Outcome::Pass),
                Some(Err(msg)) => Err(anyhow::anyhow!(msg)),
                None => std::panic::resume_unwind(payload),
            },
        };
    match outcome {
        Ok(cmd::Outcome::Pass) => {
            termination::write_from_env(Ok(true));
            ExitCode::from(0)
        }
        Ok(cmd::Outcome::Fail) => {
            termination::write_from_env(Ok(false));
            ExitCode::from(1)
        }
        Err(err) => {
            // Errors quote what the user gave: escape sequences and other control characters
            // in it are shown, not played on the terminal (or in the termination log), and a
            // huge argument is not echoed whole.
            let msg = text::shorten_words(&text::printable(&format!("{err:#}"), true));
            termination::write_from_env(Err(&msg));
            errln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// A failed `print!` on the main thread is turned into an exit code by `main` (above), so its
/// panic message and backtrace are not shown; every other panic is reported as usual.
fn quiet_print_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let main_thread = std::thread::current().name() == Some("main");
        if main_thread && out::is_print_panic(info.payload()) {
            return;
        }
        default(info);
    }));
}
