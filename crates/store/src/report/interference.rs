//! The interference section: each scenario's stalls and latencies against the limits.

use super::charts::Curve;
use super::error::ReportError;
use super::fragments::figure;
use super::fragments::interfere_limit;
use super::fragments::legend;
use super::fragments::ns;
use super::fragments::num;
use super::fragments::swatch;
use super::html::esc;
use crate::compare::{fmt_count, fmt_value, Unit};
use crate::StoredRun;
use disktier_engine::{DirStats, PERCENTILES};
use serde_json::Value;
use std::fmt::Write as _;

pub(super) fn interfere_section(runs: &[&StoredRun]) -> Result<String, ReportError> {
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
                super::charts::percentiles(
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
