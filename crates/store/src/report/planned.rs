//! The plan section: each planned option's cost beside what was measured.

use super::bench::Bench;
use super::charts::Bar;
use super::error::ReportError;
use super::fragments::figure;
use super::fragments::ns;
use super::fragments::swatch;
use super::html::esc;
use crate::compare::fmt_count;
use disktier_catalog::plan::StoragePlan;
use std::fmt::Write as _;

pub(super) fn plan_section(
    plan: &StoragePlan,
    benches: &[Bench<'_>],
) -> Result<String, ReportError> {
    let mut s = String::new();
    let req = &plan.requirements;
    let mut need = vec![format!("{} GiB", req.capacity_gib)];
    if let Some(i) = req.iops {
        need.push(format!("{} IOPS", fmt_count(i as f64)));
    }
    if let Some(t) = req.throughput_mibs {
        need.push(format!("{t:.0} MiB/s"));
    }
    let _ = writeln!(s, "<p>Options in <b>{}</b> that meet {}, cheapest first, beside what this report measured.</p>", esc(&plan.region), esc(&need.join(", ")));
    let mut bars = Vec::new();
    s.push_str("<table class=\"plan\">\n<tr><th>option</th><th>per month</th><th>IOPS</th><th>MiB/s</th><th>caveats</th></tr>\n");
    for (i, o) in plan.options.iter().enumerate() {
        let cost = o.monthly_cost_usd;
        let caveats: Vec<String> = o.caveats.iter().map(|c| esc(c)).collect();
        let _ = writeln!(
            s,
            "<tr><td><b>{}</b><br><span class=\"muted\">{}</span></td><td class=\"num\">${cost:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&o.label),
            esc(o.kind.name()),
            o.performance.iops.map(fmt_count).unwrap_or_else(|| "–".into()),
            o.performance.throughput_mibs.map(|t| format!("{t:.0}")).unwrap_or_else(|| "–".into()),
            caveats.join("<br>")
        );
        bars.push(Bar {
            label: super::charts::short(&o.label, 44),
            value: cost,
            color: i,
            text: format!("${cost:.2}/month"),
        });
    }
    s.push_str("</table>\n");
    // The plan's notes (types without a price here, published figures checked against the
    // catalog) as `plan` printed them (QA: the report dropped them).
    for n in &plan.notes {
        let _ = writeln!(s, "<div class=\"note\">{}</div>", esc(n));
    }
    if !bars.is_empty() {
        s.push_str(&figure(
            "cost",
            "options",
            super::charts::bars(&bars, "USD per month", 1000)?,
        ));
    }
    s.push_str("<h3>Measured here</h3>\n<table class=\"measured\">\n<tr><th>target</th><th>profile</th><th>IOPS</th><th>MiB/s</th><th>sync p99</th><th>meets the need</th></tr>\n");
    let need_iops = req.iops.map(|i| i as f64);
    let need_mibs = req.throughput_mibs;
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
            esc(super::bench::target_name(&b.place)),
            // A run cut short is marked here too, as in the charts and the run list (QA: its
            // partial figures were judged "meets the need" unmarked).
            esc(&format!(
                "{}{}",
                b.profile(),
                if b.doc.interrupted {
                    " (interrupted: partial figures)"
                } else {
                    ""
                }
            )),
            fmt_count(iops),
            bw / 1048576.0,
            r.sync.as_ref().and_then(|d| d.lat_ns.p(99.0)).map(ns).unwrap_or_else(|| "–".into()),
        );
    }
    s.push_str("</table>\n");
    Ok(s)
}
