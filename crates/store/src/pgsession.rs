//! A PostgreSQL connection whose every operation is given up on at a deadline. The driver
//! waits for the server's answer as long as the socket stays open: a server that stops
//! answering once connected (a stopped or hung backend, which the kernel still ACKs for, so
//! no TCP keepalive or user timeout fires) or a network that goes away under an idle socket
//! held disktier forever, and a measured run with it (QA). Each operation runs on a helper
//! thread that owns the connection; one that does not finish in time leaves the connection
//! behind with that thread, and the session answers every later operation with
//! [`Failed::Abandoned`].

use postgres::Client;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// How long one operation (a statement, or the migration's transaction) may take when the
/// location sets no `query_timeout`: far longer than anything disktier asks of a working
/// server (one row, a listing, up to two documents), and longer than the 30 s `lock_timeout`
/// disktier sets, so a lock wait ends with the server's own error rather than this one.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long dropping a session waits for the connection to close (the driver sends the server
/// its Terminate message and waits for the socket to shut down).
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The deadline a location's `query_timeout=SECONDS` sets: whole seconds, as libpq's
/// `connect_timeout`; 0 is no deadline (wait as long as the server takes).
pub fn parse_limit(v: &str) -> Result<Option<Duration>, String> {
    match v.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(s) => Ok(Some(Duration::from_secs(s))),
        Err(_) => Err(format!(
            "query_timeout {v:?} is not a whole number of seconds (0 waits as long as the server takes): correct it"
        )),
    }
}

/// Why an operation did not return a result.
#[derive(Debug)]
pub enum Failed {
    /// The driver's error (the server's refusal, a broken connection).
    Driver(postgres::Error),
    /// The operation ran over the deadline (which it carries).
    TimedOut(Duration),
    /// An earlier operation ran over its deadline and kept the connection.
    Abandoned,
    /// The helper thread could not be started (or died without an answer).
    Thread(String),
}

/// A connection with a deadline per operation; `None` limit: no deadline
/// (`query_timeout=0`).
pub struct Session {
    client: Option<Client>,
    limit: Option<Duration>,
}

impl Session {
    pub fn new(client: Client, limit: Option<Duration>) -> Session {
        Session {
            client: Some(client),
            limit,
        }
    }

    /// Runs `op` on the connection, giving up when it takes longer than the deadline.
    pub fn run<T, F>(&mut self, op: F) -> Result<T, Failed>
    where
        T: Send + 'static,
        F: FnOnce(&mut Client) -> Result<T, postgres::Error> + Send + 'static,
    {
        let mut client = self.client.take().ok_or(Failed::Abandoned)?;
        let Some(limit) = self.limit else {
            let r = op(&mut client);
            self.client = Some(client);
            return r.map_err(Failed::Driver);
        };
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("pg-op".into())
            .spawn(move || {
                let r = op(&mut client);
                // The receiver is gone when the operation ran over its time.
                let _ = tx.send((client, r));
            })
            .map_err(|e| Failed::Thread(format!("cannot start the store operation: {e}")))?;
        match rx.recv_timeout(limit) {
            Ok((client, r)) => {
                self.client = Some(client);
                r.map_err(Failed::Driver)
            }
            Err(RecvTimeoutError::Timeout) => Err(Failed::TimedOut(limit)),
            Err(RecvTimeoutError::Disconnected) => Err(Failed::Thread(
                "the store operation stopped without an answer".into(),
            )),
        }
    }
}

impl Drop for Session {
    /// Closes the connection on a helper thread, waiting a little for it: the driver's close
    /// waits for the socket to shut down, which a server that stopped answering can delay.
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let (tx, rx) = channel();
            let closing = std::thread::Builder::new()
                .name("pg-close".into())
                .spawn(move || {
                    drop(client);
                    let _ = tx.send(());
                });
            if closing.is_ok() {
                let _ = rx.recv_timeout(CLOSE_WAIT);
            }
        }
    }
}
