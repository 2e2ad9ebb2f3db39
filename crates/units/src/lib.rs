//! Sizes, durations and rates as users type them: fio's spellings (`22m`, `10G`, `4k`, `60s`),
//! IEC units (`KiB`, `MiB`, `GiB`, `TiB`, `PiB`, `EiB`) and rates (`1000MiB/s`).
//!
//! fio's default `kb_base=1024` makes `k`, `m`, `g`, `t` (and `KB`, `MB`, ...) powers of two; we
//! follow it (fio HOWTO, "Parameter types"). fio's compatibility quirk that reads `KiB` as 1000
//! is *not* followed: `KiB` is 1024 as IEC 80000-13 says, so both spellings agree here.

mod duration;
pub use duration::fmt_duration;

use std::fmt;
use std::time::Duration;

/// Why a size, duration or rate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not a size: use a number with an optional unit, e.g. 4k, 22m, 10G, 36GiB")]
    Size(String),
    #[error(
        "'{0}' is not a duration: use a number with an optional unit, e.g. 500ms, 60s, 2m, 1h"
    )]
    Duration(String),
    #[error("'{0}' is not a rate: use a size per second, e.g. 1000MiB/s, 125M/s")]
    Rate(String),
    #[error("'{0}' is too large")]
    Overflow(String),
    /// A bare number where the unit decides the magnitude (a volume's GiB, a rate's MiB/s):
    /// the input, what a bare number would be, and an example with its unit (the same amount
    /// when the number is large enough to be meant as bytes, else the number with the unit).
    #[error("'{0}' has no unit, and a bare number would be {1}: write the unit, e.g. {2}")]
    NoUnit(String, &'static str, String),
    /// A volume's size in decimal units (`500GB`, `5TB`): the clouds size volumes in GiB, fio
    /// reads GB as 2^30, and a cloud's "GB" table may mean 10^9: either reading would surprise
    /// someone.
    #[error("'{0}' is ambiguous: in decimal units (powers of 1000) it is {1} GiB, in binary ones (powers of 1024, as fio reads them) {2} GiB; write the GiB or TiB you mean (volumes are sized in GiB)")]
    AmbiguousSize(String, String, String),
    /// A volume's rate in decimal megabytes (`125MB/s`): Azure and GCP publish MB/s as 10^6
    /// bytes a second, fio reads MB as 2^20, so either reading would surprise someone.
    #[error("'{0}' is ambiguous: Azure and GCP publish MB/s as 10^6 bytes a second ({1}MiB/s), fio reads MB as 2^20 ({2}MiB/s): write the MiB/s you mean")]
    Ambiguous(String, String, String),
    /// A comma-separated list with an empty item (`none,,x`, `lru,`): the flag, the list and
    /// the item's place.
    #[error("{0} {1:?}: item {2} is empty (two commas in a row, or a comma at the start or end): separate the items with single commas, or drop the extra comma")]
    EmptyItem(&'static str, String, usize),
}

/// The items of the comma-separated list `list` given to `flag`, each trimmed. An empty item
/// (`none,,x`, a trailing comma) is refused: it was dropped before, so a list with a name
/// missing between two commas ran without it and said nothing (QA). A list that is empty or
/// blank as a whole gives no items, for the caller to refuse in its own words.
pub fn comma_items<'a>(flag: &'static str, list: &'a str) -> Result<Vec<&'a str>, UnitError> {
    if list.trim().is_empty() {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(str::trim)
        .enumerate()
        .map(|(i, item)| {
            if item.is_empty() {
                Err(UnitError::EmptyItem(flag, list.to_string(), i + 1))
            } else {
                Ok(item)
            }
        })
        .collect()
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a byte size: `2300`, `4k`, `22m`, `10G`, `36GiB`, `1TiB`, `1.5GiB`, `512b`.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(UnitError::Size(input.to_string()));
    }
    let Some(power) = binary_power(unit) else {
        return Err(UnitError::Size(input.to_string()));
    };
    let mult: u64 = 1 << (10 * power);
    if num.contains('.') {
        let v: f64 = num
            .parse()
            .map_err(|_| UnitError::Size(input.to_string()))?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes > u64::MAX as f64 {
            return Err(UnitError::Overflow(input.to_string()));
        }
        Ok(bytes.round() as u64)
    } else {
        // split_number kept only digits here, so a failed parse is a number past u64.
        let v: u64 = num
            .parse()
            .map_err(|_| UnitError::Overflow(input.to_string()))?;
        v.checked_mul(mult)
            .ok_or_else(|| UnitError::Overflow(input.to_string()))
    }
}

/// Whether `c` would make a terminal show something other than the text: a control character
/// (C0 such as newline, carriage return and escape, DEL, C1 such as U+009B, the 8-bit CSI), or a
/// bidirectional formatting character (Unicode UAX #9, "Explicit Directional Formatting
/// Characters": the embeddings and overrides U+202A..U+202E, the isolates U+2066..U+2069, and
/// the marks U+200E, U+200F and U+061C), which reorders what follows it on screen (the
/// "Trojan Source" trick, CVE-2021-42574). Other text (é, 日本語) is not in question.
pub fn unsafe_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

/// `s` with every character [`unsafe_on_terminal`] (newline, escape, bell, a bidi override, ...)
/// written as its Rust escape (`\n`, `\u{1b}`, `\u{202e}`), the rest unchanged: a name from
/// outside (a stored target, a region in a price list) that cannot break a line of text, send a
/// terminal an escape sequence or show its text reordered.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if unsafe_on_terminal(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Parses a size as fio reads it with its default `kb_base=1024`: `k`, `KB`, `M`, `MB`... are
/// powers of 1,024, but the IEC units `KiB`, `MiB`... are powers of 1,000 (fio's HOWTO,
/// `kb_base`: its compatibility mode inverts them). For what fio itself ran (`import fio`);
/// disktier's own options read `KiB` as 1,024 ([`parse_size`]).
pub fn parse_fio_size(input: &str) -> Result<u64, UnitError> {
    parse_fio_size_with(input, 1024)
}

/// [`parse_fio_size`] under a job's `kb_base`: 1024 (fio's default) reads `k`/`KB` as 1,024
/// and `KiB` as 1,000; 1000 reads them the SI/IEC way round (`k` 1,000, `KiB` 1,024).
pub fn parse_fio_size_with(input: &str, kb_base: u32) -> Result<u64, UnitError> {
    let s = input.trim();
    let (num, unit) = split_number(s);
    let thousands = is_iec(unit) == (kb_base == 1024);
    if !thousands || unit.is_empty() || unit.eq_ignore_ascii_case("b") {
        return parse_size(input);
    }
    let power = binary_power(unit).ok_or_else(|| UnitError::Size(input.to_string()))?;
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::Size(input.to_string()))?;
    let bytes = v * 1000f64.powi(power as i32);
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    Ok(bytes.round() as u64)
}

/// Whether a size's unit is an IEC one (`KiB`, `MiB`, ...), which fio's default `kb_base`
/// reads as powers of 1,000 and disktier as powers of 1,024.
pub fn is_iec(unit: &str) -> bool {
    let u = unit.trim().to_ascii_lowercase();
    u.len() == 3 && u.ends_with("ib") && binary_power(&u).is_some()
}

/// The power of 1,024 a size unit stands for (`k` and `KB` alike, as fio), if it is one.
fn binary_power(unit: &str) -> Option<u32> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 2,
        "g" | "gb" | "gib" => 3,
        "t" | "tb" | "tib" => 4,
        "p" | "pb" | "pib" => 5,
        // QA: 8EiB (2^63, a size u64 holds) was "not a size", as if EiB were no unit.
        "e" | "eb" | "eib" => 6,
        _ => return None,
    })
}

/// Parses a duration: `60s`, `60` (seconds, as fio), `500ms`, `2m`, `1h`, `100us`, `1.5s`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let s = input.trim();
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(UnitError::Duration(input.to_string()));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::Duration(input.to_string()))?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => v,
        "ms" | "msec" => v / 1e3,
        "us" | "usec" => v / 1e6,
        "ns" | "nsec" => v / 1e9,
        "m" | "min" | "mins" => v * 60.0,
        "h" | "hr" | "hour" | "hours" => v * 3600.0,
        "d" | "day" | "days" => v * 86400.0,
        _ => return Err(UnitError::Duration(input.to_string())),
    };
    if !secs.is_finite() || secs > 1e12 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a rate in bytes per second: `1000MiB/s`, `125M/s`, `250MiB/s`. A bare size is read as
/// per second too (`1000MiB`).
pub fn parse_rate(input: &str) -> Result<u64, UnitError> {
    parse_size(rate_body(input)).map_err(|_| UnitError::Rate(input.to_string()))
}

/// The size part of a rate: `125MiB` of `125MiB/s` or `125MiBps`.
fn rate_body(input: &str) -> &str {
    let s = input.trim();
    s.strip_suffix("/s")
        .or_else(|| s.strip_suffix("ps"))
        .unwrap_or(s)
}

/// Whether `s` is only a number, with no unit after it (what it is worth is the parser's to say).
fn bare_number(s: &str) -> bool {
    let (num, unit) = split_number(s.trim());
    !num.is_empty() && unit.is_empty()
}

/// A size whose unit is written out (`200GiB`, `5TiB`, `2300B`), for a cloud volume's size:
/// there a bare `2000` (bytes, as fio reads it) is almost always meant as GiB, so it is refused
/// rather than read as a 1 GiB volume.
pub fn parse_size_with_unit(input: &str) -> Result<u64, UnitError> {
    let v = parse_size(input)?;
    if bare_number(input) {
        let t = input.trim();
        // 5497558138880 is 5 TiB in bytes, not 5497558138880 GiB (QA).
        let example = if v >= 1 << 30 {
            Bytes(v).to_string().replace(' ', "")
        } else if v == 0 {
            // 0GiB would be refused next: show a size that is not.
            "100GiB".to_string()
        } else {
            format!("{t}GiB")
        };
        return Err(UnitError::NoUnit(t.to_string(), "bytes", example));
    }
    // `GB`, `TB` written out: refused as the rate's `MB/s` is (QA: `5TB` was read as 5 TiB).
    if let Some((dec, bin)) = decimal_readings(input.trim(), 30) {
        return Err(UnitError::AmbiguousSize(input.trim().to_string(), dec, bin));
    }
    Ok(v)
}

/// For an amount whose unit is written out in decimal letters (`MB`, `GB`, `TB`): what it is
/// in units of 2^`shift` bytes read as 10^3k (the clouds' tables) and as 2^10k (fio), each as
/// the figure a user would type (`119.2`, `125`: no ".0"). None for `MiB`, `M` and bytes.
fn decimal_readings(amount: &str, shift: u32) -> Option<(String, String)> {
    let (num, unit) = split_number(amount);
    let n = num.parse::<f64>().ok().filter(|_| unit.len() >= 2)?;
    let written_out = !unit.to_ascii_lowercase().contains('i');
    let k = binary_power(unit).filter(|&k| written_out && k >= 1)?;
    let reading = |base: f64| {
        let v = n * base.powi(k as i32) / 2f64.powi(shift as i32);
        format!("{v:.1}").trim_end_matches(".0").to_string()
    };
    Some((reading(1000.0), reading(1024.0)))
}

/// A rate whose unit is written out (`1000MiB/s`), for a volume's throughput: a bare `400`
/// would be 400 bytes a second.
pub fn parse_rate_with_unit(input: &str) -> Result<u64, UnitError> {
    let v = parse_rate(input)?;
    if bare_number(input) {
        let t = input.trim();
        let example = if v >= 1 << 20 {
            format!("{}/s", Bytes(v).to_string().replace(' ', ""))
        } else {
            format!("{t}MiB/s")
        };
        return Err(UnitError::NoUnit(
            t.to_string(),
            "bytes per second",
            example,
        ));
    }
    // `KB`, `MB`, ... written out: 10^3k as the clouds' tables mean, or 2^10k as fio.
    if let Some((dec, bin)) = decimal_readings(rate_body(input), 20) {
        return Err(UnitError::Ambiguous(input.trim().to_string(), dec, bin));
    }
    Ok(v)
}

/// A latency whose unit is written out (`10ms`, `500us`), for a latency limit: there a bare
/// `10` (seconds, as fio reads a bare time) is almost always meant as the 10 ms etcd's docs
/// give, and would make a check pass on a disk a thousand times too slow (QA:
/// `check etcd --threshold 10` passed a p99 of 15.9 ms as "within the recommended threshold -
/// 10 s"), so it is refused.
pub fn parse_latency_with_unit(input: &str) -> Result<Duration, UnitError> {
    let d = parse_duration(input)?;
    if bare_number(input) {
        let t = input.trim();
        // 0ms would be refused next (a limit of 0 never passes): show one that is not.
        let example = if d.is_zero() {
            "10ms".into()
        } else {
            format!("{t}ms")
        };
        return Err(UnitError::NoUnit(t.to_string(), "seconds", example));
    }
    Ok(d)
}

/// A byte count printed with binary units, e.g. `22 MiB`, `1.5 GiB`, `2300 B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i < UNITS.len() - 1 {
            v /= 1024.0;
            i += 1;
        }
        // Whole units only when exact: u64::MAX is 16384 PiB as an f64, but not as bytes.
        let unit = 1u64 << (10 * i);
        if self.0.is_multiple_of(unit) {
            write!(f, "{} {}", self.0 / unit, UNITS[i])
        } else {
            write!(f, "{:.2} {}", v, UNITS[i])
        }
    }
}

/// A latency in nanoseconds printed in the unit a person reads: `850 ns`, `203.8 us`, `4.05 ms`, `1.94 s`.
pub fn fmt_ns(ns: f64) -> String {
    // The unit is the one the value prints in without reaching 1000 once rounded (QA: 999.96 us
    // printed as "1000.0 us", where `compare` says "1.00 ms").
    if ns < 999.5 {
        format!("{ns:.0} ns")
    } else if ns < 999_950.0 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 999_995_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// clap value parsers, so that argument structs hold checked numbers.
pub mod clap_parsers {
    use super::*;
    pub fn size(s: &str) -> Result<u64, String> {
        parse_size(s).map_err(|e| e.to_string())
    }
    pub fn duration(s: &str) -> Result<Duration, String> {
        parse_duration(s).map_err(|e| e.to_string())
    }
    pub fn rate(s: &str) -> Result<u64, String> {
        parse_rate(s).map_err(|e| e.to_string())
    }
    /// [`parse_latency_with_unit`](super::parse_latency_with_unit): a latency limit.
    pub fn latency(s: &str) -> Result<Duration, String> {
        parse_latency_with_unit(s).map_err(|e| e.to_string())
    }
    /// [`parse_size_with_unit`](super::parse_size_with_unit): a volume's size.
    pub fn volume_size(s: &str) -> Result<u64, String> {
        parse_size_with_unit(s).map_err(|e| e.to_string())
    }
    /// [`parse_rate_with_unit`](super::parse_rate_with_unit): a volume's throughput.
    pub fn volume_rate(s: &str) -> Result<u64, String> {
        parse_rate_with_unit(s).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comma_list_with_an_empty_item_is_refused() {
        assert_eq!(comma_items("--x", " a , b").unwrap(), ["a", "b"]);
        assert!(comma_items("--x", " ").unwrap().is_empty());
        for (list, n) in [("none,,x", 2), ("lru,", 2), (",a", 1), ("a, ,b", 2)] {
            assert_eq!(
                comma_items("--x", list),
                Err(UnitError::EmptyItem("--x", list.into(), n))
            );
        }
        assert_eq!(
            comma_items("--mitigations", "none,,x").unwrap_err().to_string(),
            "--mitigations \"none,,x\": item 2 is empty (two commas in a row, or a comma at the start or end): separate the items with single commas, or drop the extra comma"
        );
    }

    #[test]
    fn bidi_controls_and_c1_are_escaped_and_other_text_kept() {
        assert_eq!(
            printable("a\u{202e}b\u{2066}c\u{2069}\u{200e}\u{200f}\u{61c}\u{9b}2J\r"),
            "a\\u{202e}b\\u{2066}c\\u{2069}\\u{200e}\\u{200f}\\u{61c}\\u{9b}2J\\r"
        );
        assert_eq!(printable("/mnt/数据/é"), "/mnt/数据/é");
        // A zero-width joiner is not a directional control (emoji use it).
        assert!(!unsafe_on_terminal('\u{200d}'));
    }

    #[test]
    fn the_largest_size_is_not_shown_as_a_whole_unit() {
        // Found by fuzz_size: f64 rounding showed u64::MAX as "16384 PiB", which does not
        // parse back (it overflows).
        assert_eq!(Bytes(u64::MAX).to_string(), "16384.00 PiB");
        assert_eq!(Bytes(3 << 30).to_string(), "3 GiB");
    }

    /// QA (session 15): `--size 5TB` was read as 5 TiB while `1000MB/s` was refused as
    /// ambiguous, and a bare byte count was told to become that many GiB.
    #[test]
    fn a_volume_size_in_decimal_units_is_ambiguous_and_bytes_are_shown_as_bytes() {
        for (input, dec, bin) in [("5TB", "4656.6", "5120"), ("500GB", "465.7", "500")] {
            let e = parse_size_with_unit(input).unwrap_err().to_string();
            assert!(
                e.contains(&format!("it is {dec} GiB"))
                    && e.contains(&format!("as fio reads them) {bin} GiB")),
                "{e}"
            );
        }
        assert_eq!(parse_size_with_unit("500G").unwrap(), 500 << 30);
        assert_eq!(parse_size_with_unit("5TiB").unwrap(), 5 << 40);
        let e = parse_size_with_unit("5497558138880")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("e.g. 5TiB"), "{e}");
        let e = parse_rate_with_unit("1048576000").unwrap_err().to_string();
        assert!(e.ends_with("e.g. 1000MiB/s"), "{e}");
    }

    #[test]
    fn a_volume_size_or_rate_needs_its_unit() {
        assert_eq!(parse_size_with_unit("200GiB").unwrap(), 200 << 30);
        assert_eq!(parse_size_with_unit("2300B").unwrap(), 2300);
        assert_eq!(parse_rate_with_unit("250MiB/s").unwrap(), 250 << 20);
        for bare in ["2000", " 100 ", "1.5"] {
            let e = parse_size_with_unit(bare).unwrap_err().to_string();
            assert!(
                e.contains("has no unit") && e.contains("GiB"),
                "{bare}: {e}"
            );
            let e = parse_rate_with_unit(bare).unwrap_err().to_string();
            assert!(
                e.contains("bytes per second") && e.contains("MiB/s"),
                "{bare}: {e}"
            );
        }
        // Decimal megabytes written out are refused with both readings; MiB/s and fio's M/s pass.
        assert_eq!(
            parse_rate_with_unit("125MB/s").unwrap_err().to_string(),
            "'125MB/s' is ambiguous: Azure and GCP publish MB/s as 10^6 bytes a second (119.2MiB/s), fio reads MB as 2^20 (125MiB/s): write the MiB/s you mean"
        );
        for amb in ["1GBps", "500kb/s", "2 MB/s"] {
            assert!(
                matches!(parse_rate_with_unit(amb), Err(UnitError::Ambiguous(..))),
                "{amb}"
            );
        }
        assert_eq!(parse_rate_with_unit("125M/s").unwrap(), 125 << 20);
        assert_eq!(parse_rate_with_unit("125MiBps").unwrap(), 125 << 20);
        // A number past u64 is too large, not "not a size".
        assert!(matches!(
            parse_size("99999999999999999999GiB"),
            Err(UnitError::Overflow(_))
        ));
        // Not bare numbers: the usual errors.
        assert!(matches!(
            parse_size_with_unit("lots"),
            Err(UnitError::Size(_))
        ));
        assert!(matches!(parse_size_with_unit(""), Err(UnitError::Size(_))));
        assert!(matches!(parse_size_with_unit("."), Err(UnitError::Size(_))));
    }

    #[test]
    fn fio_reads_iec_units_as_powers_of_1000() {
        // fio's kb_base=1024 (its default): KiB is 1000, k and KB are 1024 (QA: an import of
        // a bs=4KiB job said 4096 while fio wrote 4000-byte blocks).
        assert_eq!(parse_fio_size("4KiB"), Ok(4000));
        assert_eq!(parse_fio_size("400kib"), Ok(400_000));
        assert_eq!(parse_fio_size("1.5MiB"), Ok(1_500_000));
        assert_eq!(parse_fio_size("4k"), Ok(4096));
        assert_eq!(parse_fio_size("4KB"), Ok(4096));
        assert_eq!(parse_fio_size("2300"), Ok(2300));
        assert!(parse_fio_size("4XiB").is_err());
        assert!(parse_fio_size("99999999999EiB").is_err());
        assert!(is_iec("MiB") && !is_iec("MB") && !is_iec("b") && !is_iec("xib"));
        // kb_base=1000 turns it round: k is 1000, KiB 1024 (review).
        assert_eq!(parse_fio_size_with("4k", 1000), Ok(4000));
        assert_eq!(parse_fio_size_with("4KiB", 1000), Ok(4096));
        assert_eq!(parse_fio_size_with("2300", 1000), Ok(2300));
        assert_eq!(parse_fio_size_with("512b", 1000), Ok(512));
    }

    #[test]
    fn fio_sizes_are_powers_of_two() {
        assert_eq!(parse_size("2300").unwrap(), 2300);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("22m").unwrap(), 22 * 1024 * 1024);
        assert_eq!(parse_size("10G").unwrap(), 10 << 30);
        assert_eq!(parse_size("36GiB").unwrap(), 36 << 30);
        assert_eq!(parse_size("1TiB").unwrap(), 1 << 40);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size(" 8 KiB ").unwrap(), 8192);
    }

    #[test]
    fn bad_sizes_are_refused() {
        for bad in ["", "k", "12x", "1..2G", "-4k", "GiB"] {
            assert!(parse_size(bad).is_err(), "{bad} should be refused");
        }
        assert!(matches!(
            parse_size("99999999999P"),
            Err(UnitError::Overflow(_))
        ));
        // An exbibyte is a unit: 8 EiB fits, 16 EiB is one past u64 (QA: both were "not a
        // size").
        assert_eq!(parse_size("8EiB").unwrap(), 1 << 63);
        assert_eq!(parse_size("1e").unwrap(), 1 << 60);
        assert_eq!(
            parse_size("16EiB"),
            Err(UnitError::Overflow("16EiB".into()))
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("60").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn a_latency_limit_needs_its_unit() {
        assert_eq!(
            parse_latency_with_unit("10ms").unwrap(),
            Duration::from_millis(10)
        );
        assert_eq!(
            parse_latency_with_unit("1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        let e = parse_latency_with_unit("10").unwrap_err().to_string();
        assert_eq!(
            e,
            "'10' has no unit, and a bare number would be seconds: write the unit, e.g. 10ms"
        );
        assert!(parse_latency_with_unit("fast").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1000MiB/s").unwrap(), 1000 << 20);
        assert_eq!(parse_rate("125M/s").unwrap(), 125 << 20);
        assert_eq!(parse_rate("250MiB").unwrap(), 250 << 20);
        assert!(parse_rate("lots/s").is_err());
    }

    #[test]
    fn display() {
        assert_eq!(Bytes(1000).to_string(), "1000 B");
        assert_eq!(Bytes(2300).to_string(), "2.25 KiB");
        assert_eq!(Bytes(22 << 20).to_string(), "22 MiB");
        assert_eq!(Bytes(3 << 29).to_string(), "1.50 GiB");
        assert_eq!(fmt_ns(203_776.0), "203.8 us");
        assert_eq!(fmt_ns(4_046_848.0), "4.05 ms");
        // A value that rounds up to 1000 of its unit takes the next one (QA: "1000.0 us").
        assert_eq!(fmt_ns(999.4), "999 ns");
        assert_eq!(fmt_ns(999.6), "1.0 us");
        assert_eq!(fmt_ns(999_940.0), "999.9 us");
        assert_eq!(fmt_ns(999_960.0), "1.00 ms");
        assert_eq!(fmt_ns(999_996_000.0), "1.00 s");
    }
}
