//! A duration shown the way it is typed: `0s`, `90s`, `1500ms`, `250us` — what
//! [`super::parse_duration`] and a fio job file read back — rather than Rust's `Debug` (`0ns`,
//! `1.5s`) or a latency's `1.50 s`. One unit, as fio's time options take it (fio HOWTO,
//! "Parameter types": a time is an integer with an optional suffix, no compound `1m30s`).

use std::time::Duration;

/// `d` in the largest of s, ms, us and ns that shows it as a whole number (QA: `interfere
/// --duration 0s` was echoed "0ns", `--aggressor-cap 1s` "1.00 s"). The run documents' job
/// options are written the same way (`disktier_engine`'s `runtime`, `ramp_time`).
pub fn fmt_duration(d: Duration) -> String {
    let n = d.as_nanos();
    if n.is_multiple_of(1_000_000_000) {
        format!("{}s", d.as_secs())
    } else if n.is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else if n.is_multiple_of(1_000) {
        format!("{}us", d.as_micros())
    } else {
        format!("{n}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_duration;

    #[test]
    fn a_duration_is_shown_as_typed_and_reads_back() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_secs(45), "45s"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_millis(999), "999ms"),
            (Duration::from_micros(250), "250us"),
            (Duration::from_nanos(7), "7ns"),
        ];
        for (d, shown) in cases {
            assert_eq!(fmt_duration(d), shown);
            assert_eq!(parse_duration(shown).unwrap(), d, "{shown}");
        }
    }
}
