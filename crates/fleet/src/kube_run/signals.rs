//! The signals that stop a fleet run: SIGINT, SIGTERM, SIGHUP (an ssh session or terminal that
//! went away) and SIGQUIT, caught so that the run deletes what it made before it ends.

use crate::error::{FleetError, Result};
use tokio::signal::unix::{signal, SignalKind};

/// The signals that stop a run (and then its cleanup runs): SIGINT, SIGTERM, SIGHUP, SIGQUIT.
/// Once registered they stay caught for the life of the process, so a repeated one during
/// cleanup does not end it half way.
pub(super) struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

impl Signals {
    pub(super) fn new() -> Result<Signals> {
        let on = |k| signal(k).map_err(FleetError::Runtime);
        Ok(Signals {
            int: on(SignalKind::interrupt())?,
            term: on(SignalKind::terminate())?,
            hup: on(SignalKind::hangup())?,
            quit: on(SignalKind::quit())?,
        })
    }

    /// The next signal's name.
    pub(super) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "Ctrl-C",
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
            _ = self.quit.recv() => "SIGQUIT",
        }
    }
}
