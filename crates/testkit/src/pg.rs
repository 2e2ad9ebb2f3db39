//! The test PostgreSQL server (`DISKTIER_TEST_PG`, which scripts/test.sh starts and exports):
//! a fresh schema a test works in, so tests stay independent.

/// A schema of its own on the test server: a client connected there, the schema's name, and a
/// store URL whose search_path points into it.
pub struct Schema {
    pub client: postgres::Client,
    pub name: String,
    pub url: String,
}

/// Creates the schema `{prefix}_{id}` (`-` in `id` made `_`) on the test server; `None` (the
/// test is skipped, or fails under CI) where `DISKTIER_TEST_PG` is not set.
pub fn fresh_schema(prefix: &str, id: &str) -> Option<Schema> {
    if !crate::require(
        std::env::var("DISKTIER_TEST_PG").is_ok(),
        "a PostgreSQL server in DISKTIER_TEST_PG (scripts/test.sh starts one)",
    ) {
        return None;
    }
    let base = std::env::var("DISKTIER_TEST_PG").unwrap();
    let name = format!("{prefix}_{}", id.replace('-', "_"));
    let mut client = postgres::Client::connect(&base, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("CREATE SCHEMA {name}"))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
    Some(Schema { client, name, url })
}

/// A TCP proxy in front of the test server that forwards until it is told to stall, then
/// holds every connection open and forwards nothing more either way: what a client sees of a
/// server that stopped answering (a stopped backend, which the kernel still ACKs for) or of a
/// network that went away. Dropping it closes the connections it holds.
pub struct StallingProxy {
    pub addr: std::net::SocketAddr,
    state: std::sync::Arc<ProxyState>,
}

struct ProxyState {
    /// Stall once the client sends bytes holding this (or at once, when set with no bytes).
    trigger: std::sync::Mutex<Option<Vec<u8>>>,
    /// Stall once the server sends bytes holding this, without passing them on.
    answer_trigger: std::sync::Mutex<Option<Vec<u8>>>,
    stalled: std::sync::atomic::AtomicBool,
    done: std::sync::atomic::AtomicBool,
}

impl StallingProxy {
    /// A proxy to the test server's `host:port`; `None` where `DISKTIER_TEST_PG` is not set
    /// or names no TCP host.
    pub fn to_test_server() -> Option<StallingProxy> {
        let base: postgres::Config = std::env::var("DISKTIER_TEST_PG").ok()?.parse().ok()?;
        let postgres::config::Host::Tcp(host) = base.get_hosts().first()? else {
            return None;
        };
        let port = base.get_ports().first().copied().unwrap_or(5432);
        let server = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .ok()?
            .next()?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = std::sync::Arc::new(ProxyState {
            trigger: std::sync::Mutex::new(None),
            answer_trigger: std::sync::Mutex::new(None),
            stalled: false.into(),
            done: false.into(),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if st.done.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(upstream) = std::net::TcpStream::connect(server) else {
                    continue;
                };
                let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                let (s1, s2) = (st.clone(), st.clone());
                std::thread::spawn(move || forward(client, upstream, &s1, true));
                std::thread::spawn(move || forward(u2, c2, &s2, false));
            }
        });
        Some(StallingProxy { addr, state })
    }

    /// Stalls every connection now.
    pub fn stall(&self) {
        self.state
            .stalled
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stalls when a client sends bytes holding `pattern` (a statement's text: the test's
    /// location must set sslmode=disable), that message included.
    pub fn stall_on(&self, pattern: &str) {
        *self.state.trigger.lock().unwrap() = Some(pattern.as_bytes().to_vec());
    }

    /// Stalls when the server sends bytes holding `pattern`, those not passed on: the server
    /// did the work (`INSERT 0 1`: the row is committed) and the client never hears of it.
    pub fn stall_on_answer(&self, pattern: &str) {
        *self.state.answer_trigger.lock().unwrap() = Some(pattern.as_bytes().to_vec());
    }

    /// A `key=value` location of the test server's database through this proxy, in `schema`,
    /// without TLS, with `extra` appended.
    pub fn location(&self, schema: &str, extra: &str) -> String {
        let base: postgres::Config = std::env::var("DISKTIER_TEST_PG").unwrap().parse().unwrap();
        format!(
            "host={} port={} dbname={} user={} sslmode=disable options='-c search_path={schema}' {extra}",
            self.addr.ip(),
            self.addr.port(),
            base.get_dbname().unwrap_or("postgres"),
            base.get_user().unwrap_or("postgres"),
        )
    }
}

impl Drop for StallingProxy {
    fn drop(&mut self) {
        self.state
            .done
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread so that it sees `done`.
        let _ = std::net::TcpStream::connect(self.addr);
    }
}

/// Copies `from` to `to` until the proxy stalls (then holds both open until it is dropped).
fn forward(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    st: &ProxyState,
    from_client: bool,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering::SeqCst;
    let mut buf = vec![0u8; 64 << 10];
    let _ = from.set_read_timeout(Some(std::time::Duration::from_millis(100)));
    while !st.done.load(SeqCst) {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(_) => return,
        };
        let trigger = if from_client {
            st.trigger.lock().unwrap()
        } else {
            st.answer_trigger.lock().unwrap()
        };
        if let Some(p) = trigger.as_deref() {
            if buf[..n].windows(p.len()).any(|w| w == p) {
                st.stalled.store(true, SeqCst);
            }
        }
        drop(trigger);
        if st.stalled.load(SeqCst) {
            while !st.done.load(SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            return;
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}
