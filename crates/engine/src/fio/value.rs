//! Numbers read from fio's JSON: fio writes some as strings, and a missing or unreadable one
//! counts as 0.

use serde_json::Value;

/// A number field, as a float.
pub(super) fn num(v: &Value, key: &str) -> f64 {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub(super) fn int(v: &Value, key: &str) -> u64 {
    let f = num(v, key);
    if f.is_finite() && f > 0.0 {
        f.round() as u64
    } else {
        0
    }
}
