//! etcd's own measurements of its disk, read from one scrape (or the difference of two) of a
//! member's `/metrics`, and the verdict on them.
//!
//! Thresholds (etcd docs, "Hardware recommendations", op-guide/hardware.md, Disks, and
//! "Monitoring etcd" / metrics.md): the 99th percentile of `etcd_disk_wal_fsync_duration_seconds`
//! should be under 10 ms and that of `etcd_disk_backend_commit_duration_seconds` under 25 ms.
//! Raft timing (etcd docs, "Tuning", op-guide/tuning.md): heartbeat interval 100 ms, election
//! timeout 1 s by default.

use crate::error::Error;
use crate::expo::Sample;
use crate::quantile::{Histogram, Quantile};
use disktier_engine::result::{Stalls, Verdict};
use disktier_engine::verdict::{
    count_noun, stall_meaning, ETCD_ELECTION_TIMEOUT_NS, ETCD_HEARTBEAT_NS,
};
use serde::Serialize;

/// WAL fsync p99 limit: 10 ms (etcd docs, op-guide/hardware.md).
pub const WAL_FSYNC_P99_LIMIT_S: f64 = 0.010;
/// Backend commit p99 limit: 25 ms (etcd docs, op-guide/hardware.md / metrics.md).
pub const BACKEND_COMMIT_P99_LIMIT_S: f64 = 0.025;

pub const WAL_FSYNC: &str = "etcd_disk_wal_fsync_duration_seconds";
pub const BACKEND_COMMIT: &str = "etcd_disk_backend_commit_duration_seconds";
pub const LEADER_CHANGES: &str = "etcd_server_leader_changes_seen_total";
pub const HEARTBEAT_FAILURES: &str = "etcd_server_heartbeat_send_failures_total";
pub const SLOW_APPLIES: &str = "etcd_server_slow_apply_total";
/// The Go client's process collector, which etcd registers: when the member's process started
/// (Unix seconds). Two scrapes with different values are two processes.
pub const PROCESS_START: &str = "process_start_time_seconds";

/// What one scrape of one member holds that the verdict needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scrape {
    pub wal_fsync: Histogram,
    pub backend_commit: Histogram,
    pub leader_changes: f64,
    pub heartbeat_send_failures: f64,
    pub slow_applies: f64,
    /// [`PROCESS_START`], when the member exports it: a restart between two scrapes shows here
    /// even when the new process's counters have already passed the old one's.
    pub process_start_s: Option<f64>,
}

/// The largest count taken: 2^53, past which a float no longer holds every whole number. etcd
/// counts each fsync, commit and leader change once (`Observe`, `Inc`), so its counts are whole
/// numbers, and at a million fsyncs a second a member reaches 2^53 after 285 years.
pub const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

/// A count etcd exports (a bucket's, `_count`, a counter) is a whole number from 0 to
/// [`MAX_COUNT`]; anything else is a body no figure can be read from. `Err` says what is wrong
/// with it. QA: a bucket count of 5.5 read "0.5 WAL fsyncs over 128.00 ms ...: no missed
/// heartbeats from the disk" beside a failed stall verdict on those 0.5, and 1e300 was printed
/// as a number of 301 digits.
fn check_count(what: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && (0.0..=MAX_COUNT).contains(&value) && value.fract() == 0.0 {
        Ok(())
    } else {
        // 1e300 as written, not as its 301 digits.
        let shown = if value.abs() > MAX_COUNT {
            format!("{value:e}")
        } else {
            value.to_string()
        };
        Err(format!(
            "has {what} of {shown}, and a count is a whole number from 0 to 2^53"
        ))
    }
}

/// The histogram `name` from a body: `Ok(None)` when the body has no bucket of it, `Err` (what
/// is wrong) when its buckets cannot be read as a Prometheus histogram. QA on dt-s23: a WAL
/// fsync histogram without its `+Inf` bucket, or with `NaN` counts, read "no WAL fsync observed:
/// nothing to judge (put some load on the member first)" beside 205 observations, and with the
/// backend commit's alike the check passed (exit 0) on a body nothing could be judged from.
fn histogram(samples: &[Sample], name: &str) -> Result<Option<Histogram>, String> {
    let (bucket, count, sum) = (
        format!("{name}_bucket"),
        format!("{name}_count"),
        format!("{name}_sum"),
    );
    let mut h = Histogram::default();
    let mut seen = false;
    for s in samples {
        if s.name == bucket {
            let le = s.label("le").ok_or("has a bucket without an `le` label")?;
            let bound = crate::expo::parse_value(le)
                .ok()
                .filter(|b| !b.is_nan())
                .ok_or_else(|| format!("has a bucket bound le={le:?}, which is not a number"))?;
            check_count(&format!("a bucket (le={le:?}) count"), s.value)?;
            h.push_bucket(bound, s.value);
            seen = true;
        } else if s.name == count {
            check_count("a _count", s.value)?;
            h.count += s.value;
        } else if s.name == sum {
            h.sum += s.value;
        }
    }
    if !seen {
        return Ok(None);
    }
    // Prometheus answers NaN without it (promql/quantile.go); `_count` alone says how many,
    // not where, so no p99 and no stall count can be read.
    if !h.buckets.iter().any(|(le, _)| *le == f64::INFINITY) {
        return Err("has no le=\"+Inf\" bucket, the one that counts every observation".into());
    }
    // The +Inf bucket alone says how many, not how long: Prometheus needs two buckets.
    if !h.buckets.iter().any(|(le, _)| le.is_finite()) {
        return Err(
            "has only its le=\"+Inf\" bucket, which says how many observations there were but not how long they took".into(),
        );
    }
    h.normalise();
    Ok(Some(h))
}

/// A counter's total over its series; 0 when the member does not export it (etcd exports
/// `etcd_server_slow_apply_total` from 3.4 on; a float `sum()` of nothing is -0.0, which read
/// "-0 leader changes"). `Err` for a value no counter holds (QA: `+Inf` leader changes read
/// "0 leader changes", `-5` passed).
fn counter(samples: &[Sample], name: &str) -> Result<f64, String> {
    samples
        .iter()
        .filter(|s| s.name == name)
        .try_fold(0.0, |total, s| {
            check_count("a value", s.value).map(|()| total + s.value)
        })
}

impl Scrape {
    /// Picks etcd's figures out of a parsed body; `url` names the member in errors.
    pub fn from_samples(url: &str, samples: &[Sample]) -> Result<Scrape, Error> {
        let malformed = |metric: &'static str| {
            move |why: String| Error::Malformed {
                url: url.to_string(),
                metric,
                why,
            }
        };
        let need = |metric: &'static str| {
            histogram(samples, metric)
                .map_err(malformed(metric))?
                .ok_or_else(|| Error::NotEtcd {
                    url: url.to_string(),
                    metric,
                })
        };
        let count = |metric: &'static str| counter(samples, metric).map_err(malformed(metric));
        Ok(Scrape {
            wal_fsync: need(WAL_FSYNC)?,
            backend_commit: need(BACKEND_COMMIT)?,
            leader_changes: count(LEADER_CHANGES)?,
            heartbeat_send_failures: count(HEARTBEAT_FAILURES)?,
            slow_applies: count(SLOW_APPLIES)?,
            process_start_s: samples
                .iter()
                .find(|s| s.name == PROCESS_START && s.value.is_finite())
                .map(|s| s.value),
        })
    }

    /// Parses a body and picks etcd's figures; a body that does not parse is an error naming
    /// `url`.
    pub fn parse(url: &str, body: &str) -> Result<Scrape, Error> {
        let samples = crate::expo::parse(body).map_err(|e| Error::Body {
            url: url.to_string(),
            source: Box::new(e),
        })?;
        Scrape::from_samples(url, &samples)
    }

    /// What happened between `earlier` and this scrape.
    pub fn since(&self, url: &str, earlier: &Scrape) -> Result<Scrape, Error> {
        // A member restarted in between starts its counters from 0; once they have grown past
        // the old process's (a busy member, or one scraped soon after it started), no count
        // went down, and the difference would be read as the interval's.
        if let (Some(before), Some(after)) = (earlier.process_start_s, self.process_start_s) {
            if before != after {
                return Err(Error::RestartedBetween {
                    url: url.to_string(),
                    before,
                    after,
                });
            }
        }
        let restarted = || Error::Restarted {
            url: url.to_string(),
        };
        let diff = |a: f64, b: f64| if a >= b { Ok(a - b) } else { Err(restarted()) };
        Ok(Scrape {
            wal_fsync: self
                .wal_fsync
                .since(&earlier.wal_fsync)
                .ok_or_else(restarted)?,
            backend_commit: self
                .backend_commit
                .since(&earlier.backend_commit)
                .ok_or_else(restarted)?,
            leader_changes: diff(self.leader_changes, earlier.leader_changes)?,
            heartbeat_send_failures: diff(
                self.heartbeat_send_failures,
                earlier.heartbeat_send_failures,
            )?,
            slow_applies: diff(self.slow_applies, earlier.slow_applies)?,
            process_start_s: self.process_start_s,
        })
    }
}

/// One histogram's p99 with the bucket it was interpolated in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P99 {
    /// Interpolated p99 (s); `None` when the histogram holds no observations.
    pub p99_s: Option<f64>,
    /// The bucket's bounds (s); `upper_s` is `None` for the `+Inf` bucket (then `p99_s` is
    /// the highest finite bound, a lower bound on the true p99).
    pub bucket_lower_s: Option<f64>,
    pub bucket_upper_s: Option<f64>,
    pub observations: f64,
    /// Observations over the smallest bucket bound at or above 100 ms / 1 s (etcd's fsync
    /// buckets double from 1 ms: 128 ms and 1.024 s), with those bounds.
    pub over_heartbeat: Option<StallCount>,
    pub over_election: Option<StallCount>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StallCount {
    pub bound_s: f64,
    pub count: f64,
}

impl P99 {
    fn of(h: &Histogram) -> P99 {
        let q: Option<Quantile> = h.quantile(0.99);
        let stall = |ns: u64| {
            h.count_above(ns as f64 / 1e9)
                .map(|(bound_s, count)| StallCount { bound_s, count })
        };
        P99 {
            p99_s: q.map(|q| q.value),
            bucket_lower_s: q.map(|q| q.lower),
            bucket_upper_s: q.and_then(|q| q.upper.is_finite().then_some(q.upper)),
            observations: h.observations(),
            over_heartbeat: stall(ETCD_HEARTBEAT_NS),
            over_election: stall(ETCD_ELECTION_TIMEOUT_NS),
        }
    }
}

/// The judged figures of one member.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberReport {
    pub url: String,
    pub wal_fsync: P99,
    pub backend_commit: P99,
    pub leader_changes: f64,
    pub heartbeat_send_failures: f64,
    pub slow_applies: f64,
    pub verdicts: Vec<Verdict>,
}

/// The verdict over all members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    pub members: Vec<MemberReport>,
    /// Every member's verdicts, in member order.
    pub verdicts: Vec<Verdict>,
    pub pass: bool,
    /// What a user reads.
    pub lines: Vec<String>,
}

fn ms(s: f64) -> String {
    disktier_units::fmt_ns(s * 1e9)
}

fn p99_verdict(
    url: &str,
    what: &str,
    name: &str,
    metric: &str,
    p: &P99,
    limit_s: f64,
    sampled: bool,
) -> (Verdict, String) {
    let limit = ms(limit_s);
    let (value, pass, message) = match p.p99_s {
        None => (
            0.0,
            true,
            format!(
                "{url}: no {what} observed: nothing to judge ({})",
                if sampled {
                    "put some load on the member while it is sampled, or give a longer --interval"
                } else {
                    "put some load on the member first"
                }
            ),
        ),
        Some(v) => {
            let bucket = match (p.bucket_lower_s, p.bucket_upper_s) {
                (Some(lo), Some(hi)) => {
                    format!("interpolated in the bucket {} to {}", ms(lo), ms(hi))
                }
                (Some(lo), None) => format!("in the +Inf bucket: at least {}", ms(lo)),
                _ => String::new(),
            };
            let pass = p.bucket_upper_s.is_some() && v < limit_s;
            let head = format!(
                "{url}: {what} p99 {} ({bucket}; {} observations)",
                ms(v),
                p.observations
            );
            let tail = if pass {
                format!("within etcd's {limit}")
            } else {
                format!("above etcd's {limit}: faster disks are recommended to host etcd")
            };
            (v * 1e9, pass, format!("{head}: {tail}"))
        }
    };
    (
        Verdict {
            name: name.into(),
            metric: metric.into(),
            value,
            threshold: limit_s * 1e9,
            pass,
            message: message.clone(),
            ci95: None,
            inconclusive: false,
        },
        message,
    )
}

/// [`count_verdict`] whose message is also one of the report's lines.
fn counted(
    lines: &mut Vec<String>,
    verdicts: &mut Vec<Verdict>,
    name: &str,
    metric: &str,
    value: f64,
    allowed: f64,
    message: String,
) {
    lines.push(message.clone());
    verdicts.push(count_verdict(name, metric, value, allowed, message));
}

fn count_verdict(name: &str, metric: &str, value: f64, allowed: f64, message: String) -> Verdict {
    Verdict {
        name: name.into(),
        metric: metric.into(),
        value,
        threshold: allowed,
        pass: value <= allowed,
        message,
        ci95: None,
        inconclusive: false,
    }
}

/// Judges each member's scrape (since start when `interval_s` is `None`, else the difference
/// over that many seconds).
pub fn judge(members: &[(String, Scrape)], interval_s: Option<f64>) -> Judged {
    let span = match interval_s {
        Some(s) => format!("in the last {s:.0} s"),
        None => "since the member started".into(),
    };
    let mut out = Judged {
        members: Vec::new(),
        verdicts: Vec::new(),
        pass: true,
        lines: Vec::new(),
    };
    for (url, s) in members {
        let wal = P99::of(&s.wal_fsync);
        let backend = P99::of(&s.backend_commit);
        let mut verdicts = Vec::new();
        let (v, line) = p99_verdict(
            url,
            &format!("WAL fsync ({span})"),
            "etcd-wal-fsync",
            "wal_fsync.p99",
            &wal,
            WAL_FSYNC_P99_LIMIT_S,
            interval_s.is_some(),
        );
        out.lines.push(line);
        verdicts.push(v);
        let (v, line) = p99_verdict(
            url,
            &format!("backend commit ({span})"),
            "etcd-backend-commit",
            "backend_commit.p99",
            &backend,
            BACKEND_COMMIT_P99_LIMIT_S,
            interval_s.is_some(),
        );
        out.lines.push(line);
        verdicts.push(v);
        // WAL fsyncs over the raft timeouts, from the buckets (etcd does not export each call).
        if let (Some(hb), Some(el)) = (wal.over_heartbeat, wal.over_election) {
            let stalls = Stalls {
                heartbeat_ns: (hb.bound_s * 1e9).round() as u64,
                over_heartbeat: hb.count as u64,
                election_ns: (el.bound_s * 1e9).round() as u64,
                over_election: el.count as u64,
            };
            out.lines.push(format!(
                "{url}: {} over {} and {} over {} {span} (etcd's bucket bounds at or above its \
                 100 ms heartbeat interval and 1 s election timeout): {}",
                count_noun(hb.count, "WAL fsync", "WAL fsyncs"),
                ms(hb.bound_s),
                el.count,
                ms(el.bound_s),
                stall_meaning(&stalls)
            ));
            verdicts.push(count_verdict(
                "etcd-wal-stalls",
                "wal_fsync.over_heartbeat",
                hb.count,
                0.0,
                format!(
                    "{url}: {} over {} {span}",
                    count_noun(hb.count, "WAL fsync", "WAL fsyncs"),
                    ms(hb.bound_s)
                ),
            ));
        }
        // The first election counts as a change on every member, so since start one is normal.
        let allowed_changes = if interval_s.is_some() { 0.0 } else { 1.0 };
        let msg = format!(
            "{url}: {} {span}{}",
            count_noun(s.leader_changes, "leader change", "leader changes"),
            if s.leader_changes > allowed_changes {
                ": the cluster lost its leader; slow disks (fsyncs over the heartbeat interval) are a common cause"
            } else {
                ""
            }
        );
        counted(
            &mut out.lines,
            &mut verdicts,
            "etcd-leader-changes",
            LEADER_CHANGES,
            s.leader_changes,
            allowed_changes,
            msg,
        );
        let msg = format!(
            "{url}: {} {span}{}",
            count_noun(
                s.heartbeat_send_failures,
                "heartbeat send failure",
                "heartbeat send failures"
            ),
            if s.heartbeat_send_failures > 0.0 {
                ": the leader could not send heartbeats in time (slow disk or network)"
            } else {
                ""
            }
        );
        counted(
            &mut out.lines,
            &mut verdicts,
            "etcd-heartbeat-failures",
            HEARTBEAT_FAILURES,
            s.heartbeat_send_failures,
            0.0,
            msg,
        );
        let msg = format!(
            "{url}: {} (over 100 ms) {span}",
            count_noun(s.slow_applies, "slow apply", "slow applies")
        );
        counted(
            &mut out.lines,
            &mut verdicts,
            "etcd-slow-applies",
            SLOW_APPLIES,
            s.slow_applies,
            0.0,
            msg,
        );
        out.pass &= verdicts.iter().all(|v| v.pass);
        out.verdicts.extend(verdicts.iter().cloned());
        out.members.push(MemberReport {
            url: url.clone(),
            wal_fsync: wal,
            backend_commit: backend,
            leader_changes: s.leader_changes,
            heartbeat_send_failures: s.heartbeat_send_failures,
            slow_applies: s.slow_applies,
            verdicts,
        });
    }
    let failed: Vec<String> = out
        .members
        .iter()
        .flat_map(|m| {
            m.verdicts
                .iter()
                .filter(|v| !v.pass)
                .map(move |v| format!("{} ({})", v.name, m.url))
        })
        .collect();
    // Not a failure, but no evidence either: an idle member's disk is not vouched for.
    let observed = out.members.iter().any(|m| m.wal_fsync.p99_s.is_some());
    out.lines.push(if failed.is_empty() && !observed {
        format!("etcd's own measurements: no WAL fsync observed {span}, so they say nothing about the disk yet")
    } else if failed.is_empty() {
        "etcd's own measurements: the disk keeps up with etcd".into()
    } else {
        format!("WARN: etcd's own measurements fail: {}", failed.join(", "))
    });
    out
}

#[cfg(test)]
#[path = "etcd_tests.rs"]
mod tests;
