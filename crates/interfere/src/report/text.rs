//! The table of `disktier interfere`: one row per scenario, the legend and the recommendation.

use super::*;

/// The table, one row per scenario, then the legend of what was applied and the recommendation.
pub fn render_text(doc: &InterfereDoc) -> String {
    let header = [
        "scenario",
        "probe IOPS",
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "max",
        ">100ms",
        ">1s",
        "stdev",
        "etcd",
        "aggressor",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for s in &doc.scenarios {
        if !s.available {
            let mut r = vec![s.name.clone()];
            r.extend(std::iter::repeat_n("-".to_string(), 9));
            r.push("n/a".into());
            r.push("unavailable".into());
            rows.push(r);
            continue;
        }
        let agg = match &s.aggressor {
            None => "-".to_string(),
            Some(a) => format!(
                "{} in {}{}{}",
                bytes(a.bytes),
                secs(a.seconds),
                if s.interrupted {
                    " (interrupted)"
                } else if a.capped {
                    " (capped)"
                } else {
                    ""
                },
                match a.exit {
                    Some(e) if !e.success() && !a.capped && !s.interrupted => {
                        format!(" ({})", e.word())
                    }
                    _ => String::new(),
                }
            ),
        };
        rows.push(vec![
            if s.interrupted {
                format!("{} (interrupted)", s.name)
            } else {
                s.name.clone()
            },
            s.probe_iops
                .map(|i| format!("{i:.0}"))
                .unwrap_or("-".into()),
            ms(s.p(50.0)),
            ms(s.p(99.0)),
            ms(s.p(99.9)),
            ms(s.p(99.99)),
            ms(s.max()),
            stall_cell(s, false),
            stall_cell(s, true),
            ms(s.probe.as_ref().map(|p| p.lat_ns.stdev as u64)),
            s.verdict.name().into(),
            agg,
        ]);
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    out.push_str(&format!(
        "target {}  device {}  scheduler {}  aggressor {}  {} s per scenario\n",
        doc.target,
        doc.device.as_deref().unwrap_or("?"),
        doc.scheduler_before.as_deref().unwrap_or("?"),
        match &doc.aggressor_command {
            Some(c) => format!("command {c:?}"),
            None => format!("{} {}", doc.aggressor_kind, bytes(doc.aggressor_size)),
        },
        doc.duration_s
    ));
    out.push_str("fdatasync latency of the etcd probe (2300-byte writes, fdatasync each):\n\n");
    let line = |cells: Vec<String>| -> String {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == 0 || i == cells.len() - 1 {
                l.push_str(&format!("{:<w$}  ", c, w = widths[i]));
            } else {
                l.push_str(&format!("{:>w$}  ", c, w = widths[i]));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    out.push_str(&line(header.iter().map(|s| s.to_string()).collect()));
    for r in rows {
        out.push_str(&line(r));
    }
    out.push('\n');
    for s in &doc.scenarios {
        if let Some(why) = &s.unavailable_reason {
            out.push_str(&format!("{}: unavailable: {why}\n", s.name));
        }
        for a in &s.applied {
            out.push_str(&format!("{}: applied: {a}\n", s.name));
        }
        for n in &s.notes {
            out.push_str(&format!("{}: note: {n}\n", s.name));
        }
    }
    if doc.interrupted {
        out.push_str("INTERRUPTED (Ctrl-C or a signal): the run stopped early, rows marked interrupted hold partial figures, and every change was undone\n");
    }
    out.push_str(&format!("\n{}\n", doc.recommendation));
    out
}

/// A stall count for the table: exact when the engine counted, "≥1"/"0?" from the max otherwise.
fn stall_cell(s: &Scenario, election: bool) -> String {
    let (el, hb) = stall_counts(s);
    let n = if election { el } else { hb };
    match s.probe.as_ref().map(|p| p.stalls.is_some()) {
        Some(true) => n.to_string(),
        Some(false) if n > 0 => format!(">={n}"),
        Some(false) => "0".into(),
        None => "-".into(),
    }
}
