//! The interference section: each scenario's stalls and latencies against the limits.

use super::charts::Curve;
use super::error::ReportError;
use super::fragments::figure;
use super::fragments::interfere_limit;
use super::fragments::legend;
use super::fragments::ns;
use super::fragments::swatch;
use super::html::esc;
use crate::compare::{fmt_count, fmt_value, Unit};
use crate::StoredRun;
use disktier_engine::{DirStats, PERCENTILES};
use disktier_interfere::report::{InterfereDoc, ScenarioVerdict};
use std::fmt::Write as _;

pub(super) fn interfere_section(
    runs: &[(&StoredRun, &InterfereDoc)],
) -> Result<String, ReportError> {
    let mut s = String::from("<p class=\"muted\">The probe is an etcd-like fdatasync writer; each scenario adds a bulk writer (the aggressor) and a mitigation. Lower curves are better.</p>\n");
    for (run, doc) in runs {
        let mut curves = Vec::new();
        let mut table = String::from("<table class=\"interfere\">\n<tr><th>scenario</th><th>mitigation</th><th>probe p99</th><th>probe p99.9</th><th>probe IOPS</th><th>aggressor</th><th>verdict</th></tr>\n");
        for (i, sc) in doc.scenarios.iter().enumerate() {
            let name = sc.name.as_str();
            // The baseline has no mitigation (and no writer): "–", not the `none` scenario's name.
            let mitigation = sc.mitigation.as_deref().unwrap_or("–");
            let probe: Option<&DirStats> = sc.probe.as_ref();
            if let Some(p) = probe {
                let points: Vec<(f64, u64)> = PERCENTILES
                    .iter()
                    .filter_map(|q| p.lat_ns.p(*q).map(|v| (*q, v)))
                    .collect();
                if !points.is_empty() {
                    curves.push(Curve {
                        label: name.to_string(),
                        color: i,
                        style: i,
                        points,
                    });
                }
            }
            let aggressor = match &sc.aggressor {
                Some(a) if a.seconds > 0.0 => {
                    fmt_value(Unit::BytesPerSec, a.bytes as f64 / a.seconds)
                }
                Some(_) => "–".into(),
                None => "none".into(),
            };
            let aggressor = match &sc.aggressor {
                Some(_) if sc.interrupted => format!("{aggressor} (interrupted)"),
                Some(a) if a.capped => format!("{aggressor} (capped)"),
                _ => aggressor,
            };
            let verdict = {
                let v = sc.verdict.name();
                let class = match sc.verdict {
                    ScenarioVerdict::Pass => "pass",
                    ScenarioVerdict::Fail => "fail",
                    ScenarioVerdict::Unavailable => "info",
                };
                let why = sc
                    .unavailable_reason
                    .as_deref()
                    .map(|r| format!(" {}", esc(r)))
                    .unwrap_or_default();
                let cut = if sc.interrupted {
                    " <span class=\"badge info\">interrupted: partial figures</span>"
                } else {
                    ""
                };
                format!("<span class=\"badge {class}\">{}</span>{cut}{why}", esc(v))
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
                sc.probe_iops.map(fmt_count).unwrap_or_else(|| "–".into()),
                esc(&aggressor),
            );
        }
        table.push_str("</table>\n");
        let target = doc.target.as_str();
        let _ = writeln!(
            s,
            "<h3><span class=\"mono\">{}</span> <span class=\"muted\">run {}</span></h3>",
            esc(target),
            esc(&run.summary.id)
        );
        if doc.interrupted {
            let _ = writeln!(
                s,
                "<p class=\"note\">This run was interrupted (Ctrl-C or a signal): {}; every change was undone.</p>",
                match doc.scenarios.iter().filter(|sc| sc.interrupted).map(|sc| esc(&sc.name)).collect::<Vec<_>>() {
                    cut if cut.is_empty() => "the scenarios after the last row were not run".to_string(),
                    cut => format!("{} stopped early and {} partial figures", cut.join(", "), if cut.len() == 1 { "has" } else { "have" }),
                }
            );
        }
        let _ = writeln!(s, "<p><b>{}</b></p>", esc(&doc.recommendation));
        if !curves.is_empty() {
            s.push_str(&figure(
                "interfere",
                &run.summary.id,
                super::charts::percentiles(
                    &curves,
                    "probe fdatasync latency",
                    1000,
                    interfere_limit(doc.threshold_ns),
                )?,
            ));
            s.push_str(&legend(&curves));
        }
        s.push_str(&table);
    }
    Ok(s)
}
