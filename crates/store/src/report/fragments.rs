//! Small pieces of the report's HTML: figures, legends, swatches, numbers, and the limit
//! lines drawn on charts.

use super::charts::Curve;
use super::html::esc;
use std::fmt::Write as _;

/// The line drawn on etcd charts: fdatasync p99 must stay under 10 ms (docs/sources.md
/// [ocp-etcd-practices], [ocp-etcd-perf]).
pub(super) fn etcd_limit(profile: &str) -> Option<super::charts::Limit> {
    profile.starts_with("etcd").then(|| super::charts::Limit {
        ns: disktier_engine::verdict::ETCD_SYNC_P99_THRESHOLD_NS,
        label: "etcd limit: p99 under 10 ms".into(),
    })
}

/// The interfere run's own threshold (its `--threshold`, 10 ms by default as for etcd).
pub(super) fn interfere_limit(ns: u64) -> Option<super::charts::Limit> {
    Some(super::charts::Limit {
        ns,
        label: format!("threshold {}", ns_str(ns)),
    })
}

pub(super) fn ns_str(v: u64) -> String {
    disktier_units::fmt_ns(v as f64)
}

pub(super) fn figure(kind: &str, key: &str, svg: String) -> String {
    format!(
        "<figure class=\"chart\" data-chart=\"{}:{}\">\n{svg}</figure>\n",
        kind,
        esc(key)
    )
}

/// A legend in HTML under a chart whose lines are coloured per target or scenario.
pub(super) fn legend(curves: &[Curve]) -> String {
    let mut s = String::from("<div class=\"legend\">");
    for c in curves {
        let _ = write!(
            s,
            "<span>{}{}</span>",
            styled_swatch(c.color, c.style),
            esc(&c.label)
        );
    }
    s.push_str("</div>\n");
    s
}

/// The colour (and past 8 series the dash pattern and marker, see [`super::charts::dash`])
/// that series `color` is drawn in.
pub(super) fn swatch(color: usize) -> String {
    styled_swatch(color, color)
}

/// A swatch in colour `color` with the dash pattern and marker of `style`.
pub(super) fn styled_swatch(color: usize, style: usize) -> String {
    let c = super::charts::css_color(color);
    match super::charts::dash(style) {
        super::charts::Dash::Solid => {
            format!("<span class=\"swatch\" style=\"background:{c}\"></span>")
        }
        d => format!(
            "<span class=\"swatch line\" style=\"border-top:3px {} {c}\"></span><span class=\"mark\" style=\"color:{c}\">{}</span>",
            d.css(),
            d.glyph()
        ),
    }
}

pub(super) fn ns(v: u64) -> String {
    disktier_units::fmt_ns(v as f64)
}
