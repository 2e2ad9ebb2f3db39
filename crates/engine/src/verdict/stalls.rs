//! What fsyncs over etcd's raft timeouts (its heartbeat interval and election timeout) mean,
//! in the sentences the etcd verdicts and the live check print.

use super::{fmt_threshold, ETCD_ELECTION_TIMEOUT_NS, ETCD_HEARTBEAT_NS};

/// What fsyncs over etcd's raft timeouts mean, in one sentence: "3 fsyncs over 100 ms (etcd's
/// heartbeat interval), none over 1 s (its election timeout): heartbeats would be missed, but
/// not for long enough that followers start an election".
/// `what` names the calls in the plural ("fsyncs", "WAL fsyncs"); one is "1 fsync".
pub fn stall_sentence(what: &str, s: &crate::result::Stalls) -> String {
    let hb = fmt_threshold(s.heartbeat_ns);
    let el = fmt_threshold(s.election_ns);
    let calls = count_noun(
        s.over_heartbeat as f64,
        what.strip_suffix('s').unwrap_or(what),
        what,
    );
    let counts = if s.over_heartbeat == 0 {
        format!("no {what} over {hb} (etcd's heartbeat interval)")
    } else if s.over_election > 0 {
        format!(
            "{calls} over {hb} (etcd's heartbeat interval), {} over {el} (its election timeout)",
            s.over_election
        )
    } else {
        format!(
            "{calls} over {hb} (etcd's heartbeat interval), none over {el} (its election timeout)"
        )
    };
    format!("{counts}: {}", stall_meaning(s))
}

/// `n` and the noun for it: `one` for exactly one, else `many` ("1 fsync", "3 fsyncs", "0 leader
/// changes"). QA on dt-s23: "1 fsyncs over 100 ms", and on every healthy member "1 leader
/// changes since the member started".
pub fn count_noun(n: f64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1.0 { one } else { many })
}

/// What stalls mean for etcd, without the counts. A follower starts an election only when it
/// hears no heartbeat for the election timeout (etcd docs, "Tuning"), so stalls over the
/// heartbeat interval alone do not make one (QA: "none over 1 s (its election timeout):
/// heartbeats would be missed; expect leader elections" contradicted itself).
pub fn stall_meaning(s: &crate::result::Stalls) -> &'static str {
    if s.over_election > 0 {
        "followers would stop hearing the leader; expect leader elections under this load"
    } else if s.over_heartbeat > 0 {
        "heartbeats would be missed, but not for long enough that followers start an election"
    } else {
        "no missed heartbeats from the disk"
    }
}

/// What the longest fsync says when the calls were not counted (an import of fio's text or plain
/// JSON, which carry the max but no per-call counts): "the longest fsync took 1.94 s, over 1 s
/// (etcd's election timeout): followers would stop hearing the leader; ...". The OSTree-vs-etcd
/// issue [recipe-mco-ostree-etcd] read exactly this from fio's text: a p99 of 6.19 ms under a
/// 2-second fdatasync. `from_fio`: the run is fio's, whose json+ output would count the calls.
pub fn longest_sync_sentence(max_ns: u64, from_fio: bool) -> String {
    let s = crate::result::Stalls {
        heartbeat_ns: ETCD_HEARTBEAT_NS,
        over_heartbeat: u64::from(max_ns > ETCD_HEARTBEAT_NS),
        election_ns: ETCD_ELECTION_TIMEOUT_NS,
        over_election: u64::from(max_ns > ETCD_ELECTION_TIMEOUT_NS),
    };
    let hb = fmt_threshold(s.heartbeat_ns);
    let el = fmt_threshold(s.election_ns);
    let (over, count) = if s.over_election > 0 {
        (format!("over {el} (etcd's election timeout)"), true)
    } else if s.over_heartbeat > 0 {
        let w =
            format!("over {hb} (etcd's heartbeat interval), not over {el} (its election timeout)");
        (w, true)
    } else {
        (format!("not over {hb} (etcd's heartbeat interval)"), false)
    };
    let count = match (count, from_fio) {
        (true, true) => "; how many fsyncs took that long is not in this result (fio's --output-format=json+ counts them)",
        (true, false) => "; how many fsyncs took that long is not in this result",
        (false, _) => "",
    };
    format!(
        "the longest fsync took {}, {over}: {}{count}",
        disktier_units::fmt_ns(max_ns as f64),
        stall_meaning(&s)
    )
}
