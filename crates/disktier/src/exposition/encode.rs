//! The text exposition of typed run metrics: one metric family per measured quantity.

use super::{DirectionMetrics, RepeatMetrics, RunLabels, RunMetrics, VerdictMetrics, VerdictUnit};
use anyhow::Context;
use prometheus::proto::{Gauge, LabelPair, Metric, MetricFamily, MetricType, Quantile, Summary};
use prometheus::{Encoder, TextEncoder};

/// Builds one metric family at a time; families without samples are left out (the encoder
/// rejects them, and an empty family says nothing).
struct Families(Vec<MetricFamily>);

impl Families {
    fn family(&mut self, name: &str, help: &str, kind: MetricType, metrics: Vec<Metric>) {
        if metrics.is_empty() {
            return;
        }
        let mut f = MetricFamily::default();
        f.set_name(name.to_string());
        f.set_help(help.to_string());
        f.set_field_type(kind);
        f.set_metric(metrics);
        self.0.push(f);
    }

    fn gauges(&mut self, name: &str, help: &str, samples: Vec<(Vec<(&str, String)>, f64)>) {
        let metrics = samples
            .into_iter()
            .map(|(labels, v)| {
                let mut g = Gauge::default();
                g.set_value(v);
                let mut m = Metric::from_gauge(g);
                m.set_label(label_pairs(labels));
                m
            })
            .collect();
        self.family(name, help, MetricType::GAUGE, metrics);
    }
}

fn label_pairs(labels: Vec<(&str, String)>) -> Vec<LabelPair> {
    labels
        .into_iter()
        .map(|(k, v)| {
            let mut p = LabelPair::default();
            p.set_name(k.to_string());
            p.set_value(v);
            p
        })
        .collect()
}

fn with(base: &RunLabels, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut l = base.pairs();
    l.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    l
}

/// The exposition of `runs`, text format 0.0.4.
pub fn encode(runs: &[RunMetrics]) -> anyhow::Result<String> {
    encode_with(runs, &[])
}

/// The exposition of `runs` and of the aggregates of `--repeat` series, text format 0.0.4.
pub fn encode_with(runs: &[RunMetrics], repeats: &[RepeatMetrics]) -> anyhow::Result<String> {
    let mut f = Families(Vec::new());
    f.gauges(
        "disktier_build_info",
        "The disktier version that produced these metrics (always 1).",
        vec![(
            vec![("version", env!("CARGO_PKG_VERSION").to_string())],
            1.0,
        )],
    );
    f.gauges(
        "disktier_last_run_timestamp_seconds",
        "When the run ended, in seconds since the Unix epoch.",
        runs.iter()
            .map(|r| (r.labels.pairs(), r.finished_unix_seconds))
            .collect(),
    );
    f.gauges(
        "disktier_run_duration_seconds",
        "How long the measurement ran.",
        runs.iter()
            .map(|r| (r.labels.pairs(), r.duration_seconds))
            .collect(),
    );
    let per_direction = |get: &dyn Fn(&DirectionMetrics) -> Option<f64>| {
        runs.iter()
            .flat_map(|r| {
                r.directions.iter().filter_map(|d| {
                    get(d).map(|v| (with(&r.labels, &[("direction", d.direction)]), v))
                })
            })
            .collect::<Vec<_>>()
    };
    f.gauges(
        "disktier_io_operations_per_second",
        "Completed I/O operations per second during the run, by direction (sync: fsync/fdatasync calls).",
        per_direction(&|d| Some(d.ops_per_second)),
    );
    f.gauges(
        "disktier_io_bytes_per_second",
        "Bytes read or written per second during the run.",
        per_direction(&|d| d.bytes_per_second),
    );
    let summaries = runs
        .iter()
        .flat_map(|r| {
            r.directions.iter().map(|d| {
                let mut s = Summary::default();
                s.set_sample_count(d.latency_count);
                s.set_sample_sum(d.latency_sum_seconds);
                s.set_quantile(
                    d.latency_quantiles
                        .iter()
                        .map(|(q, v)| {
                            let mut qq = Quantile::default();
                            qq.set_quantile(*q);
                            qq.set_value(*v);
                            qq
                        })
                        .collect(),
                );
                let mut m = Metric::default();
                m.set_summary(s);
                m.set_label(label_pairs(with(&r.labels, &[("direction", d.direction)])));
                m
            })
        })
        .collect();
    f.family(
        "disktier_io_latency_seconds",
        "Completion latency of the run's I/O operations by direction (sync: fsync/fdatasync), as quantiles over the whole run.",
        MetricType::SUMMARY,
        summaries,
    );
    f.gauges(
        "disktier_run_cpu_seconds",
        "CPU time the measurement used, by mode (user, system).",
        runs.iter()
            .flat_map(|r| {
                [
                    (with(&r.labels, &[("mode", "user")]), r.cpu_user_seconds),
                    (with(&r.labels, &[("mode", "system")]), r.cpu_system_seconds),
                ]
            })
            .collect(),
    );
    f.gauges(
        "disktier_small_files_per_second",
        "Files created, written and closed per second (the small-files profile).",
        runs.iter()
            .filter_map(|r| r.small_files_per_second.map(|v| (r.labels.pairs(), v)))
            .collect(),
    );
    let verdicts = |get: &dyn Fn(&VerdictMetrics) -> Option<f64>| {
        runs.iter()
            .flat_map(|r| {
                r.verdicts.iter().filter_map(|v| {
                    get(v).map(|x| (with(&r.labels, &[("verdict", v.name.as_str())]), x))
                })
            })
            .collect::<Vec<_>>()
    };
    f.gauges(
        "disktier_verdict_pass",
        "1 when the verdict passed (e.g. etcd: fdatasync p99 within the threshold), 0 when it failed.",
        verdicts(&|v| Some(if v.pass { 1.0 } else { 0.0 })),
    );
    f.gauges(
        "disktier_verdict_inconclusive",
        "1 when a runtime cap cut the run short and the p99's interval settles neither pass nor fail (disktier_verdict_pass is then 0: the disk was not shown too slow), else 0.",
        verdicts(&|v| Some(if v.inconclusive { 1.0 } else { 0.0 })),
    );
    let value: fn(&VerdictMetrics) -> f64 = |v| v.value;
    let threshold: fn(&VerdictMetrics) -> f64 = |v| v.threshold;
    // Each verdict's value and threshold, in a family per unit.
    let by_unit = [
        (
            "disktier_verdict_value_seconds",
            "The latency a verdict judged (e.g. etcd: the p99 of fdatasync latency).",
            VerdictUnit::Seconds,
            value,
        ),
        (
            "disktier_verdict_threshold_seconds",
            "The latency limit of a verdict (etcd: 10 ms for the fdatasync p99, from etcd's hardware guide).",
            VerdictUnit::Seconds,
            threshold,
        ),
        (
            "disktier_verdict_value_operations_per_second",
            "The rate a verdict judged (e.g. etcd-iops-50: fdatasync'd writes per second).",
            VerdictUnit::OperationsPerSecond,
            value,
        ),
        (
            "disktier_verdict_threshold_operations_per_second",
            "The minimum rate of a verdict (etcd's guidance: 50, or 500 for busy clusters).",
            VerdictUnit::OperationsPerSecond,
            threshold,
        ),
        (
            "disktier_verdict_value_events",
            "The count a verdict judged (e.g. etcd-stalls: fdatasyncs longer than etcd's 100 ms heartbeat interval).",
            VerdictUnit::Events,
            value,
        ),
        (
            "disktier_verdict_threshold_events",
            "The most events a verdict allows (etcd-stalls: 0).",
            VerdictUnit::Events,
            threshold,
        ),
    ];
    for (name, help, unit, pick) in by_unit {
        f.gauges(name, help, verdicts(&|v| (v.unit == unit).then(|| pick(v))));
    }
    f.gauges(
        "disktier_sync_stalls",
        "fsync/fdatasync calls of the run longer than longer_than_seconds (etcd's heartbeat interval, 0.1 s, and election timeout, 1 s: etcd docs, Tuning).",
        runs.iter()
            .flat_map(|r| {
                r.directions.iter().flat_map(move |d| {
                    d.stalls.iter().map(move |(bound, n)| {
                        (
                            with(&r.labels, &[("longer_than_seconds", &format!("{bound}"))]),
                            *n as f64,
                        )
                    })
                })
            })
            .collect(),
    );
    repeat_families(&mut f, repeats);
    let mut buf = Vec::new();
    TextEncoder::new()
        .encode(&f.0, &mut buf)
        .context("cannot encode the Prometheus exposition")?;
    String::from_utf8(buf).context("the Prometheus exposition is not UTF-8")
}

/// The families of `--repeat` aggregates: how many runs, the median, min and max of their p99s,
/// the coefficient of variation, and how many passed.
fn repeat_families(f: &mut Families, repeats: &[RepeatMetrics]) {
    f.gauges(
        "disktier_repeat_runs",
        "Runs of a --repeat series that finished (each is also exported with its run label).",
        repeats
            .iter()
            .map(|r| (r.labels.pairs(), r.runs as f64))
            .collect(),
    );
    let stat = |get: fn(&RepeatMetrics) -> Option<f64>, name: &'static str| {
        repeats
            .iter()
            .filter_map(move |r| {
                get(r).map(|v| {
                    (
                        with(&r.labels, &[("metric", r.metric.as_str()), ("stat", name)]),
                        v,
                    )
                })
            })
            .collect::<Vec<_>>()
    };
    let mut p99 = stat(|r| r.median_p99_seconds, "median");
    p99.extend(stat(|r| r.min_p99_seconds, "min"));
    p99.extend(stat(|r| r.max_p99_seconds, "max"));
    f.gauges(
        "disktier_repeat_p99_seconds",
        "The median, smallest and largest p99 latency of the runs of a --repeat series (metric: which p99, e.g. sync.p99).",
        p99,
    );
    f.gauges(
        "disktier_repeat_p99_cv_ratio",
        "Coefficient of variation of the runs' p99 latencies (sample standard deviation over the mean; needs two runs).",
        repeats
            .iter()
            .filter_map(|r| {
                r.cv
                    .map(|v| (with(&r.labels, &[("metric", r.metric.as_str())]), v))
            })
            .collect(),
    );
    f.gauges(
        "disktier_repeat_passed_runs",
        "Runs of a --repeat series whose verdict passed (fewer than disktier_repeat_runs: the verdict is unstable or failed).",
        repeats
            .iter()
            .filter_map(|r| r.passed.map(|n| (r.labels.pairs(), n as f64)))
            .collect(),
    );
}
