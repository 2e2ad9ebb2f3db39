//! A Kubernetes resource quantity (`render gke --request`, `render aks --request`), parsed once
//! into [`Quantity`]: the text as the user wrote it (what the manifest carries; the API server
//! reads the same grammar) and its value in bytes, rounded up as Kubernetes rounds
//! (`Quantity.Value()`).
//!
//! The grammar (k8s.io/apimachinery/pkg/api/resource, quantity.go):
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! <signedNumber>    ::= <number> | <sign><number>
//! <sign>            ::= "+" | "-"
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! ```
//!
//! The exponent is an integer, as quantity.go parses it (`strconv.ParseInt`). A value is exact
//! whatever its digits (no float): the integer part is at most 20 digits before it saturates at
//! `u64::MAX` (more than any disk), and the fraction times a binary suffix is worked out digit
//! by digit, so nothing overflows and any input is answered (tests/fuzz.rs, `fuzz_quantity`).

/// Decimal digits past which a value is larger than `u64::MAX` (1.8 * 10^19) whatever its
/// suffix: it saturates there.
const MAX_INT_DIGITS: i64 = 20;

/// A checked quantity of bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    text: String,
    bytes: u64,
}

/// Why a quantity was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantityError {
    /// Not the grammar above.
    Syntax,
    /// Zero, negative, or less than one byte.
    BelowOneByte,
    /// The `m` (milli) suffix: thousandths of a byte, where `M` or `Mi` was meant.
    Milli,
}

impl QuantityError {
    /// What to write instead; `example` is a quantity that suits the option (`200Gi`).
    pub fn fix(self, example: &str) -> String {
        match self {
            QuantityError::Syntax => format!("write a Kubernetes quantity such as {example}"),
            QuantityError::BelowOneByte => {
                format!("it must be at least 1 byte: write a quantity such as {example}")
            }
            QuantityError::Milli => format!(
                "m is milli, thousandths of a byte: write M (10^6 bytes) or Mi (2^20 bytes), such as {example}"
            ),
        }
    }
}

impl Quantity {
    /// Parses `q`, a quantity of bytes of at least 1.
    pub fn parse(q: &str) -> Result<Quantity, QuantityError> {
        let (negative, digits, frac, exp10, exp2) = split(q)?;
        match value(&digits, frac, exp10, exp2) {
            b if !negative && b >= 1 => Ok(Quantity {
                text: q.to_string(),
                bytes: b,
            }),
            _ => Err(QuantityError::BelowOneByte),
        }
    }

    /// The quantity as the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its value in bytes, rounded up, at most `u64::MAX`.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The parts of `q`: its sign, its digits without the point, how many of them follow the point,
/// and the suffix's powers of ten and of two.
fn split(q: &str) -> Result<(bool, String, usize, i64, u32), QuantityError> {
    let (negative, rest) = match q.as_bytes().first() {
        Some(b'-') => (true, &q[1..]),
        Some(b'+') => (false, &q[1..]),
        _ => (false, q),
    };
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(QuantityError::Syntax);
    }
    let (exp10, exp2) = match suffix {
        "" => (0, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        "m" => return Err(QuantityError::Milli),
        s if s.starts_with(['e', 'E']) => (exponent(&s[1..])?, 0),
        _ => return Err(QuantityError::Syntax),
    };
    Ok((negative, format!("{int}{frac}"), frac.len(), exp10, exp2))
}

/// A decimal exponent: an optional sign and digits. Its size is clamped far beyond where the
/// value saturates or falls below one byte, so a huge one is answered, not overflowed.
fn exponent(s: &str) -> Result<i64, QuantityError> {
    let (sign, digits) = match s.as_bytes().first() {
        Some(b'-') => (-1, &s[1..]),
        Some(b'+') => (1, &s[1..]),
        _ => (1, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::Syntax);
    }
    const CLAMP: i64 = 1_000_000;
    let t = digits.trim_start_matches('0');
    let n = if t.len() > 7 {
        CLAMP
    } else {
        t.parse::<i64>().unwrap_or(0).min(CLAMP)
    };
    Ok(sign * n)
}

/// `digits` (of which the last `frac` follow the point) times 10^`exp10` times 2^`exp2`, in
/// bytes rounded up and saturated at `u64::MAX`; 0 when it is less than one byte.
fn value(digits: &str, frac: usize, exp10: i64, exp2: u32) -> u64 {
    let sig = digits.trim_start_matches('0');
    // The value is sig * 10^e, and sig's first digit is not 0.
    let (n, e) = (sig.len() as i64, exp10 - frac as i64);
    if sig.is_empty() || n + e < -19 {
        // Zero, or below 10^-19 * 2^60 (< 1).
        return 0;
    }
    if n + e > MAX_INT_DIGITS {
        return u64::MAX;
    }
    let (int, fraction) = if e >= 0 {
        (format!("{sig}{}", "0".repeat(e as usize)), String::new())
    } else if n + e > 0 {
        let at = (n + e) as usize;
        (sig[..at].to_string(), sig[at..].to_string())
    } else {
        (
            String::new(),
            format!("{}{sig}", "0".repeat((-(n + e)) as usize)),
        )
    };
    // At most 20 digits: below 10^20, which times 2^60 is still within u128.
    let int: u128 = int.parse().unwrap_or(0);
    let (whole, rest) = fraction_times_power_of_two(&fraction, exp2);
    let exact = (int << exp2) + whole;
    if exact == 0 {
        return 0;
    }
    u64::try_from(exact + u128::from(rest)).unwrap_or(u64::MAX)
}

/// `0.FRACTION` times 2^`exp2`: its whole part and whether anything is left below the point.
/// Doubled digit by digit `exp2` (at most 60) times, as on paper.
fn fraction_times_power_of_two(fraction: &str, exp2: u32) -> (u128, bool) {
    let mut d: Vec<u8> = fraction.bytes().map(|b| b - b'0').collect();
    let mut whole: u128 = 0;
    for _ in 0..exp2 {
        let mut carry = 0;
        for x in d.iter_mut().rev() {
            let v = *x * 2 + carry;
            *x = v % 10;
            carry = v / 10;
        }
        whole = whole * 2 + u128::from(carry);
    }
    (whole, d.iter().any(|&x| x != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(q: &str) -> Result<u64, QuantityError> {
        Quantity::parse(q).map(|q| q.bytes())
    }

    #[test]
    fn kubernetes_quantities_are_read_exactly() {
        // Found by QA: 0.5Ti, 1.5Ti, 1e3 and 1Ei were refused as not quantities.
        for (q, want) in [
            ("200Gi", 200u64 << 30),
            ("375G", 375_000_000_000),
            ("12", 12),
            ("0.5Ti", 1 << 39),
            ("1.5Ti", 3 << 39),
            ("1e3", 1000),
            ("1E3", 1000),
            ("1e+3", 1000),
            ("1Ei", 1 << 60),
            ("1E", 1_000_000_000_000_000_000),
            ("2P", 2_000_000_000_000_000),
            ("1.5Gi", 3 << 29),
            (".5Ki", 512),
            ("5.", 5),
            ("+7k", 7000),
            ("0.1Ki", 103), // 102.4, rounded up
            ("1.1e1", 11),  // exact: no float
            ("2.5", 3),     // bytes are whole: rounded up, as Kubernetes' Value()
            ("12e-1", 2),   // 1.2
            ("0001.000Mi", 1 << 20),
            ("15e18", 15_000_000_000_000_000_000),
            ("16Ei", u64::MAX), // 2^64: saturated
            ("1e20", u64::MAX),
            ("1e999999999999999999999", u64::MAX),
            ("18446744073709551615", u64::MAX),
            ("18446744073709551616", u64::MAX),
        ] {
            let got = Quantity::parse(q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
            assert_eq!(got.bytes(), want, "{q}");
            assert_eq!(got.as_str(), q);
        }
    }

    #[test]
    fn garbage_zero_and_fractions_of_a_byte_are_refused() {
        for q in [
            "", "Gi", "1.5.5Gi", ".", "+", "-", "1Gb", "1 Gi", "1gi", "1KiB", "1e", "1e1.5", "1e+",
            "1ee3", "2.5e2Gi", "Ki1", "0x10", "1,5Gi", "1Ki2", "∞",
        ] {
            assert_eq!(bytes(q), Err(QuantityError::Syntax), "{q:?}");
        }
        for q in [
            "0",
            "0.0Gi",
            "-1Gi",
            "-0.5",
            "0.5",
            "1e-3",
            "1e-999999999999",
            "0.000001Ki",
        ] {
            assert_eq!(bytes(q), Err(QuantityError::BelowOneByte), "{q:?}");
        }
        assert_eq!(bytes("500m"), Err(QuantityError::Milli));
        // Just about one byte: 1.0001 rounds up to 2, 0.001Ki is 1.024.
        assert_eq!(bytes("1.0001"), Ok(2));
        assert_eq!(bytes("0.001Ki"), Ok(2));
    }
}
