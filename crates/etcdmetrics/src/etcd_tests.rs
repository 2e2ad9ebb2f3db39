//! Tests of etcd's verdict from its own metrics: since start, over an interval, and what an
//! idle or partial member shows.
use super::*;

fn body(wal: &[(f64, u64)], changes: u64) -> String {
    let mut s = String::from("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n");
    let mut total = 0;
    for (le, c) in wal {
        s.push_str(&format!("{WAL_FSYNC}_bucket{{le=\"{le}\"}} {c}\n"));
        total = *c;
    }
    s.push_str(&format!(
        "{WAL_FSYNC}_bucket{{le=\"+Inf\"}} {total}\n{WAL_FSYNC}_count {total}\n"
    ));
    s.push_str(&format!(
        "{BACKEND_COMMIT}_bucket{{le=\"0.001\"}} 5\n{BACKEND_COMMIT}_bucket{{le=\"+Inf\"}} 5\n"
    ));
    s.push_str(&format!(
        "{LEADER_CHANGES} {changes}\n{HEARTBEAT_FAILURES} 0\n"
    ));
    s
}

/// QA: a member that exports no slow-apply counter read "-0 slow applies" (a float sum of
/// nothing is -0.0), and a member that had fsynced nothing was said to keep up with etcd.
#[test]
fn an_absent_counter_is_zero_and_an_idle_member_is_not_vouched_for() {
    let s = Scrape::parse("m1", &body(&[(0.001, 0)], 0)).unwrap();
    assert!(s.slow_applies.is_sign_positive(), "{}", s.slow_applies);
    for interval in [None, Some(30.0)] {
        let j = judge(&[("m1".into(), s.clone())], interval);
        let text = j.lines.join("\n");
        assert!(!text.contains("-0"), "{text}");
        assert!(text.contains("m1: 0 slow applies"), "{text}");
        assert!(j.pass, "{text}");
        let last = j.lines.last().unwrap();
        assert!(!last.contains("keeps up"), "{last}");
        assert!(last.contains("no WAL fsync observed"), "{last}");
        assert_eq!(
            text.contains("longer --interval"),
            interval.is_some(),
            "{text}"
        );
    }
    let busy = Scrape::parse("m1", &body(&[(0.001, 10)], 0)).unwrap();
    let j = judge(&[("m1".into(), busy)], None);
    assert!(
        j.lines.last().unwrap().contains("keeps up"),
        "{:?}",
        j.lines
    );
}

#[test]
fn judges_a_scrape_and_an_interval() {
    // 1000 fsyncs: 900 <= 1 ms, 985 <= 2 ms, 995 <= 0.128 s, 999 <= 0.256, 1000 <= 2.048.
    let b = body(
        &[
            (0.001, 900),
            (0.002, 985),
            (0.128, 995),
            (0.256, 999),
            (1.024, 999),
            (2.048, 1000),
        ],
        1,
    );
    let s = Scrape::parse("m1", &b).unwrap();
    let j = judge(&[("m1".into(), s.clone())], None);
    let m = &j.members[0];
    // Rank 990 in (2 ms, 128 ms], 10 there, 5 below the rank: 2 + 126 * 5/10 = 65 ms.
    assert!((m.wal_fsync.p99_s.unwrap() - 0.065).abs() < 1e-12);
    assert_eq!(m.wal_fsync.bucket_upper_s, Some(0.128));
    assert!(!j.pass);
    assert_eq!(m.wal_fsync.over_heartbeat.unwrap().count, 5.0);
    assert_eq!(m.wal_fsync.over_election.unwrap().count, 1.0);
    let text = j.lines.join("\n");
    assert!(
        text.contains("5 WAL fsyncs over 128.00 ms and 1 over 1.02 s since the member started"),
        "{text}"
    );
    assert!(
        text.contains("WARN: etcd's own measurements fail: etcd-wal-fsync (m1)"),
        "{text}"
    );
    assert!(text.contains("expect leader elections"), "{text}");
    assert!(
        text.contains("interpolated in the bucket 2.00 ms to 128.00 ms"),
        "{text}"
    );
    // Backend: all 5 in the first bucket: 0.99 * 5 = 4.95 of 5 in (0, 1 ms].
    assert!((m.backend_commit.p99_s.unwrap() - 0.00099).abs() < 1e-12);
    assert!(m
        .verdicts
        .iter()
        .any(|v| v.name == "etcd-leader-changes" && v.pass));
    // One is one change (QA on dt-s23: "1 leader changes since the member started").
    assert!(
        text.contains("m1: 1 leader change since the member started"),
        "{text}"
    );

    // The interval: 100 fast fsyncs more, one leader change more.
    let later = Scrape::parse(
        "m1",
        &body(
            &[
                (0.001, 1000),
                (0.002, 1085),
                (0.128, 1095),
                (0.256, 1099),
                (1.024, 1099),
                (2.048, 1100),
            ],
            2,
        ),
    )
    .unwrap();
    let d = later.since("m1", &s).unwrap();
    let j = judge(&[("m1".into(), d)], Some(10.0));
    let m = &j.members[0];
    assert_eq!(m.wal_fsync.observations, 100.0);
    assert_eq!(m.wal_fsync.over_heartbeat.unwrap().count, 0.0);
    assert!(j.members[0]
        .verdicts
        .iter()
        .any(|v| v.name == "etcd-leader-changes" && !v.pass));
    assert!(later
        .since(
            "m1",
            &Scrape {
                leader_changes: 9.0,
                ..s.clone()
            }
        )
        .is_err());
}

#[test]
fn a_body_without_etcd_metrics_is_named() {
    let e = Scrape::parse("http://x/metrics", "go_goroutines 5\n").unwrap_err();
    assert!(e
        .to_string()
        .contains("etcd_disk_wal_fsync_duration_seconds"));
}

#[test]
fn a_body_that_does_not_parse_names_its_member() {
    // With several --metrics URLs, "metrics line 1: ..." alone did not say whose it was.
    let e = Scrape::parse("http://10.0.0.6:2381/metrics", "<html>login</html>\n").unwrap_err();
    let chain = format!("{:#}", anyhow_like(&e));
    assert!(
        chain.starts_with("http://10.0.0.6:2381/metrics does not serve Prometheus metrics"),
        "{chain}"
    );
    assert!(chain.contains("metrics line 1"), "{chain}");
}

/// The error and its sources, joined as `anyhow`'s `{:#}` prints them.
fn anyhow_like(e: &Error) -> String {
    let mut out = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

#[test]
fn an_empty_histogram_is_not_judged_a_failure() {
    let b = body(&[(0.001, 0)], 1);
    let j = judge(&[("m".into(), Scrape::parse("m", &b).unwrap())], None);
    assert_eq!(j.members[0].wal_fsync.p99_s, None);
    assert!(j.lines[0].contains("no WAL fsync"), "{}", j.lines[0]);
}

#[test]
fn a_p99_in_the_inf_bucket_fails_as_at_least_the_top_bound() {
    // 10 fsyncs, 2 above the top finite bound (8.192 s): rank 9.9 falls in +Inf.
    let b = body(&[(0.001, 8), (8.192, 8)], 1).replace(
        &format!("{WAL_FSYNC}_bucket{{le=\"+Inf\"}} 8"),
        &format!("{WAL_FSYNC}_bucket{{le=\"+Inf\"}} 10"),
    );
    let j = judge(&[("m".into(), Scrape::parse("m", &b).unwrap())], None);
    let w = &j.members[0].wal_fsync;
    assert_eq!((w.p99_s, w.bucket_upper_s), (Some(8.192), None));
    assert!(
        j.lines[0].contains("in the +Inf bucket: at least 8.19 s"),
        "{}",
        j.lines[0]
    );
    assert!(!j.members[0].verdicts[0].pass);
    assert_eq!(w.over_election.unwrap().count, 2.0);
}

/// QA: a member restarted between two samples whose new counters had already passed the old
/// ones was judged on their difference, as if nothing had happened; its process start time
/// changed.
#[test]
fn a_restart_is_seen_from_the_process_start_time_when_no_count_went_down() {
    let with_start = |b: String, t: &str| format!("{b}{PROCESS_START} {t}\n");
    let before = Scrape::parse("m1", &with_start(body(&[(0.001, 3)], 1), "1.79588e+09")).unwrap();
    let after = Scrape::parse("m1", &with_start(body(&[(0.001, 400)], 1), "1.79589e+09")).unwrap();
    assert_eq!(before.process_start_s, Some(1.79588e9));
    let e = after.since("m1", &before).unwrap_err().to_string();
    assert!(
        e.contains("m1: the member restarted between the two samples"),
        "{e}"
    );
    // The same process: the difference, as before.
    let same = Scrape::parse("m1", &with_start(body(&[(0.001, 400)], 1), "1.79588e+09")).unwrap();
    assert_eq!(
        same.since("m1", &before).unwrap().wal_fsync.observations(),
        397.0
    );
    // A member that does not export it is judged on its counters alone.
    let (b, a) = (
        Scrape::parse("m1", &body(&[(0.001, 3)], 1)).unwrap(),
        Scrape::parse("m1", &body(&[(0.001, 400)], 1)).unwrap(),
    );
    assert!(a.since("m1", &b).is_ok());
}

/// QA on dt-s23, a body served from loopback: a WAL fsync histogram without its `+Inf` bucket, or
/// with `NaN` counts, read "no WAL fsync observed: nothing to judge (put some load on the member
/// first)" beside its 205 observations (with the backend commit's alike, exit 0), `+Inf` leader
/// changes read "0 leader changes" and `-5` passed; a fractional or huge count was judged too.
/// Each is refused naming the metric and what is
/// wrong; a well-formed body (etcd 3.4's own lines) still parses.
#[test]
fn a_histogram_or_counter_no_figure_can_be_read_from_is_refused() {
    let good = body(&[(0.001, 200), (0.002, 205)], 1);
    assert!(Scrape::parse("m1", &good).is_ok());
    let cases: [(&str, &str, &str, &str); 10] = [
        (
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 205\n",
            "",
            WAL_FSYNC,
            "has no le=\"+Inf\" bucket",
        ),
        (
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 200\n",
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} NaN\n",
            WAL_FSYNC,
            "has a bucket (le=\"0.001\") count of NaN",
        ),
        (
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} 205\n",
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"NaN\"} 205\n",
            WAL_FSYNC,
            "has a bucket bound le=\"NaN\", which is not a number",
        ),
        (
            "etcd_disk_wal_fsync_duration_seconds_count 205\n",
            "etcd_disk_wal_fsync_duration_seconds_count -1\n",
            WAL_FSYNC,
            "has a _count of -1",
        ),
        (
            "etcd_disk_backend_commit_duration_seconds_bucket{le=\"+Inf\"} 5\n",
            "",
            BACKEND_COMMIT,
            "has no le=\"+Inf\" bucket",
        ),
        (
            "etcd_server_leader_changes_seen_total 1\n",
            "etcd_server_leader_changes_seen_total +Inf\n",
            LEADER_CHANGES,
            "has a value of inf",
        ),
        (
            "etcd_server_heartbeat_send_failures_total 0\n",
            "etcd_server_heartbeat_send_failures_total -5\n",
            HEARTBEAT_FAILURES,
            "has a value of -5",
        ),
        // QA: 5.5 read "0.5 WAL fsyncs over 128.00 ms and 0.5 over 1.02 s ...: no missed
        // heartbeats from the disk" beside a failed stall verdict, 1.5 "1.5 leader changes",
        // and 1e300 was printed as a number of 301 digits.
        (
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 205\n",
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 205.5\n",
            WAL_FSYNC,
            "has a bucket (le=\"+Inf\") count of 205.5, and a count is a whole number from 0 to 2^53",
        ),
        (
            "etcd_server_leader_changes_seen_total 1\n",
            "etcd_server_leader_changes_seen_total 1.5\n",
            LEADER_CHANGES,
            "has a value of 1.5",
        ),
        (
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} 205\n",
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} 1e300\n",
            WAL_FSYNC,
            "has a bucket (le=\"0.002\") count of 1e300, and",
        ),
    ];
    // Only the +Inf bucket (QA on dt-s24: "no WAL fsync observed" beside 205 observations).
    let only_inf = good
        .replace(
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 200\n",
            "",
        )
        .replace(
            "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} 205\n",
            "",
        );
    let msg = Scrape::parse("m1", &only_inf).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!("m1: {WAL_FSYNC} has only its le=\"+Inf\" bucket")),
        "{msg}"
    );
    for (line, with, metric, why) in cases {
        assert!(good.contains(line), "{line}");
        let bad = good.replace(line, with);
        let e = Scrape::parse("m1", &bad).unwrap_err();
        assert!(
            matches!(&e, Error::Malformed { metric: m, .. } if *m == metric),
            "{line}: {e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("m1: {metric} {why}"))
                && msg.contains("etcd member's own /metrics"),
            "{line}: {msg}"
        );
    }
}
