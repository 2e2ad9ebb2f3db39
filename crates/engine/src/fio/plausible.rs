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
    counts(
        dir,
        at,
        &["iops", "bw_bytes", "io_bytes", "total_ios", "runtime"],
    )?;
    let (iops, ios) = (num(dir, "iops"), num(dir, "total_ios"));
    // Each read or write moves at least one byte (QA: total_ios 18446744073709551615 over
    // 2 MiB was shown as the write row's count).
    if dir.get("io_bytes").is_some() && ios > num(dir, "io_bytes") {
        return Err(format!(
            "{at}.total_ios is {}, more than its io_bytes ({}): each I/O moves at least one byte",
            shown(ios),
            shown(num(dir, "io_bytes"))
        ));
    }
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
        if let Some(b) = dir.get(block) {
            latency(b, &format!("{at}.{block}"))?;
        }
    }
    Ok(())
}

/// The fields `keys` of `v`, each absent or a finite number not below 0 (fio writes some as
/// strings: "NaN" or "-5" there is not fio's either).
fn counts(v: &Value, at: &str, keys: &[&str]) -> Result<(), String> {
    for key in keys {
        let x = num(v, key);
        if !x.is_finite() {
            return Err(format!("{at}.{key} is {x}, not a number fio counts"));
        }
        if x < 0.0 {
            return Err(format!(
                "{at}.{key} is {}, and fio counts no less than 0",
                shown(x)
            ));
        }
    }
    Ok(())
}

/// A latency block (`clat_ns`, `lat_ns`, `slat_ns`, `sync.lat_ns`): its counts finite and not
/// negative, its min not above its max, its percentiles numbers that neither go below 0 nor
/// fall.
pub(super) fn latency(block: &Value, at: &str) -> Result<(), String> {
    counts(block, at, &["min", "max", "mean", "stddev", "N"])?;
    let (min, max) = (num(block, "min"), num(block, "max"));
    if num(block, "N") > 0.0 && min > max {
        return Err(format!(
            "{at}.min is {} ns, above its max ({} ns)",
            shown(min),
            shown(max)
        ));
    }
    let Some(Value::Object(map)) = block.get("percentile") else {
        return Ok(());
    };
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(map.len());
    for (k, v) in map {
        let Ok(p) = k.parse::<f64>() else { continue };
        let Some(ns) = v.as_f64() else {
            return Err(format!("{at}.percentile {p} is {v}, not a number of ns"));
        };
        points.push((p, ns));
    }
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
