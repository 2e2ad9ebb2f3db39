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

/// What [`within`] got of `f`.
pub enum Within<T> {
    /// `f` returned in time.
    Done(T),
    /// `f` ran over the limit; its thread is left to finish alone.
    TimedOut,
    /// The thread could not be started, or ended without an answer.
    Failed(String),
}

/// Runs `f` on a thread named `name` and waits at most `limit` for it: the one mechanism behind
/// the connection's, each operation's and the close's deadlines.
pub fn within<T, F>(name: &str, limit: Duration, f: F) -> Within<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = channel();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            // The receiver is gone when `f` ran over its time: nothing waits for it.
            let _ = tx.send(f());
        });
    if let Err(e) = spawned {
        return Within::Failed(format!("cannot start the {name} thread: {e}"));
    }
    match rx.recv_timeout(limit) {
        Ok(v) => Within::Done(v),
        Err(RecvTimeoutError::Timeout) => Within::TimedOut,
        Err(RecvTimeoutError::Disconnected) => {
            Within::Failed(format!("the {name} thread stopped without an answer"))
        }
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
        let done = within("pg-op", limit, move || {
            let r = op(&mut client);
            (client, r)
        });
        match done {
            Within::Done((client, r)) => {
                self.client = Some(client);
                r.map_err(Failed::Driver)
            }
            Within::TimedOut => Err(Failed::TimedOut(limit)),
            Within::Failed(why) => Err(Failed::Thread(why)),
        }
    }
}

impl Drop for Session {
    /// Closes the connection on a helper thread, waiting a little for it: the driver's close
    /// waits for the socket to shut down, which a server that stopped answering can delay.
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = within("pg-close", CLOSE_WAIT, move || drop(client));
        }
    }
}
