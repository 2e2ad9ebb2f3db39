//! The sections about what was measured: verdicts per target, latency curves, IOPS and
//! throughput bars, per-second series and comparison ratios.

use super::bench::big_blocks;
use super::bench::profiles;
use super::bench::target_name;
use super::bench::Bench;
use super::charts::{Bar, Curve};
use super::error::ReportError;
use super::fragments::etcd_limit;
use super::fragments::figure;
use super::fragments::legend;
use super::fragments::ns;
use super::fragments::swatch;
use super::html::esc;
use crate::compare::{self, fmt_count, fmt_value, Unit};
use disktier_engine::{DirStats, PERCENTILES};
use std::fmt::Write as _;

/// One card per target: its newest verdicts and figures (newest by when each run measured,
/// [`Bench::ran_at`]). Each profile's newest run gives the
/// badges, and each figure is the newest run's that measured it, labelled with that run's
/// profile (and "newest of N" when the profile ran more than once): a card never shows an older
/// or better run's figure beside a newer failing verdict. Every run is drawn in the charts.
pub(super) fn verdicts(benches: &[Bench<'_>], targets: &[String]) -> String {
    let mut s = String::from("<div class=\"cards\">\n");
    for (ti, t) in targets.iter().enumerate() {
        // Oldest first: by the time each run measured, then by the time it was saved, then by
        // its place in the report.
        let mut mine: Vec<&Bench> = benches.iter().filter(|b| b.color == ti).collect();
        mine.sort_by(|a, b| {
            (a.ran_at(), &a.run.summary.created_at).cmp(&(b.ran_at(), &b.run.summary.created_at))
        });
        let newest = mine[mine.len() - 1];
        let tgt = &newest.doc.target;
        let mut sub = Vec::new();
        if let Some(fs) = &tgt.fs_type {
            sub.push(fs.clone());
        }
        if let Some(d) = &tgt.device {
            sub.push(format!("on {d}"));
        }
        if let Some(m) = &tgt.model {
            sub.push(m.clone());
        }
        // An import knows no host: its hostname is empty.
        if !newest.doc.host.hostname.is_empty() {
            sub.push(format!("host {}", newest.doc.host.hostname));
        }
        let _ = write!(
            s,
            "<div class=\"card\" data-target=\"{}\">\n<div class=\"path\">{}{}</div>\n<div class=\"sub\">{}</div>\n<div class=\"badges\">",
            esc(t),
            swatch(ti),
            esc(target_name(t)),
            esc(&sub.join(" · "))
        );
        let names = profiles_of(&mine);
        // Each profile's newest run, in the order the profiles first ran.
        let latest: Vec<&Bench> = names
            .iter()
            .filter_map(|(p, _)| mine.iter().rev().find(|b| b.profile() == *p).copied())
            .collect();
        for b in &latest {
            for v in &b.doc.verdicts {
                badge(&mut s, b, v);
            }
            if b.doc.interrupted {
                let _ = write!(
                    s,
                    "<span class=\"badge info\" title=\"run {}: stopped by Ctrl-C or a signal\">{} interrupted: partial figures</span>",
                    esc(&b.run.summary.id),
                    esc(&b.profile())
                );
            }
        }
        if latest.iter().all(|b| b.doc.verdicts.is_empty()) {
            s.push_str("<span class=\"badge info\">no verdict: no etcd run</span>");
        }
        s.push_str("</div>\n<dl class=\"kv\">");
        type Figure = fn(&Bench) -> Option<f64>;
        let rows: [(&str, Figure, Unit); 7] = [
            ("sync p99", |b| p99(&b.doc.results.sync), Unit::Ns),
            (
                "read IOPS",
                |b| b.doc.results.read.as_ref().map(|d| d.iops).and_then(pos),
                Unit::Iops,
            ),
            (
                "write IOPS",
                |b| b.doc.results.write.as_ref().map(|d| d.iops).and_then(pos),
                Unit::Iops,
            ),
            (
                "read",
                |b| {
                    b.doc
                        .results
                        .read
                        .as_ref()
                        .map(|d| d.bw_bytes)
                        .and_then(pos)
                },
                Unit::BytesPerSec,
            ),
            (
                "write",
                |b| {
                    b.doc
                        .results
                        .write
                        .as_ref()
                        .map(|d| d.bw_bytes)
                        .and_then(pos)
                },
                Unit::BytesPerSec,
            ),
            ("read p99", |b| p99(&b.doc.results.read), Unit::Ns),
            (
                "small files",
                |b| {
                    b.doc
                        .results
                        .small_files
                        .as_ref()
                        .map(|f| f.files_per_s)
                        .and_then(pos)
                },
                Unit::FilesPerSec,
            ),
        ];
        for (name, figure, unit) in rows {
            let Some((b, v)) = mine.iter().rev().find_map(|b| figure(b).map(|v| (b, v))) else {
                continue;
            };
            let p = b.profile();
            let runs = names.iter().find(|(n, _)| *n == p).map_or(1, |(_, n)| *n);
            let _ = write!(
                s,
                "<dt>{name}</dt><dd>{} <span class=\"from\" title=\"run {}\">{}{}{}</span></dd>",
                esc(&fmt_value(unit, v)),
                esc(&b.run.summary.id),
                esc(&p),
                if runs > 1 {
                    format!(", newest of {runs}")
                } else {
                    String::new()
                },
                if b.doc.interrupted {
                    ", interrupted"
                } else {
                    ""
                }
            );
        }
        s.push_str("</dl>\n");
        let measured: Vec<String> = names
            .iter()
            .map(|(p, n)| {
                if *n > 1 {
                    format!("{p} ×{n}")
                } else {
                    p.clone()
                }
            })
            .collect();
        let quick = if mine.iter().all(|b| b.doc.quick) {
            " (quick)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<div class=\"profiles\">measured: {}{quick}</div>",
            esc(&measured.join(", "))
        );
        let earlier = mine.len() - latest.len();
        if earlier > 0 {
            let _ = writeln!(
                s,
                "<div class=\"profiles\">Badges and figures are each profile's newest run; {earlier} earlier run{} of this target {} drawn in the charts below and listed under Runs.</div>",
                if earlier == 1 { "" } else { "s" },
                if earlier == 1 { "is" } else { "are" }
            );
        }
        s.push_str("</div>\n");
    }
    s.push_str("</div>\n");
    s
}

/// A direction's p99 latency.
fn p99(d: &Option<DirStats>) -> Option<f64> {
    d.as_ref().and_then(|d| d.lat_ns.p(99.0)).map(|v| v as f64)
}

/// A rate, when one was measured (0 is none).
fn pos(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
}

/// A verdict's badge, its message and run in the tooltip.
fn badge(s: &mut String, b: &Bench<'_>, v: &disktier_engine::Verdict) {
    // A run cut short whose interval settles nothing was shown neither ready nor too slow
    // (`Verdict::inconclusive`): it is not drawn as a failure.
    let (class, mark) = match (v.pass, v.inconclusive) {
        (true, _) => ("pass", "✓"),
        (false, true) => ("info", "?"),
        (false, false) => ("fail", "✗"),
    };
    let shown = if v.metric.contains("iops") {
        format!("{:.0}/s", v.value)
    } else if v.metric.contains("p99") || v.metric.contains("lat") {
        format!("p99 {}", ns(v.value as u64))
    } else if v.metric.ends_with("max_ns") {
        // etcd-longest-sync: the longest fsync, in ns like the p99 (not a count).
        format!("max {}", ns(v.value as u64))
    } else {
        format!("{}", v.value)
    };
    let word = match (v.name.as_str(), v.pass, v.inconclusive) {
        (_, false, true) => " inconclusive",
        ("etcd", true, _) => " ready",
        ("etcd", false, _) => " not ready",
        _ => "",
    };
    let _ = write!(
        s,
        "<span class=\"badge {class}\" title=\"run {}: {}\">{mark} {}{word} · {}</span>",
        esc(&b.run.summary.id),
        esc(&v.message),
        esc(&v.name),
        esc(&shown)
    );
}

/// The profiles of `runs` in the order they first ran, each with how many runs it has.
fn profiles_of(runs: &[&Bench<'_>]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for b in runs {
        let p = b.profile();
        match out.iter_mut().find(|(n, _)| *n == p) {
            Some((_, n)) => *n += 1,
            None => out.push((p, 1)),
        }
    }
    out
}

pub(super) fn latency(benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut s = String::from("<p class=\"muted\">Completion latency against percentile, both on log scales: a flat line is a steady disk; a line that rises at the right has a tail.</p>\n<div class=\"grid2\">\n");
    for p in profiles(benches) {
        let mine: Vec<&Bench> = benches.iter().filter(|b| b.profile() == p).collect();
        let mut curves: Vec<Curve> = Vec::new();
        for b in &mine {
            let dirs = b.dirs();
            // The sync curve is what etcd's verdict reads; show it alone when the job syncs.
            let shown: Vec<_> = if dirs.iter().any(|d| d.0 == "sync") {
                dirs.into_iter().filter(|d| d.0 == "sync").collect()
            } else {
                dirs
            };
            // A run's directions share its target's colour and are told apart by the dash
            // pattern and marker (QA: a randrw run's read and write curves were the same line
            // style, so the legend could not say which was which); so are the runs of one
            // target, each curve taking its colour's next style (QA on dt-s24: two runs of one
            // target were two identical solid lines, told apart only by ids in the legend).
            for (dir, d) in shown {
                let points: Vec<(f64, u64)> = PERCENTILES
                    .iter()
                    .filter_map(|q| d.lat_ns.p(*q).map(|v| (*q, v)))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let mut label =
                    format!("{} {dir}", super::charts::short(target_name(&b.place), 40));
                if mine.iter().filter(|o| o.color == b.color).count() > 1 {
                    label.push_str(&format!(" ({})", b.run.summary.id));
                }
                if b.doc.interrupted {
                    label.push_str(" (interrupted: partial figures)");
                }
                let before = curves.iter().filter(|c| c.color == b.color).count();
                curves.push(Curve {
                    label,
                    color: b.color,
                    style: b.color + before * super::charts::PALETTE.len(),
                    points,
                });
            }
        }
        if curves.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            "<div>\n<h3>{}</h3>\n{}{}</div>\n",
            esc(&p),
            figure(
                "latency",
                &p,
                super::charts::percentiles(&curves, "latency", 560, etcd_limit(&p))?
            ),
            legend(&curves)
        );
    }
    s.push_str("</div>\n");
    Ok(s)
}

pub(super) fn throughput(benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut iops = Vec::new();
    let mut bw = Vec::new();
    // Runs of one profile on one target: their bars are told apart by run id, as the latency
    // legend tells their curves apart (QA: four bars labelled "/data · etcd write").
    let mut runs_of: std::collections::HashMap<(usize, String), usize> = Default::default();
    for b in benches {
        *runs_of.entry((b.color, b.profile())).or_default() += 1;
    }
    for b in benches {
        let profile = b.profile();
        let several = runs_of
            .get(&(b.color, profile.clone()))
            .is_some_and(|n| *n > 1);
        for (dir, d) in b.dirs() {
            if dir == "sync" {
                continue;
            }
            let mut tail = format!(" · {profile} {dir}");
            if several {
                tail.push_str(&format!(" · {}", b.run.summary.id));
            }
            // Marked as in every other chart label (QA: a partial run's bar was not).
            if b.doc.interrupted {
                tail.push_str(" (interrupted: partial figures)");
            }
            // The target gives way to what tells the bars apart, down to its last 16 characters.
            let room = super::charts::BAR_LABEL_CHARS
                .saturating_sub(tail.chars().count())
                .clamp(16, 40);
            let label = format!(
                "{}{tail}",
                super::charts::short(target_name(&b.place), room)
            );
            if d.iops > 0.0 {
                iops.push(Bar {
                    label: label.clone(),
                    value: d.iops,
                    color: b.color,
                    text: format!("{} IOPS", fmt_count(d.iops)),
                });
            }
            if d.bw_bytes > 0.0 {
                bw.push(Bar {
                    label,
                    value: d.bw_bytes / 1048576.0,
                    color: b.color,
                    text: fmt_value(Unit::BytesPerSec, d.bw_bytes),
                });
            }
        }
    }
    let mut s = String::new();
    for (title, kind, bars, axis) in [
        ("IOPS", "iops", &iops, "I/O operations per second"),
        ("Throughput", "throughput", &bw, "MiB/s"),
    ] {
        if !bars.is_empty() {
            let _ = write!(
                s,
                "<div>\n<h3>{title}</h3>\n{}</div>\n",
                figure(kind, "all", super::charts::bars(bars, axis, 1000)?)
            );
        }
    }
    Ok(s)
}

pub(super) fn timeseries(benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut s = String::from("<div class=\"grid2\">\n");
    let mut any = false;
    for b in benches {
        if b.doc.series.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(
            s,
            "<div>\n<h3>{}{}</h3>\n{}</div>\n",
            swatch(b.color),
            esc(&b.label()),
            figure(
                "series",
                &b.run.summary.id,
                super::charts::series(&b.doc.series, big_blocks(&b.doc))?
            )
        );
    }
    if !any {
        s.push_str("<p class=\"muted\">These runs carry no per-second samples.</p>\n");
    }
    s.push_str("</div>\n");
    Ok(s)
}

pub(super) fn comparisons(benches: &[Bench<'_>]) -> String {
    let mut s = String::new();
    for p in profiles(benches) {
        let mine: Vec<&Bench> = benches.iter().filter(|b| b.profile() == p).collect();
        let runs: Vec<compare::Compared> = mine
            .iter()
            .map(|b| compare::Compared {
                id: &b.run.summary.id,
                kind: &b.run.summary.kind,
                doc: &b.doc,
            })
            .collect();
        let Ok(c) = compare::compare(&runs, false) else {
            continue;
        };
        if c.rows.is_empty() {
            continue;
        }
        // A table of many runs is wider than the page: it scrolls on its own.
        let _ = write!(
            s,
            "<h3>{}</h3>\n<div class=\"scroll\">\n<table class=\"compare\">\n<tr><th>metric</th>",
            esc(&p)
        );
        // The sides are the runs given, in order: each is named by its place.
        for (side, b) in c.runs.iter().zip(&mine) {
            let _ = write!(
                s,
                "<th>{} <span class=\"mono\">{}</span></th>",
                side.letter,
                esc(&super::charts::short(target_name(&b.place), 36))
            );
        }
        for side in &c.runs[1..] {
            let _ = write!(s, "<th>A vs {}</th>", side.letter);
        }
        s.push_str("</tr>\n");
        for row in &c.rows {
            let _ = write!(s, "<tr><td>{}</td>", esc(&row.metric));
            for v in &row.values {
                let _ = write!(
                    s,
                    "<td class=\"num\">{}</td>",
                    v.map(|v| esc(&fmt_value(row.unit, v)))
                        .unwrap_or_else(|| "–".into())
                );
            }
            for r in &row.ratios {
                match r {
                    // As the text table says it: 1.0x either way is no difference.
                    Some(r) if (r.factor - 1.0).abs() < 0.005 => {
                        s.push_str("<td class=\"num\">same</td>")
                    }
                    Some(r) => {
                        let class = if r.first_better { "better" } else { "worse" };
                        let _ = write!(
                            s,
                            "<td class=\"num {class}\">{} {}</td>",
                            compare::fmt_factor(r.factor),
                            r.direction
                        );
                    }
                    None => s.push_str("<td class=\"num\">–</td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n</div>\n<ul class=\"sentences\">\n");
        for line in c.sentences() {
            let _ = writeln!(s, "<li>{}</li>", esc(&line));
        }
        s.push_str("</ul>\n");
        for n in &c.notes {
            let _ = writeln!(s, "<div class=\"note\">{}</div>", esc(n));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::report::{render, ReportInput};
    use crate::NewRun;
    use disktier_testkit::cli::store_fixture as fixture;

    /// QA on dt-s24: two runs of one profile on one target were drawn as two solid lines of one
    /// colour, with one swatch for both in the legend; each now has a style of its own.
    #[test]
    fn runs_of_one_target_differ_in_style() {
        let run = |id: &str, p99: u64| {
            let mut doc = fixture("read-iops");
            doc["results"]["read"]["lat_ns"]["percentiles"]["99"] = p99.into();
            NewRun {
                kind: "bench",
                group_id: None,
                doc: &doc,
            }
            .to_row(id.into(), "2023-09-14T10:00:00.000000Z".into())
        };
        let runs = [run("run-a", 2_000_000), run("run-b", 3_000_000)];
        let page = render(&ReportInput::new(&runs, "now")).unwrap();
        let latency = page
            .split("<section id=\"latency\">")
            .nth(1)
            .and_then(|s| s.split("</section>").next())
            .expect("the latency section");
        let legend: Vec<&str> = latency
            .split("<div class=\"legend\">")
            .nth(1)
            .expect("a legend")
            .split("<span>")
            .skip(1)
            .collect();
        assert_eq!(legend.len(), 2, "{legend:?}");
        assert!(legend[0].contains("(run-a)") && legend[1].contains("(run-b)"));
        let swatch = |entry: &str| entry.split("</span>").next().unwrap_or("").to_string();
        assert_ne!(swatch(legend[0]), swatch(legend[1]), "{legend:?}");
    }
}
