//! disktier: which disk should this data live on, is it fast enough, what does it cost, and can
//! it be set up safely? `main` only parses, dispatches and maps the outcome to an exit code.

mod app;
mod cli;
mod cmd;
mod exposition;
mod global;
pub mod image;
mod termination;
mod text;

use std::process::ExitCode;

/// Exit codes (documented in the man page): 0 ok, 1 a verdict failed, 2 usage or runtime error.
fn main() -> ExitCode {
    exit_quietly_on_broken_pipe();
    let cli = cli::parse();
    match cli::dispatch(cli) {
        Ok(cmd::Outcome::Pass) => {
            termination::write_from_env(Ok(true));
            ExitCode::from(0)
        }
        Ok(cmd::Outcome::Fail) => {
            termination::write_from_env(Ok(false));
            ExitCode::from(1)
        }
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::from(0);
            }
            // Errors quote what the user gave: escape sequences and other control characters
            // in it are shown, not played on the terminal (or in the termination log).
            let msg = text::printable(&format!("{err:#}"), true);
            termination::write_from_env(Err(&msg));
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// `disktier ... | head` closes stdout early: `println!` then panics with "Broken pipe". A reader
/// that stopped reading is not an error (STYLE.md: a broken pipe is success), so exit 0 quietly.
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
