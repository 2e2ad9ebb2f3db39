//! Number formatting for messages and tables: thousands separators, dollars, and the AWS Pricing
//! Calculator's rounding of each line item to the cent.

/// Rounds a dollar amount to the cent, half up, as the AWS Pricing Calculator does per line item
/// (the AWS Pricing Calculator rounds each line item to the cent before summing). The tiny nudge
/// keeps binary floating point from turning 36.575 into 36.57499999.
pub fn round_cents(usd: f64) -> f64 {
    ((usd * 100.0) + 1e-6).round() / 100.0
}

/// A number as read from a file, for messages: as Rust writes it, but in exponent notation
/// from 1e15 on, so that a hostile `1e308` is not shown as 309 digits.
pub fn as_read(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// `16000` -> `16,000`.
pub fn int(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A float shown as an integer with separators when whole, else with up to 2 decimals.
pub fn num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 && x >= 0.0 {
        int(x.round() as u64)
    } else if x >= 0.0 {
        let whole = x.trunc() as u64;
        let frac = format!("{:.2}", x - x.trunc());
        let frac = frac.trim_start_matches('0').trim_end_matches('0');
        if frac == "." || frac == "1." {
            // Rounded up to the next integer.
            int((x.round()) as u64)
        } else {
            format!("{}{}", int(whole), frac)
        }
    } else {
        format!("{x:.2}")
    }
}

/// A rate that can be a small fraction, such as MiB/s per IOPS: below 1 with up to 4 decimals
/// (0.2384, 0.25), else as [`num`]. With [`num`]'s 2 decimals, 0.2384 showed as 0.24, which
/// 4,000 IOPS would multiply into 960 MiB/s where the rule allows 953.67.
pub fn fine(x: f64) -> String {
    if (0.0..1.0).contains(&x) {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        num(x)
    }
}

/// A share `h` (0 to 1) and `1 - h`, both with `decimals` decimals (trailing zeros dropped), so
/// the two shown add up to 1.
pub fn share_and_rest(h: f64, decimals: usize) -> (String, String) {
    let h = h.clamp(0.0, 1.0);
    let show = |x: f64| {
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    (show(h), show(1.0 - h))
}

/// The decimals that keep 4 significant digits of the smaller of `h` and `1 - h` (at most 8):
/// 0.99206 and 0.00794 rather than 0.99 and 0.01, whose quotients differ by a quarter.
pub fn share_decimals(h: f64) -> usize {
    let smaller = h.clamp(0.0, 1.0).min(1.0 - h.clamp(0.0, 1.0));
    if smaller <= 0.0 {
        return 0;
    }
    (3 - smaller.log10().floor() as i64).clamp(1, 8) as usize
}

/// A share (0 to 1) shown precisely enough for its complement too ([`share_decimals`]).
pub fn share(h: f64) -> String {
    share_and_rest(h, share_decimals(h)).0
}

/// A share (0 to 1) that must be reached, as a percentage rounded *up*: 2 decimals, more when
/// 2 would show 100.00 for less than all (at most 8). A share needed is a floor: rounded to the
/// nearest, 1 - 200 / 16,001 = 98.7500781 % showed as "98.75 %", which as `--hit-ratio 0.9875`
/// gives 16,000 IOPS, not the 16,001 asked; and 99.998 % showed as "100.00 %" (QA).
pub fn percent_at_least(share: f64) -> String {
    let pct = share.clamp(0.0, 1.0) * 100.0;
    let mut shown = String::new();
    for d in 2..=8usize {
        let scale = 10f64.powi(d as i32);
        // The nudge keeps an exact figure (98.75, held as 98.75000000000001) from rising a step.
        let up = ((pct * scale - 1e-6).ceil() / scale).min(100.0);
        shown = format!("{up:.d$}");
        if up < 100.0 || pct >= 100.0 {
            break;
        }
    }
    shown
}

/// `$1,234.50`.
pub fn usd(x: f64) -> String {
    let neg = x < 0.0;
    let cents = (x.abs() * 100.0 + 1e-6).round() as u64;
    format!(
        "{}${}.{:02}",
        if neg { "-" } else { "" },
        int(cents / 100),
        cents % 100
    )
}

/// A unit price with as many decimals as it has (`$0.0836`, `$0.005`).
pub fn unit_usd(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    let s = if s.ends_with('.') {
        format!("{s}00")
    } else {
        s.to_string()
    };
    format!("${s}")
}

/// `word` with its indefinite article: `a gcp`, `an aws`, `an azure`.
pub fn a(word: &str) -> String {
    let vowel = word
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// `n thing` or `n things`: `1 problem`, `2 problems`.
pub fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// Seconds as `33 min`, `1.4 h`, `45 s`.
pub fn secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_round_half_up_like_the_calculator() {
        // 875 MiB/s x $0.0418 = 36.575 -> 36.58 (the bcache-on-EBS recipe's line item).
        assert_eq!(round_cents(875.0 * 0.0418), 36.58);
        assert_eq!(round_cents(36.0 * 0.0836), 3.01);
        assert_eq!(usd(1234.5), "$1,234.50");
        assert_eq!(int(5_400_000), "5,400,000");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(16000.0), "16,000");
        assert_eq!(unit_usd(0.08), "$0.08");
        assert_eq!(unit_usd(0.0836), "$0.0836");
        assert_eq!(a("aws"), "an aws");
        assert_eq!(a("gcp"), "a gcp");
        assert_eq!(a("azure"), "an azure");
        assert_eq!(count(1, "problem"), "1 problem");
        assert_eq!(count(2, "problem"), "2 problems");
    }

    /// A share needed is shown rounded up, never below itself, and never as 100 % for less.
    #[test]
    fn a_share_needed_is_rounded_up() {
        assert_eq!(percent_at_least(0.9875), "98.75");
        assert_eq!(percent_at_least(1.0 - 200.0 / 16001.0), "98.76");
        assert_eq!(percent_at_least(1.0 - 1.46484375 / 80000.0), "99.999");
        assert_eq!(percent_at_least(1.0), "100.00");
        assert_eq!(percent_at_least(0.5), "50.00");
        for x in [0.1234567, 0.98750078, 0.999999, 0.33333333] {
            let shown: f64 = percent_at_least(x).parse().unwrap();
            assert!(shown / 100.0 >= x - 1e-12 && shown < 100.0, "{x}: {shown}");
        }
    }
}
