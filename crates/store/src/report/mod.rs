//! The self-contained HTML report: verdict badges per target, latency-percentile curves per
//! profile, IOPS and throughput bars across targets, per-second series, comparison ratios, the
//! cost of each planned option beside what was measured, and interference scenarios. One file,
//! no scripts, no network: styles inline, charts inline SVG from plotters, and a CSP that forbids
//! loading anything.

pub mod charts;
pub mod fleet;
pub mod html;

use crate::compare::{self, fmt_count, fmt_value, Unit};
use crate::StoredRun;
use charts::{Bar, ChartError, Curve};
use disktier_engine::{DirStats, RunDoc, PERCENTILES};
use html::esc;
use serde_json::Value;
use std::fmt::Write as _;

/// What a report is made from.
pub struct ReportInput<'a> {
    pub runs: &'a [StoredRun],
    /// `disktier plan --format json` output, if given.
    pub plan: Option<&'a Value>,
    /// Shown in the header (the caller passes the time; tests pass a fixed one).
    pub generated_at: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("nothing to report: no runs were selected (run `disktier assess` or `disktier bench` first, or list runs with `disktier history`)")]
    Empty,
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// A benchmark run with its colour (one per target).
struct Bench<'a> {
    run: &'a StoredRun,
    doc: RunDoc,
    color: usize,
}

impl Bench<'_> {
    fn profile(&self) -> String {
        self.doc.profile.clone().unwrap_or_else(|| {
            format!(
                "custom {}",
                self.doc
                    .job
                    .get("rw")
                    .and_then(Value::as_str)
                    .unwrap_or("job")
            )
        })
    }
    fn label(&self) -> String {
        format!("{} · {}", self.doc.target.path, self.profile())
    }
    fn dirs(&self) -> Vec<(&'static str, &DirStats)> {
        let r = &self.doc.results;
        [("read", &r.read), ("write", &r.write), ("sync", &r.sync)]
            .into_iter()
            .filter_map(|(n, d)| {
                d.as_ref()
                    .filter(|d| d.ios > 0 || !d.lat_ns.percentiles.is_empty())
                    .map(|d| (n, d))
            })
            .collect()
    }
}

/// Renders the report.
pub fn render(input: &ReportInput<'_>) -> Result<String, ReportError> {
    if input.runs.is_empty() {
        return Err(ReportError::Empty);
    }
    let mut targets: Vec<String> = Vec::new();
    let mut benches = Vec::new();
    let mut interfere = Vec::new();
    for run in input.runs {
        match serde_json::from_value::<RunDoc>(run.doc.clone()) {
            Ok(mut doc) if run.summary.kind != "interfere" => {
                judge_etcd(&mut doc);
                let color = match targets.iter().position(|t| *t == doc.target.path) {
                    Some(i) => i,
                    None => {
                        targets.push(doc.target.path.clone());
                        targets.len() - 1
                    }
                };
                benches.push(Bench { run, doc, color });
            }
            _ if run.doc.get("scenarios").is_some() => interfere.push(run),
            _ => {}
        }
    }
    let mut body = String::new();
    let mut nav = Vec::new();
    let mut add = |id: &str, title: &str, content: String| {
        nav.push(format!("<a href=\"#{id}\">{}</a>", esc(title)));
        let _ = write!(
            body,
            "<section id=\"{id}\">\n<h2>{}</h2>\n{content}</section>\n",
            esc(title)
        );
    };
    if !benches.is_empty() {
        add(
            "verdicts",
            "Verdicts by target",
            verdicts(&benches, &targets),
        );
        add("latency", "Latency percentiles", latency(&benches)?);
        add("throughput", "IOPS and throughput", throughput(&benches)?);
        let cmp = comparisons(&benches);
        if !cmp.is_empty() {
            add("comparisons", "Comparisons", cmp);
        }
        add("timeseries", "Second by second", timeseries(&benches)?);
    }
    if let Some(f) = fleet::section(input.runs)? {
        add("fleet", "Fleet: one row per node", f);
    }
    if let Some(plan) = input.plan {
        add("plan", "Cost of each option", plan_section(plan, &benches)?);
    }
    if !interfere.is_empty() {
        add("interfere", "Interference", interfere_section(&interfere)?);
    }
    add("runs", "Runs in this report", runs_table(input.runs));

    let hosts: Vec<String> = {
        let mut h: Vec<String> = input
            .runs
            .iter()
            .filter_map(|r| r.summary.hostname.clone())
            .collect();
        h.sort();
        h.dedup();
        h
    };
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>disktier report</title>\n<style>{style}</style>\n</head>\n<body>\n\
         <header>\n<h1>disktier report</h1>\n<p>{n} run{s} on {t} target{ts}{hosts} · generated {when}</p>\n</header>\n\
         <nav>{nav}</nav>\n<main>\n{body}</main>\n\
         <footer>Made by disktier. This file is self-contained: it loads nothing from the network.</footer>\n\
         </body>\n</html>\n",
        csp = html::CSP,
        style = html::STYLE,
        n = input.runs.len(),
        s = if input.runs.len() == 1 { "" } else { "s" },
        t = targets.len(),
        ts = if targets.len() == 1 { "" } else { "s" },
        hosts = if hosts.is_empty() { String::new() } else { format!(" · host {}", esc(&hosts.join(", "))) },
        when = esc(input.generated_at),
        nav = nav.join(""),
    );
    Ok(page)
}

/// `bench --profile etcd` and imported etcd runs carry no verdict; the report judges them the
/// way `check etcd` does (the engine's etcd verdict: fdatasync p99 under 10 ms, etcd docs).
fn judge_etcd(doc: &mut RunDoc) {
    let etcd_profile = matches!(doc.profile.as_deref(), Some("etcd" | "etcd-openshift"));
    if etcd_profile && doc.verdicts.is_empty() {
        if let Ok(v) = disktier_engine::verdict::etcd(doc, None, Default::default()) {
            doc.verdicts = v.verdicts;
        }
    }
}

/// The line drawn on etcd charts: fdatasync p99 must stay under 10 ms (etcd docs, seed 000).
fn etcd_limit(profile: &str) -> Option<charts::Limit> {
    profile.starts_with("etcd").then(|| charts::Limit {
        ns: disktier_engine::verdict::ETCD_SYNC_P99_THRESHOLD_NS,
        label: "etcd limit: p99 under 10 ms".into(),
    })
}

/// The interfere run's own threshold (its `--threshold`, 10 ms by default as for etcd).
fn interfere_limit(doc: &Value) -> Option<charts::Limit> {
    match doc.get("threshold_ns").and_then(Value::as_u64) {
        Some(ns) => Some(charts::Limit {
            ns,
            label: format!("threshold {}", ns_str(ns)),
        }),
        None => etcd_limit("etcd"),
    }
}

fn ns_str(v: u64) -> String {
    disktier_units::fmt_ns(v as f64)
}

fn figure(kind: &str, key: &str, svg: String) -> String {
    format!(
        "<figure class=\"chart\" data-chart=\"{}:{}\">\n{svg}</figure>\n",
        kind,
        esc(key)
    )
}

/// A legend in HTML under a chart whose lines are coloured per target or scenario.
fn legend(curves: &[Curve]) -> String {
    let mut s = String::from("<div class=\"legend\">");
    for c in curves {
        let _ = write!(s, "<span>{}{}</span>", swatch(c.color), esc(&c.label));
    }
    s.push_str("</div>\n");
    s
}

fn swatch(color: usize) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        charts::css_color(color)
    )
}

fn ns(v: u64) -> String {
    disktier_units::fmt_ns(v as f64)
}

fn verdicts(benches: &[Bench<'_>], targets: &[String]) -> String {
    let mut s = String::from("<div class=\"cards\">\n");
    for (ti, t) in targets.iter().enumerate() {
        let mine: Vec<&Bench> = benches.iter().filter(|b| b.color == ti).collect();
        let tgt = &mine[0].doc.target;
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
        sub.push(format!("host {}", mine[0].doc.host.hostname));
        let _ = write!(
            s,
            "<div class=\"card\" data-target=\"{}\">\n<div class=\"path\">{}{}</div>\n<div class=\"sub\">{}</div>\n<div class=\"badges\">",
            esc(t),
            swatch(ti),
            esc(t),
            esc(&sub.join(" · "))
        );
        for b in &mine {
            for v in &b.doc.verdicts {
                let (class, mark) = if v.pass {
                    ("pass", "✓")
                } else {
                    ("fail", "✗")
                };
                let shown = if v.metric.contains("iops") {
                    format!("{:.0}/s", v.value)
                } else if v.metric.contains("p99") || v.metric.contains("lat") {
                    format!("p99 {}", ns(v.value as u64))
                } else {
                    format!("{}", v.value)
                };
                let word = match (v.name.as_str(), v.pass) {
                    ("etcd", true) => " ready",
                    ("etcd", false) => " not ready",
                    _ => "",
                };
                let _ = write!(
                    s,
                    "<span class=\"badge {class}\" title=\"{}\">{mark} {}{word} · {}</span>",
                    esc(&v.message),
                    esc(&v.name),
                    esc(&shown)
                );
            }
        }
        if mine.iter().all(|b| b.doc.verdicts.is_empty()) {
            s.push_str("<span class=\"badge info\">no verdict: no etcd run</span>");
        }
        s.push_str("</div>\n<dl class=\"kv\">");
        let best = |f: &dyn Fn(&Bench) -> Option<f64>| {
            mine.iter()
                .filter_map(|b| f(b))
                .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))))
        };
        let low = |f: &dyn Fn(&Bench) -> Option<f64>| {
            mine.iter()
                .filter_map(|b| f(b))
                .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.min(v))))
        };
        let p99 =
            |d: &Option<DirStats>| d.as_ref().and_then(|d| d.lat_ns.p(99.0)).map(|v| v as f64);
        let pos = |v: f64| (v > 0.0).then_some(v);
        let rows: [(&str, Option<f64>, Unit); 7] = [
            ("sync p99", low(&|b| p99(&b.doc.results.sync)), Unit::Ns),
            (
                "read IOPS",
                best(&|b| b.doc.results.read.as_ref().map(|d| d.iops).and_then(pos)),
                Unit::Iops,
            ),
            (
                "write IOPS",
                best(&|b| b.doc.results.write.as_ref().map(|d| d.iops).and_then(pos)),
                Unit::Iops,
            ),
            (
                "read",
                best(&|b| {
                    b.doc
                        .results
                        .read
                        .as_ref()
                        .map(|d| d.bw_bytes)
                        .and_then(pos)
                }),
                Unit::BytesPerSec,
            ),
            (
                "write",
                best(&|b| {
                    b.doc
                        .results
                        .write
                        .as_ref()
                        .map(|d| d.bw_bytes)
                        .and_then(pos)
                }),
                Unit::BytesPerSec,
            ),
            ("read p99", low(&|b| p99(&b.doc.results.read)), Unit::Ns),
            (
                "small files",
                best(&|b| {
                    b.doc
                        .results
                        .small_files
                        .as_ref()
                        .map(|f| f.files_per_s)
                        .and_then(pos)
                }),
                Unit::FilesPerSec,
            ),
        ];
        for (name, v, unit) in rows {
            if let Some(v) = v {
                let _ = write!(s, "<dt>{name}</dt><dd>{}</dd>", esc(&fmt_value(unit, v)));
            }
        }
        s.push_str("</dl>\n");
        let names: Vec<String> = mine.iter().map(|b| b.profile()).collect();
        let quick = if mine.iter().all(|b| b.doc.quick) {
            " (quick)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<div class=\"profiles\">measured: {}{quick}</div>",
            esc(&names.join(", "))
        );
        s.push_str("</div>\n");
    }
    s.push_str("</div>\n");
    s
}

/// Profiles in order of first appearance.
fn profiles(benches: &[Bench<'_>]) -> Vec<String> {
    let mut p: Vec<String> = Vec::new();
    for b in benches {
        if !p.contains(&b.profile()) {
            p.push(b.profile());
        }
    }
    p
}

fn latency(benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut s = String::from("<p class=\"muted\">Completion latency against percentile, both on log scales: a flat line is a steady disk; a line that rises at the right has a tail.</p>\n<div class=\"grid2\">\n");
    for p in profiles(benches) {
        let mine: Vec<&Bench> = benches.iter().filter(|b| b.profile() == p).collect();
        let mut curves = Vec::new();
        for b in &mine {
            let dirs = b.dirs();
            // The sync curve is what etcd's verdict reads; show it alone when the job syncs.
            let shown: Vec<_> = if dirs.iter().any(|d| d.0 == "sync") {
                dirs.into_iter().filter(|d| d.0 == "sync").collect()
            } else {
                dirs
            };
            for (dir, d) in shown {
                let points: Vec<(f64, u64)> = PERCENTILES
                    .iter()
                    .filter_map(|q| d.lat_ns.p(*q).map(|v| (*q, v)))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let mut label = format!("{} {dir}", charts::short(&b.doc.target.path, 40));
                if mine.iter().filter(|o| o.color == b.color).count() > 1 {
                    label.push_str(&format!(" ({})", b.run.summary.id));
                }
                curves.push(Curve {
                    label,
                    color: b.color,
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
                charts::percentiles(&curves, "latency", 560, etcd_limit(&p))?
            ),
            legend(&curves)
        );
    }
    s.push_str("</div>\n");
    Ok(s)
}

fn throughput(benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut iops = Vec::new();
    let mut bw = Vec::new();
    for b in benches {
        for (dir, d) in b.dirs() {
            if dir == "sync" {
                continue;
            }
            let label = format!(
                "{} · {} {dir}",
                charts::short(&b.doc.target.path, 40),
                b.profile()
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
    if !iops.is_empty() {
        let _ = write!(
            s,
            "<div>\n<h3>IOPS</h3>\n{}</div>\n",
            figure(
                "iops",
                "all",
                charts::bars(&iops, "I/O operations per second", 1000)?
            )
        );
    }
    if !bw.is_empty() {
        let _ = write!(
            s,
            "<div>\n<h3>Throughput</h3>\n{}</div>\n",
            figure("throughput", "all", charts::bars(&bw, "MiB/s", 1000)?)
        );
    }
    Ok(s)
}

fn timeseries(benches: &[Bench<'_>]) -> Result<String, ReportError> {
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
                charts::series(&b.doc.series, big_blocks(&b.doc))?
            )
        );
    }
    if !any {
        s.push_str("<p class=\"muted\">These runs carry no per-second samples.</p>\n");
    }
    s.push_str("</div>\n");
    Ok(s)
}

/// Throughput jobs (1 MiB blocks in seed 002) read better in MiB/s than in IOPS.
fn big_blocks(doc: &RunDoc) -> bool {
    doc.job
        .get("bs")
        .and_then(Value::as_u64)
        .is_some_and(|bs| bs >= 128 * 1024)
}

fn comparisons(benches: &[Bench<'_>]) -> String {
    let mut s = String::new();
    for p in profiles(benches) {
        let runs: Vec<(String, RunDoc)> = benches
            .iter()
            .filter(|b| b.profile() == p)
            .map(|b| (b.run.summary.id.clone(), b.doc.clone()))
            .collect();
        let Ok(c) = compare::compare(&runs, false) else {
            continue;
        };
        if c.rows.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            "<h3>{}</h3>\n<table class=\"compare\">\n<tr><th>metric</th>",
            esc(&p)
        );
        for side in &c.runs {
            let _ = write!(
                s,
                "<th>{} <span class=\"mono\">{}</span></th>",
                side.letter,
                esc(&charts::short(&side.target, 36))
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
        s.push_str("</table>\n<ul class=\"sentences\">\n");
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

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

fn plan_section(plan: &Value, benches: &[Bench<'_>]) -> Result<String, ReportError> {
    let mut s = String::new();
    let region = plan.get("region").and_then(Value::as_str).unwrap_or("?");
    let req = plan.get("requirements").cloned().unwrap_or(Value::Null);
    let mut need = Vec::new();
    if let Some(c) = num(&req, "capacity_gib") {
        need.push(format!("{c:.0} GiB"));
    }
    if let Some(i) = num(&req, "iops") {
        need.push(format!("{} IOPS", fmt_count(i)));
    }
    if let Some(t) = num(&req, "throughput_mibs") {
        need.push(format!("{t:.0} MiB/s"));
    }
    let _ = writeln!(s, "<p>Options in <b>{}</b> that meet {}, cheapest first, beside what this report measured.</p>", esc(region), esc(&if need.is_empty() { "the requirements".to_string() } else { need.join(", ") }));
    let options: Vec<&Value> = plan
        .get("options")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut bars = Vec::new();
    s.push_str("<table class=\"plan\">\n<tr><th>option</th><th>per month</th><th>IOPS</th><th>MiB/s</th><th>caveats</th></tr>\n");
    for (i, o) in options.iter().enumerate() {
        let label = o
            .get("label")
            .and_then(Value::as_str)
            .or_else(|| o.get("kind").and_then(Value::as_str))
            .unwrap_or("option");
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
        let cost = num(o, "monthly_cost_usd").unwrap_or(0.0);
        let perf = o.get("performance").cloned().unwrap_or(Value::Null);
        let caveats: Vec<String> = o
            .get("caveats")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|c| c.as_str().map(esc)).collect())
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<tr><td><b>{}</b><br><span class=\"muted\">{}</span></td><td class=\"num\">${cost:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(label),
            esc(kind),
            num(&perf, "iops").map(fmt_count).unwrap_or_else(|| "–".into()),
            num(&perf, "throughput_mibs").map(|t| format!("{t:.0}")).unwrap_or_else(|| "–".into()),
            caveats.join("<br>")
        );
        bars.push(Bar {
            label: charts::short(label, 44),
            value: cost,
            color: i,
            text: format!("${cost:.2}/month"),
        });
    }
    s.push_str("</table>\n");
    if !bars.is_empty() {
        s.push_str(&figure(
            "cost",
            "options",
            charts::bars(&bars, "USD per month", 1000)?,
        ));
    }
    s.push_str("<h3>Measured here</h3>\n<table class=\"measured\">\n<tr><th>target</th><th>profile</th><th>IOPS</th><th>MiB/s</th><th>sync p99</th><th>meets the need</th></tr>\n");
    let need_iops = num(&req, "iops");
    let need_mibs = num(&req, "throughput_mibs");
    for b in benches {
        let r = &b.doc.results;
        let iops =
            r.read.as_ref().map_or(0.0, |d| d.iops) + r.write.as_ref().map_or(0.0, |d| d.iops);
        let bw = r.read.as_ref().map_or(0.0, |d| d.bw_bytes)
            + r.write.as_ref().map_or(0.0, |d| d.bw_bytes);
        // Only the IOPS and throughput profiles measure what the plan's requirements name.
        let profile = b.profile();
        let check = if profile.contains("iops") {
            need_iops.map(|n| iops >= n)
        } else if profile.contains("throughput") {
            need_mibs.map(|n| bw / 1048576.0 >= n)
        } else {
            None
        };
        let meets = match check {
            Some(true) => "<span class=\"badge pass\">yes</span>".to_string(),
            Some(false) => "<span class=\"badge fail\">no</span>".to_string(),
            None => "–".to_string(),
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"mono\">{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{}</td><td>{meets}</td></tr>",
            swatch(b.color),
            esc(&b.doc.target.path),
            esc(&b.profile()),
            fmt_count(iops),
            bw / 1048576.0,
            r.sync.as_ref().and_then(|d| d.lat_ns.p(99.0)).map(ns).unwrap_or_else(|| "–".into()),
        );
    }
    s.push_str("</table>\n");
    Ok(s)
}

fn interfere_section(runs: &[&StoredRun]) -> Result<String, ReportError> {
    let mut s = String::from("<p class=\"muted\">The probe is an etcd-like fdatasync writer; each scenario adds a bulk writer (the aggressor) and a mitigation. Lower curves are better.</p>\n");
    for run in runs {
        let scenarios = run
            .doc
            .get("scenarios")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut curves = Vec::new();
        let mut table = String::from("<table class=\"interfere\">\n<tr><th>scenario</th><th>mitigation</th><th>probe p99</th><th>probe p99.9</th><th>probe IOPS</th><th>aggressor</th><th>verdict</th></tr>\n");
        for (i, sc) in scenarios.iter().enumerate() {
            let name = sc.get("name").and_then(Value::as_str).unwrap_or("scenario");
            let mitigation = sc
                .get("mitigation")
                .and_then(Value::as_str)
                .unwrap_or("none");
            let probe: Option<DirStats> = sc
                .get("probe")
                .cloned()
                .and_then(|p| serde_json::from_value(p).ok());
            if let Some(p) = &probe {
                let points: Vec<(f64, u64)> = PERCENTILES
                    .iter()
                    .filter_map(|q| p.lat_ns.p(*q).map(|v| (*q, v)))
                    .collect();
                if !points.is_empty() {
                    curves.push(Curve {
                        label: name.to_string(),
                        color: i,
                        points,
                    });
                }
            }
            let aggressor = match sc.get("aggressor") {
                Some(a) if !a.is_null() => {
                    let secs = num(a, "seconds").unwrap_or(0.0);
                    let bytes = num(a, "bytes").unwrap_or(0.0);
                    if secs > 0.0 {
                        fmt_value(Unit::BytesPerSec, bytes / secs)
                    } else {
                        "–".into()
                    }
                }
                _ => "none".into(),
            };
            let verdict = match sc.get("verdict") {
                // interfere's verdict: "pass", "fail" or "unavailable" (with the reason).
                Some(Value::String(v)) => {
                    let class = match v.as_str() {
                        "pass" => "pass",
                        "fail" => "fail",
                        _ => "info",
                    };
                    let why = sc
                        .get("unavailable_reason")
                        .and_then(Value::as_str)
                        .map(|r| format!(" {}", esc(r)))
                        .unwrap_or_default();
                    format!("<span class=\"badge {class}\">{}</span>{why}", esc(v))
                }
                Some(v @ Value::Object(_)) => {
                    let pass = v.get("pass").and_then(Value::as_bool).unwrap_or(false);
                    let msg = v.get("message").and_then(Value::as_str).unwrap_or("");
                    format!(
                        "<span class=\"badge {}\">{}</span> {}",
                        if pass { "pass" } else { "fail" },
                        if pass { "pass" } else { "fail" },
                        esc(msg)
                    )
                }
                _ => "–".into(),
            };
            let p = |q: f64| {
                probe
                    .as_ref()
                    .and_then(|p| p.lat_ns.p(q))
                    .map(ns)
                    .unwrap_or_else(|| "–".into())
            };
            let _ = writeln!(
                table,
                "<tr><td>{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{verdict}</td></tr>",
                swatch(i),
                esc(name),
                esc(mitigation),
                p(99.0),
                p(99.9),
                num(sc, "probe_iops").map(fmt_count).unwrap_or_else(|| "–".into()),
                esc(&aggressor),
            );
        }
        table.push_str("</table>\n");
        let target = run.doc.get("target").and_then(Value::as_str).unwrap_or("");
        let _ = writeln!(
            s,
            "<h3><span class=\"mono\">{}</span> <span class=\"muted\">run {}</span></h3>",
            esc(target),
            esc(&run.summary.id)
        );
        if let Some(r) = run.doc.get("recommendation").and_then(Value::as_str) {
            let _ = writeln!(s, "<p><b>{}</b></p>", esc(r));
        }
        if !curves.is_empty() {
            s.push_str(&figure(
                "interfere",
                &run.summary.id,
                charts::percentiles(
                    &curves,
                    "probe fdatasync latency",
                    1000,
                    interfere_limit(&run.doc),
                )?,
            ));
            s.push_str(&legend(&curves));
        }
        s.push_str(&table);
    }
    Ok(s)
}

fn runs_table(runs: &[StoredRun]) -> String {
    let mut s = String::from("<table class=\"runs\">\n<tr><th>run</th><th>saved (UTC)</th><th>kind</th><th>profile</th><th>target</th><th>host</th><th>engine</th></tr>\n");
    for r in runs {
        let m = &r.summary;
        let _ = writeln!(
            s,
            "<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&m.id),
            esc(m.created_at.get(..19).unwrap_or(&m.created_at)).replace('T', " "),
            esc(&m.kind),
            esc(m.profile.as_deref().unwrap_or("–")),
            if m.quick { " (quick)" } else { "" },
            esc(m.target.as_deref().unwrap_or("–")),
            esc(m.hostname.as_deref().unwrap_or("–")),
            esc(m.engine.as_deref().unwrap_or("–")),
        );
    }
    s.push_str("</table>\n");
    s
}

/// The report's structure without the drawings: sections, headings, charts and cards, one per
/// line, for golden files (the SVG itself changes with plotters versions; the outline must not).
pub fn outline(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let end = rest.find('>').unwrap_or(rest.len() - 1);
        let tag = &rest[..=end];
        let text_end = rest[end + 1..]
            .find('<')
            .map_or(rest.len(), |j| end + 1 + j);
        let text = rest[end + 1..text_end].trim();
        let attr = |name: &str| {
            let key = format!("{name}=\"");
            tag.find(&key).map(|k| {
                let v = &tag[k + key.len()..];
                v[..v.find('"').unwrap_or(v.len())].to_string()
            })
        };
        if tag.starts_with("<section") {
            let _ = writeln!(out, "section #{}", attr("id").unwrap_or_default());
        } else if tag.starts_with("<h2") || tag.starts_with("<h3") {
            let inner_end = rest.find("</h").unwrap_or(text_end);
            let inner = strip_tags(&rest[end + 1..inner_end]);
            let _ = writeln!(out, "  {} {}", &tag[1..3], inner.trim());
        } else if tag.starts_with("<figure") {
            let svg_ok = rest[end..]
                .trim_start_matches('>')
                .trim_start()
                .starts_with("<svg");
            let _ = writeln!(
                out,
                "    chart {}{}",
                attr("data-chart").unwrap_or_default(),
                if svg_ok { " [svg]" } else { " [NO SVG]" }
            );
        } else if tag.starts_with("<div class=\"card\"") {
            let _ = writeln!(out, "    card {}", attr("data-target").unwrap_or_default());
        } else if tag.starts_with("<span class=\"badge") {
            let _ = writeln!(
                out,
                "      badge {}: {}",
                attr("class")
                    .unwrap_or_default()
                    .trim_start_matches("badge "),
                text
            );
        } else if tag.starts_with("<table") {
            let rows = rest[end..]
                .split("</table>")
                .next()
                .unwrap_or("")
                .matches("<tr>")
                .count();
            let _ = writeln!(
                out,
                "    table {} ({} rows)",
                attr("class").unwrap_or_default(),
                rows.saturating_sub(1)
            );
        }
        rest = &rest[end + 1..];
    }
    out
}

fn strip_tags(s: &str) -> String {
    let mut o = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => o.push(c),
            _ => {}
        }
    }
    o
}
