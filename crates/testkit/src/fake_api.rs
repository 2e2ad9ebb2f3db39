//! A loopback HTTP/1.1 server for fakes of the Kubernetes API server, for what the real test
//! cluster does not do on demand (stop answering midway, a node going NotReady at a chosen
//! moment). A thread per connection, keep-alive, plain HTTP on 127.0.0.1; the test's handler
//! decides each reply.

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

/// `GET /version` as a 1.20 API server answers it.
pub const VERSION_1_20: &str = r#"{"major":"1","minor":"20","gitVersion":"v1.20.2","gitCommit":"0","gitTreeState":"clean","buildDate":"2021-01-13T13:20:00Z","goVersion":"go1.19","compiler":"gc","platform":"linux/amd64"}"#;

/// One request as the handler sees it.
pub struct Request {
    pub method: String,
    /// The path with its query (`/api/v1/pods?watch=true`).
    pub path: String,
    pub body: String,
}

/// What the server does with a request.
pub enum Reply {
    /// 200 with this JSON body.
    Json(String),
    /// Nothing: the connection stays open and silent (a hung server, a path that drops packets).
    Hold,
    /// A watch that is open and has nothing to say yet (200, chunked, no chunk).
    OpenWatch,
}

/// How long a held connection stays open: longer than any test.
const HOLD: Duration = Duration::from_secs(3600);

/// Starts the server; `handler` answers each request. Returns its port.
pub fn serve(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handler = std::sync::Arc::new(handler);
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let handler = handler.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut w = c;
                while let Some(req) = read_request(&mut r) {
                    match handler(&req) {
                        Reply::Json(body) => {
                            let _ = write!(
                                w,
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                        }
                        Reply::OpenWatch => {
                            let _ = write!(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
                            std::thread::sleep(HOLD);
                            return;
                        }
                        Reply::Hold => {
                            std::thread::sleep(HOLD);
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

/// The next request on a connection (its line, headers and `Content-Length` body), or `None`
/// when the client closed it.
fn read_request(r: &mut impl BufRead) -> Option<Request> {
    let mut request = String::new();
    if r.read_line(&mut request).unwrap_or(0) == 0 {
        return None;
    }
    let mut length = 0;
    let mut line = String::new();
    while r.read_line(&mut line).is_ok_and(|n| n > 2) {
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        line.clear();
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).ok()?;
    let mut words = request.split(' ');
    Some(Request {
        method: words.next().unwrap_or("").to_string(),
        path: words.next().unwrap_or("").to_string(),
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
