//! The fix for a count or a number clap could not read. clap's own error names the value and
//! the option, then Rust's parse error ("invalid digit found in string"), which says what is
//! wrong with the digits but not what to type instead (QA: `bench --iodepth 32x`,
//! `fleet run --parallel x`, `check --interval 1.5`). [`with_tip`] adds a `tip:` line that does.
//! Range errors ("0 is not in 1..=1000") already say what fits, and are left as they are.

use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::num::{IntErrorKind, ParseFloatError, ParseIntError};

/// Rust's messages for a whole number that did not parse, as `ParseIntError` shows them.
const INT_MESSAGES: [(&str, IntErrorKind); 4] = [
    ("invalid digit found in string", IntErrorKind::InvalidDigit),
    (
        "cannot parse integer from empty string",
        IntErrorKind::Empty,
    ),
    (
        "number too large to fit in target type",
        IntErrorKind::PosOverflow,
    ),
    (
        "number too small to fit in target type",
        IntErrorKind::NegOverflow,
    ),
];

/// Rust's message for a number with a fraction that did not parse (`ParseFloatError`).
const FLOAT_MESSAGE: &str = "invalid float literal";

/// `e` with a `tip:` line when it is a number option's value that did not parse as a number.
pub fn with_tip(mut e: clap::Error) -> clap::Error {
    if e.kind() != ErrorKind::ValueValidation || e.get(ContextKind::Suggested).is_some() {
        return e;
    }
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return e;
    };
    let Some(source) = std::error::Error::source(&e) else {
        return e;
    };
    // "--iodepth <N>" names the option as its first word.
    let flag = arg.split_whitespace().next().unwrap_or(arg);
    // By type where clap's own parser failed, by message where one of disktier's parsers
    // passed Rust's parse error on as text (`price --iops lots`).
    let text = source.to_string();
    let int_kind = match source.downcast_ref::<ParseIntError>() {
        Some(int) => Some(*int.kind()),
        None => INT_MESSAGES
            .iter()
            .find(|(m, _)| *m == text)
            .map(|(_, k)| *k),
    };
    let float = source.downcast_ref::<ParseFloatError>().is_some() || text == FLOAT_MESSAGE;
    let tip = match int_kind {
        Some(kind) => whole_number_tip(flag, value, &kind),
        None if float => Some(format!(
            "{flag} takes a number, such as 0.5 or 2 (digits and one decimal point, no unit)"
        )),
        None => None,
    };
    if let Some(tip) = tip {
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![StyledStr::from(tip)]),
        );
    }
    e
}

/// What a whole-number option's value should have been, by what is wrong with it.
fn whole_number_tip(flag: &str, value: &str, kind: &IntErrorKind) -> Option<String> {
    let value = value.trim();
    match kind {
        IntErrorKind::Empty => Some(format!("{flag} needs a whole number, such as 1")),
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => Some(format!(
            "{flag} takes a whole number far smaller than this one (counts here fit in 64 bits)"
        )),
        IntErrorKind::InvalidDigit => {
            let body = value.trim_start_matches(['-', '+']);
            let digits = body.chars().take_while(char::is_ascii_digit).count();
            let what = if value.starts_with('-') {
                "a whole number of at least 0"
            } else if value.parse::<f64>().is_ok_and(f64::is_finite) {
                "a whole number, without a fraction or an exponent"
            } else if digits > 0 && body[digits..].chars().all(char::is_alphabetic) {
                // "4k", "32x", "10s": a unit this option does not take.
                "a plain count, without a unit"
            } else {
                "a whole number, in digits only"
            };
            let example = Some(&body[..digits])
                .filter(|d| d.parse::<u64>().is_ok())
                .unwrap_or("1");
            Some(format!("{flag} takes {what}, such as {example}"))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "numbers_tests.rs"]
mod tests;
