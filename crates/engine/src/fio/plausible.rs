//! Figures fio cannot have written, found before an import shows them: an edited or damaged
//! JSON is refused with what is wrong in it (QA: 1e308 IOPS and a p99 of -7 ns were shown).

use super::value::num;
use serde_json::Value;

/// A figure as the message shows it: `1e308`, not 309 digits.
fn shown(v: f64) -> String {
    if v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// What fio cannot have written in one direction (`at` names it): a negative figure, more
/// IOPS or bytes/s than its I/Os could make in fio's shortest runtime (1 ms: fio counts in
/// milliseconds, and with group_reporting it adds each job's rate, which is still at most
/// the group's I/Os per millisecond), or latency percentiles that are negative or fall.
pub(super) fn direction(dir: &Value, at: &str) -> Result<(), String> {
    for key in ["iops", "bw_bytes", "io_bytes", "total_ios", "runtime"] {
        let v = num(dir, key);
        if !v.is_finite() {
            return Err(format!("{at}.{key} is {v}, not a number fio counts"));
        }
        if v < 0.0 {
            return Err(format!(
                "{at}.{key} is {}, and fio counts no less than 0",
                shown(v)
            ));
        }
    }
    let (iops, ios) = (num(dir, "iops"), num(dir, "total_ios"));
    if iops > ios * 1000.0 {
        return Err(format!(
            "{at}.iops is {}, more than its total_ios ({}) can make in fio's shortest runtime (1 ms)",
            shown(iops),
            shown(ios)
        ));
    }
    let (bw, bytes) = (num(dir, "bw_bytes"), num(dir, "io_bytes"));
    if bw > bytes * 1000.0 {
        return Err(format!(
            "{at}.bw_bytes is {}, more than its io_bytes ({}) can make in fio's shortest runtime (1 ms)",
            shown(bw),
            shown(bytes)
        ));
    }
    for block in ["clat_ns", "lat_ns", "slat_ns"] {
        percentiles(dir.get(block), &format!("{at}.{block}"))?;
    }
    Ok(())
}

/// A latency block's percentiles: none negative, none below a lower percentile's.
pub(super) fn percentiles(block: Option<&Value>, at: &str) -> Result<(), String> {
    let Some(Value::Object(map)) = block.and_then(|b| b.get("percentile")) else {
        return Ok(());
    };
    let mut points: Vec<(f64, f64)> = map
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()?)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, &(p, ns)) in points.iter().enumerate() {
        if ns < 0.0 {
            return Err(format!("{at}.percentile {p} is {} ns, below 0", shown(ns)));
        }
        if let Some(&(lp, lns)) = i.checked_sub(1).map(|k| &points[k]) {
            if ns < lns {
                return Err(format!(
                    "{at}.percentile {p} is {} ns, below percentile {lp} ({} ns): fio's percentiles never fall",
                    shown(ns),
                    shown(lns)
                ));
            }
        }
    }
    Ok(())
}
