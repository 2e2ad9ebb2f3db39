//! Judge: the verdicts a result document carries. The etcd verdict (fdatasync p99 against a
//! threshold, with its 95 % confidence interval on the first verdict, and etcd's IOPS guidance)
//! is the one every measuring command gives.

use disktier_engine::etcdserver::EtcdServerMeasured;
use disktier_engine::verdict::{self, EtcdCriteria, EtcdVerdict, VerdictError};
use disktier_engine::{DirStats, RunDoc};
use serde::Serialize;

/// A verdict on one run, as the result document carries it (`verdicts[]`). Named apart from
/// interfere's verdict on a scenario (`disktier_interfere::ScenarioVerdict`), which judges a
/// different thing.
pub use disktier_engine::Verdict as RunVerdict;

/// What to run instead when a runtime cap cut a run short ([`EtcdVerdict::cut_short`]):
/// `--quick`'s own cap, or a `--runtime` the user gave.
pub fn cut_short_fix(quick_cap: bool) -> &'static str {
    if quick_cap {
        "run without --quick (or with a longer --runtime) to measure the whole job"
    } else {
        "run with a longer --runtime (or none) to measure the whole job"
    }
}

/// Judges `doc` as an etcd disk and writes the verdicts into it; returns the whole verdict
/// (pass, the lines a user reads, the interval). `cut_short`: a runtime cap ended the run
/// before its size (`super::check::cut_short`), so a verdict its interval does not settle is
/// inconclusive, with this fix.
pub fn etcd(
    doc: &mut RunDoc,
    sync_hist: Option<&hdrhistogram::Histogram<u64>>,
    criteria: EtcdCriteria,
    cut_short: Option<&str>,
) -> Result<EtcdVerdict, VerdictError> {
    let mut v = verdict::etcd(doc, sync_hist, criteria)?;
    if let Some(fix) = cut_short {
        v.cut_short(fix);
    }
    doc.verdicts = v.verdicts.clone();
    // On tmpfs the verdict's arithmetic stands, but the JSON says too that it is no disk.
    if let Some(c) = &v.caveat {
        if !doc.warnings.contains(c) {
            doc.warnings.push(c.clone());
        }
    }
    Ok(v)
}

/// etcd's guidance for the backend commit p99 (etcd docs, "Hardware recommendations" /
/// etcd-io/website "tuning": `etcd_disk_backend_commit_duration_seconds` p99 under 25 ms).
const BACKEND_COMMIT_NS: u64 = 25_000_000;

/// The etcd-server model's run, judged: the WAL fdatasync p99 against the threshold and the
/// backend commit p99 against etcd's 25 ms.
pub struct EtcdServerJudged {
    /// The run, with the two verdicts.
    pub doc: RunDoc,
    /// bbolt's commits and their fdatasyncs.
    pub commit: DirStats,
    pub db_sync: DirStats,
    /// Both verdicts passed.
    pub pass: bool,
    /// What a user reads after the table.
    pub lines: Vec<String>,
    /// The same fsyncs and commits as etcd's own histograms would report them.
    pub as_etcd: AsEtcdReports,
}

/// The p99s a dashboard over etcd's metrics (`histogram_quantile(0.99, ...)` of
/// `etcd_disk_wal_fsync_duration_seconds` and `etcd_disk_backend_commit_duration_seconds`)
/// would show for the model's fsyncs and commits: counted into etcd's buckets (1 ms doubling
/// to 8.192 s) and interpolated inside one, as Prometheus does. This, not the exact p99, is
/// the figure to hold against etcd's own metrics; the verdict stays on the exact p99.
#[derive(Debug, Clone, Serialize)]
pub struct AsEtcdReports {
    pub wal_fsync_p99_ns: Option<u64>,
    /// The bucket the WAL p99 was interpolated in (`[lower, upper]`; upper is null for `+Inf`).
    pub wal_fsync_bucket_ns: Option<[Option<u64>; 2]>,
    pub backend_commit_p99_ns: Option<u64>,
    pub backend_commit_bucket_ns: Option<[Option<u64>; 2]>,
}

impl AsEtcdReports {
    fn of(wal: &hdrhistogram::Histogram<u64>, commit: &hdrhistogram::Histogram<u64>) -> Self {
        let q = |h: &hdrhistogram::Histogram<u64>| {
            disktier_etcdmetrics::as_etcd_disk_histogram(
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value())),
            )
            .quantile(0.99)
        };
        let ns = |s: f64| (s.is_finite()).then(|| (s * 1e9).round() as u64);
        let (w, c) = (q(wal), q(commit));
        AsEtcdReports {
            wal_fsync_p99_ns: w.and_then(|q| ns(q.value)),
            wal_fsync_bucket_ns: w.map(|q| [ns(q.lower), ns(q.upper)]),
            backend_commit_p99_ns: c.and_then(|q| ns(q.value)),
            backend_commit_bucket_ns: c.map(|q| [ns(q.lower), ns(q.upper)]),
        }
    }

    /// The line a user reads, when there were fsyncs.
    fn line(&self) -> Option<String> {
        let f = |v: Option<u64>| v.map(|v| disktier_units::fmt_ns(v as f64));
        Some(format!(
            "as etcd's own histograms would report them (1 ms buckets doubling, interpolated as histogram_quantile does): WAL fsync p99 {}, backend commit p99 {}; compare these with etcd's metrics, not the exact p99s",
            f(self.wal_fsync_p99_ns)?,
            f(self.backend_commit_p99_ns).unwrap_or_else(|| "-".into())
        ))
    }
}

/// The document `check etcd --profile etcd-server` prints and saves: the run document with the
/// backend's figures beside it.
#[derive(Serialize)]
pub struct EtcdServerDoc<'a> {
    #[serde(flatten)]
    pub run: &'a RunDoc,
    pub backend_commit: &'a DirStats,
    pub backend_fdatasync: &'a DirStats,
    pub as_etcd_reports: &'a AsEtcdReports,
}

impl EtcdServerJudged {
    pub fn document(&self) -> EtcdServerDoc<'_> {
        EtcdServerDoc {
            run: &self.doc,
            backend_commit: &self.commit,
            backend_fdatasync: &self.db_sync,
            as_etcd_reports: &self.as_etcd,
        }
    }
}

/// Judges the etcd-server model's run. The model offers a fixed rate of proposals: etcd's
/// "N fdatasync'd writes/s" guidance (a back-to-back figure) does not apply to it.
pub fn etcd_server(
    m: EtcdServerMeasured,
    criteria: EtcdCriteria,
) -> Result<EtcdServerJudged, VerdictError> {
    let mut doc = m.doc;
    let v = verdict::etcd(&doc, Some(&m.wal_sync_hist), criteria)?;
    if let Some(c) = &v.caveat {
        doc.warnings.push(c.clone());
    }
    // The document's p99 (kept within the exact max), so the verdict and the figure agree.
    let commit_p99 = m
        .commit
        .lat_ns
        .p(99.0)
        .unwrap_or_else(|| m.commit_hist.value_at_quantile(0.99));
    let commit_pass = commit_p99 < BACKEND_COMMIT_NS;
    let commit_line = format!(
        "backend commit p99 is {} over {} commits: {} etcd's guidance of 25 ms",
        disktier_units::fmt_ns(commit_p99 as f64),
        m.commit.ios,
        if commit_pass { "within" } else { "above" }
    );
    // The p99 and the stall counts (informational, as in check etcd); not etcd's IOPS guidance,
    // which the model's fixed 150 puts/s does not test.
    doc.verdicts = v
        .verdicts
        .iter()
        .filter(|x| !x.name.starts_with("etcd-iops"))
        .cloned()
        .collect();
    doc.verdicts.push(RunVerdict {
        name: "etcd-backend-commit".into(),
        metric: "backend_commit.p99".into(),
        value: commit_p99 as f64,
        threshold: BACKEND_COMMIT_NS as f64,
        pass: commit_pass,
        message: commit_line.clone(),
        ci95: None,
        inconclusive: false,
    });
    let mut lines = vec!["WAL fdatasync (etcd_disk_wal_fsync_duration_seconds):".to_string()];
    lines.extend(
        v.lines
            .iter()
            .filter(|l| !l.contains("fdatasync'd writes/s"))
            .cloned(),
    );
    lines.push(commit_line);
    let as_etcd = AsEtcdReports::of(&m.wal_sync_hist, &m.commit_hist);
    lines.extend(as_etcd.line());
    Ok(EtcdServerJudged {
        doc,
        commit: m.commit,
        db_sync: m.db_sync,
        pass: v.pass && commit_pass,
        lines,
        as_etcd,
    })
}

/// Running etcd members judged from their own `/metrics`: when the sampling started, and the
/// judgement.
pub struct EtcdLive {
    pub started_at: String,
    /// The seconds between the two scrapes, or None: since each member started.
    pub interval_s: Option<u64>,
    pub judged: disktier_etcdmetrics::Judged,
}

impl EtcdLive {
    /// The `check etcd --metrics --format json` document.
    pub fn document(&self) -> serde_json::Value {
        let j = &self.judged;
        serde_json::json!({
            "schema_version": super::SCHEMA_VERSION,
            "kind": "etcd-metrics",
            "started_at": self.started_at,
            "host": disktier_engine::host::detect(),
            "interval_s": self.interval_s,
            "pass": j.pass,
            "members": j.members,
            "verdicts": j.verdicts,
        })
    }
}

/// Scrapes every member's `/metrics` (through `tls`) and judges what they measured: since each
/// member started, or, with `interval_s`, in the seconds between two scrapes. `note` receives
/// what the user waits for, and `waiting` each second of the interval still to go. `stop` (the
/// signal flag) ends the wait within a second with an error: nothing is judged from one scrape.
pub fn etcd_live(
    urls: &[String],
    tls: &disktier_etcdmetrics::TlsFiles,
    interval_s: Option<u64>,
    stop: &std::sync::atomic::AtomicBool,
    note: &dyn Fn(&str),
    waiting: &dyn Fn(u64),
) -> anyhow::Result<EtcdLive> {
    use disktier_etcdmetrics::{judge, member_urls, redacted, Client, Scrape};
    let urls = &member_urls(urls)?;
    let client = Client::new(tls)?;
    // Members are named without the password of a URL's user information (QA: it was in every
    // verdict line and in the JSON document); it is still sent.
    let scrape_all = || -> anyhow::Result<Vec<(String, Scrape)>> {
        urls.iter()
            .map(|url| {
                let shown = redacted(url);
                let body = get_or_stop(&client, url, &shown, stop)?;
                Ok((shown.clone(), Scrape::parse(&shown, &body)?))
            })
            .collect()
    };
    let started_at = disktier_store::model::now_rfc3339();
    let first = scrape_all()?;
    let members = match interval_s {
        None => first,
        Some(secs) => {
            note(&format!("sampling again in {secs} s"));
            // A second at a time, so a long --interval shows it is counting down.
            for left in (1..=secs).rev() {
                stopped(stop, secs - left)?;
                waiting(left);
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            stopped(stop, secs)?;
            let second = scrape_all()?;
            second
                .iter()
                .zip(&first)
                .map(|((url, s2), (_, s1))| Ok((url.clone(), s2.since(url, s1)?)))
                .collect::<anyhow::Result<Vec<_>>>()?
        }
    };
    let judged = judge(&members, interval_s.map(|s| s as f64));
    Ok(EtcdLive {
        started_at,
        interval_s,
        judged,
    })
}

/// `client.get(url)`, or an error as soon as a signal came (`stop`; within a tenth of a second):
/// a member that does not answer holds a scrape for the client's 20 s timeout (QA: SIGTERM
/// then was taken only at its end, which reported the timeout, not the signal; without
/// --interval it ended the process by the signal, status 143, where the page says an
/// interrupted check exits 2). The request goes on in a thread the exit ends.
fn get_or_stop(
    client: &disktier_etcdmetrics::Client,
    url: &str,
    shown: &str,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<String> {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    let (c, u) = (client.clone(), url.to_string());
    std::thread::spawn(move || {
        let _ = tx.send(c.get(&u));
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(r) => return Ok(r?),
            Err(RecvTimeoutError::Timeout) => {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    anyhow::bail!(
                        "interrupted while reading {shown}: nothing was judged (run again)"
                    );
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                anyhow::bail!("reading {shown} ended without an answer")
            }
        }
    }
}

/// The error that ends `--interval`'s wait when a signal came (QA: Ctrl-C there ended the
/// process by SIGINT, status 130, where the page says an interrupted check exits 2).
fn stopped(stop: &std::sync::atomic::AtomicBool, waited: u64) -> anyhow::Result<()> {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        anyhow::bail!(
            "interrupted {waited} s into --interval, before the second sample: nothing was judged (run again and let the interval end, or drop --interval to judge the counters since each member started)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A `/metrics` endpoint on loopback that answers `n` requests with `body`, one connection
    /// each.
    fn serve(body: &'static str, n: usize) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        std::thread::spawn(move || {
            for _ in 0..n {
                let Ok((mut c, _)) = l.accept() else { return };
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => req.extend_from_slice(&buf[..k]),
                    }
                }
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        url
    }

    /// A /metrics body whose WAL fsyncs and backend commits all took under 1 ms.
    const FAST_BODY: &str = "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 5\n\
        etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 5\n\
        etcd_disk_backend_commit_duration_seconds_bucket{le=\"0.001\"} 5\n\
        etcd_disk_backend_commit_duration_seconds_bucket{le=\"+Inf\"} 5\n";

    /// The wait between the two scrapes of `--interval` counts down a second at a time (the
    /// progress line draws it), and without an interval nothing waits.
    #[test]
    fn an_interval_counts_down_each_second_before_the_second_scrape() {
        let tls = disktier_etcdmetrics::TlsFiles::default();
        for (interval, scrapes, want) in [(Some(2), 2, vec![2, 1]), (None, 1, vec![])] {
            let url = serve(FAST_BODY, scrapes);
            let left = std::sync::Mutex::new(Vec::new());
            let live = etcd_live(&[url], &tls, interval, &Default::default(), &|_| {}, &|s| {
                left.lock().unwrap().push(s)
            })
            .unwrap();
            assert_eq!(*left.lock().unwrap(), want);
            assert_eq!(live.interval_s, interval);
        }
    }

    /// QA: `--metrics http://user:s3cret@host/metrics` printed the password in every verdict
    /// line and in the JSON document; the member is named with `xxxxx` in its place.
    #[test]
    fn a_members_password_is_not_shown() {
        let url = serve(FAST_BODY, 1).replacen("http://", "http://user:s3cret@", 1);
        let live = etcd_live(
            std::slice::from_ref(&url),
            &Default::default(),
            None,
            &Default::default(),
            &|_| {},
            &|_| {},
        )
        .unwrap();
        let shown = url.replace("s3cret", "xxxxx");
        let doc = live.document().to_string();
        assert!(!doc.contains("s3cret"), "{doc}");
        assert!(doc.contains(&shown), "{doc}");
        for line in &live.judged.lines[..live.judged.lines.len() - 1] {
            assert!(line.starts_with(&shown), "{line}");
        }
    }

    /// QA: a signal while a member did not answer was taken only at the client's 20 s timeout,
    /// which was then reported instead; it now ends the scrape at once with an error (exit 2).
    #[test]
    fn a_signal_during_a_scrape_ends_it_at_once() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/metrics", l.local_addr().unwrap());
        // Accepts and never answers.
        std::thread::spawn(move || {
            let _held: Vec<_> = l.incoming().take(4).collect();
            std::thread::sleep(std::time::Duration::from_secs(60));
        });
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            s.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let t0 = std::time::Instant::now();
        let e = etcd_live(
            std::slice::from_ref(&url),
            &Default::default(),
            None,
            &stop,
            &|_| {},
            &|_| {},
        )
        .err()
        .expect("no answer, no judgement");
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t0.elapsed()
        );
        assert!(
            e.to_string()
                .starts_with(&format!("interrupted while reading {url}")),
            "{e}"
        );
    }

    /// A signal during `--interval`'s wait ends it at the next second with an error (exit 2),
    /// never a judgement of one scrape.
    #[test]
    fn a_signal_ends_the_interval_wait_with_an_error() {
        // Histograms with a bucket below +Inf: one of only +Inf is refused as unreadable.
        let url = serve(FAST_BODY, 2);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let left = std::sync::Mutex::new(Vec::new());
        let e = etcd_live(
            &[url],
            &Default::default(),
            Some(30),
            &stop,
            &|_| {},
            &|s| {
                left.lock().unwrap().push(s);
                if s == 29 {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.starts_with("interrupted 2 s into --interval"), "{e}");
        assert_eq!(*left.lock().unwrap(), [30, 29]);
    }
}
