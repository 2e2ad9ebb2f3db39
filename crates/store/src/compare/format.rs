//! How compared figures print: "0.204 ms vs 4.05 ms", "19.9x", "45.2k", aligned columns. The
//! text of history, show, assess and the report uses them too.

use super::Unit;

/// "1.04x" below 1.1 (QA: "1.0x higher (better)" read as no difference), "19.9x" below 100,
/// "180x" above.
pub fn fmt_factor(f: f64) -> String {
    if f < 1.095 {
        format!("{f:.2}x")
    } else if !reaches(f, 1.0, 100.0, 1) {
        format!("{f:.1}x")
    } else {
        format!("{f:.0}x")
    }
}

/// Two values in the same unit, picked for the larger one, so "0.204 ms vs 4.05 ms" reads at a glance.
pub fn fmt_pair(unit: Unit, a: f64, b: f64) -> (String, String) {
    let mut v = fmt_row(unit, &[a, b]).into_iter();
    let a = v.next().unwrap_or_default();
    (a, v.next().unwrap_or_default())
}

/// Values to be read side by side (a row of `compare`), in one unit picked for the largest:
/// "10.4 MiB/s  0.853 MiB/s", not "10.4 MiB/s  873.7 KiB/s" (QA: a pair in two units had to be
/// converted before it could be compared by eye). Counts keep their own suffixes.
///
/// The unit is the one the largest value prints in without reaching the next one's 1000 (or
/// 1024): 999.96 us is "1.00 ms", not "1000.0 us" (QA: a row of "1000.0 us" and "1024.0
/// MiB/s", which read as a unit picked wrong).
pub fn fmt_row(unit: Unit, values: &[f64]) -> Vec<String> {
    let m = values.iter().copied().fold(0.0, f64::max);
    let f = |v: f64| match unit {
        Unit::Ns => {
            let (div, name) = if reaches(m, 1e6, 1000.0, 2) {
                (1e9, "s")
            } else if reaches(m, 1e3, 1000.0, 1) {
                (1e6, "ms")
            } else if reaches(m, 1.0, 1000.0, 0) {
                (1e3, "us")
            } else {
                (1.0, "ns")
            };
            if name == "ns" {
                format!("{v:.0} ns")
            } else if name == "us" {
                format!("{} us", fixed(v / div, 1))
            } else {
                format!("{} {name}", fixed(v / div, 2))
            }
        }
        Unit::BytesPerSec => {
            const MIB: f64 = 1024.0 * 1024.0;
            const GIB: f64 = 1024.0 * MIB;
            if reaches(m, MIB, 1024.0, 1) {
                format!("{} GiB/s", fixed(v / GIB, 2))
            } else if reaches(m, 1024.0, 1024.0, 1) {
                format!("{} MiB/s", fixed(v / MIB, 1))
            } else {
                format!("{} KiB/s", fixed(v / 1024.0, 1))
            }
        }
        _ => fmt_value(unit, v),
    };
    values.iter().map(|&v| f(v)).collect()
}

/// Whether `v`, printed in units of `div` with `decimals` decimals, reads `next` or more:
/// the value belongs in the next unit up (999.96 us prints as "1000.0 us").
fn reaches(v: f64, div: f64, next: f64, decimals: i32) -> bool {
    let scale = 10f64.powi(decimals);
    (v / div * scale).round() / scale >= next
}

/// `x` with `decimals` decimals, or, below 1, with the decimals that keep 3 significant digits
/// (at most 12), as a value of 1 or more in the unit has: in a row shown in the larger value's
/// unit, 203.8 us beside 4.05 ms is 0.204 ms, not 0.20 ms (QA: the OpenShift instance-disk
/// recipe itself wrote 0.203 ms), and 41.0 us beside 1.90 ms is 0.0410 ms, not 0.04 ms. 12
/// decimals keep a nanosecond beside seconds (1e-9 s) and a byte per second beside GiB/s
/// (9.3e-10 GiB/s) from reading as zero (QA: at most 6 made 0.5 B/s beside 12 MiB/s "0.000000
/// MiB/s", and 0.8 us beside 1.5 s "0.000001 s", beside a ratio of millions).
fn fixed(x: f64, decimals: usize) -> String {
    let d = if x > 0.0 && x < 1.0 {
        let lead = x.log10().floor() as i64; // 0.2038 -> -1, 0.041 -> -2
        let d = ((2 - lead).clamp(0, 12) as usize).max(decimals);
        // 0.9996 at 3 decimals is "1.000": a value that rounds to 1 has the decimals of one.
        if reaches(x, 1.0, 1.0, d as i32) {
            decimals
        } else {
            d
        }
    } else {
        decimals
    };
    format!("{x:.d$}")
}

/// One value in its own best unit.
pub fn fmt_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ns => disktier_units::fmt_ns(v),
        Unit::Iops => fmt_count(v),
        Unit::BytesPerSec => {
            // 10^12 GiB/s and more: no disk (see ABSURD).
            if absurd(v / (1024.0 * 1024.0 * 1024.0)) {
                format!("{v:.2e} B/s")
            } else if reaches(v, 1024.0 * 1024.0, 1024.0, 1) {
                format!("{:.2} GiB/s", v / (1024.0 * 1024.0 * 1024.0))
            } else if reaches(v, 1024.0, 1024.0, 1) {
                format!("{:.1} MiB/s", v / (1024.0 * 1024.0))
            } else {
                format!("{:.1} KiB/s", v / 1024.0)
            }
        }
        Unit::FilesPerSec => format!("{} files/s", fmt_count(v)),
    }
}

/// 389, 4750, 45.2k, 180k, 1.00M: fio's way of printing IOPS; a value that rounds up to the
/// next form takes it (999,800 is "1.00M", not "1000k"; 99,960 "100k", not "100.0k").
/// A count or rate no disk reaches (10^12 a second; the fastest NVMe drives do about 10^7 IOPS)
/// is a damaged or forged figure, shown as such in scientific notation rather than as a number of
/// 300 digits (QA: a stored write IOPS of 1e300 filled `show`'s line).
const ABSURD: f64 = 1e12;

/// Whether `v` is no figure a disk gives: [`ABSURD`] or more, or not a number.
pub fn absurd(v: f64) -> bool {
    v.is_nan() || v.abs() >= ABSURD
}

pub fn fmt_count(v: f64) -> String {
    if absurd(v) {
        format!("{v:.2e}")
    } else if reaches(v, 1e3, 1000.0, 0) {
        format!("{:.2}M", v / 1e6)
    } else if reaches(v, 1e3, 100.0, 1) {
        format!("{:.0}k", v / 1e3)
    } else if reaches(v, 1.0, 1e4, 0) {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Left-aligned columns separated by two spaces, without trailing blanks. Widths are the
/// terminal columns a cell takes (a CJK character takes two: QA saw columns misaligned after a
/// Japanese target name when characters were counted).
pub fn align(rows: &[Vec<String>]) -> String {
    use unicode_width::UnicodeWidthStr;
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.width())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < r.len() {
                line.push_str(&" ".repeat(widths[c] - cell.width() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod align_tests {
    use super::align;

    #[test]
    fn wide_characters_take_two_columns() {
        let rows = vec![
            vec!["TARGET".to_string(), "HOST".to_string()],
            vec!["/データ".to_string(), "a".to_string()],
            vec!["/data".to_string(), "b".to_string()],
        ];
        let text = align(&rows);
        let lines: Vec<&str> = text.lines().collect();
        // "/データ" is 1 + 3 x 2 = 7 columns: HOST starts at column 9 on every line.
        assert_eq!(lines[0], "TARGET   HOST");
        assert_eq!(lines[1], "/データ  a");
        assert_eq!(lines[2], "/data    b");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absurd_figure_is_shown_short() {
        assert_eq!(fmt_count(1e300), "1.00e300");
        assert_eq!(fmt_count(f64::INFINITY), "inf");
        assert_eq!(fmt_count(999_800.0), "1.00M");
        assert_eq!(fmt_count(5e11), "500000.00M");
        assert_eq!(fmt_value(Unit::BytesPerSec, 1.7e308), "1.70e308 B/s");
        assert_eq!(
            fmt_value(Unit::BytesPerSec, 2.0 * 1073741824.0),
            "2.00 GiB/s"
        );
        assert_eq!(fmt_value(Unit::FilesPerSec, 1e40), "1.00e40 files/s");
    }
}
