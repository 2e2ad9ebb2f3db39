//! How old the catalog is, and when that is old enough to say so: list prices change (gp3's
//! limits were raised in Sep 2025, the clouds re-price regions), and a quote from a catalog a
//! year old reads as today's unless something says otherwise (QA: `price`, `plan` and
//! `catalog show` named the catalog's date only in passing, never that it was old).
//!
//! The age is counted from the catalog's own `date` (the embedded one's, or that of the last
//! `--catalog` file that sets one, as [`Catalog::merge`] takes it), to a `today` the caller
//! passes: the clock is the caller's, so tests pin it.

use crate::model::Catalog;
use time::{Date, Month};

/// A catalog older than this many days is said to be stale (docs/catalog.md, "How old a
/// catalog may be"): the clouds change list prices a few times a year, and disktier's own
/// catalog is reviewed at each release; half a year is long enough that a release in use
/// seldom warns, and short enough that a price change is unlikely to have gone unnoticed for
/// longer.
pub const STALE_AFTER_DAYS: i64 = 180;

/// How to bring the catalog up to date, as every stale warning says it.
pub const REFRESH_HINT: &str = "to update it: `disktier catalog import aws-offer` (AWS) or `disktier catalog refresh gcp|azure` (from the clouds' price APIs), then pass the file with --catalog; or install a newer disktier";

/// A catalog whose date is more than [`STALE_AFTER_DAYS`] before today, or whose date cannot
/// be read: what `price`, `plan` and `catalog show` warn of (JSON: `stale_catalog`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StaleCatalog {
    /// The catalog's `date` as written ("2026-11-22", "2026-10"); empty when it has none.
    pub catalog_date: String,
    /// Days from that date to today (a `YYYY-MM` date counts from the month's first day);
    /// `None` when the date cannot be read.
    pub age_days: Option<i64>,
    pub stale_after_days: i64,
    /// The warning, with how to refresh the catalog.
    pub message: String,
}

/// The catalog's date: `YYYY-MM-DD`, or `YYYY-MM` read as the month's first day.
pub fn parse_date(s: &str) -> Option<Date> {
    let mut parts = s.trim().splitn(3, '-');
    let year: i32 = parts.next()?.parse().ok()?;
    let month: u8 = parts.next()?.parse().ok()?;
    let day: u8 = match parts.next() {
        Some(d) => d.parse().ok()?,
        None => 1,
    };
    Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()
}

/// `Some` when `cat` is older than [`STALE_AFTER_DAYS`] on `today`, or its date cannot be
/// read; `None` for a catalog within its age (or dated after `today`).
pub fn stale(cat: &Catalog, today: Date) -> Option<StaleCatalog> {
    let written = cat.date.clone().unwrap_or_default();
    let Some(date) = parse_date(&written) else {
        return Some(StaleCatalog {
            message: format!(
                "the price catalog's date '{}' is not YYYY-MM or YYYY-MM-DD, so how old its prices are is unknown; {REFRESH_HINT}",
                crate::suggest::printable(&written)
            ),
            catalog_date: written,
            age_days: None,
            stale_after_days: STALE_AFTER_DAYS,
        });
    };
    let age = (today - date).whole_days();
    if age <= STALE_AFTER_DAYS {
        return None;
    }
    Some(StaleCatalog {
        message: format!(
            "the price catalog is dated {written}, {} days ago (over {STALE_AFTER_DAYS}): cloud prices may have changed since; {REFRESH_HINT}",
            crate::fmt::int(age as u64)
        ),
        catalog_date: written,
        age_days: Some(age),
        stale_after_days: STALE_AFTER_DAYS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn dated(d: &str) -> Catalog {
        let mut c = Catalog::embedded();
        c.date = Some(d.into());
        c
    }

    #[test]
    fn a_catalog_is_stale_only_past_the_documented_age() {
        let cat = dated("2026-01-10");
        // 180 days after 2026-01-10 is 2026-07-09: still within; the day after is not.
        assert_eq!(stale(&cat, date!(2026 - 07 - 09)), None);
        let s = stale(&cat, date!(2026 - 07 - 10)).expect("stale");
        assert_eq!(s.age_days, Some(181));
        assert_eq!(s.catalog_date, "2026-01-10");
        assert_eq!(
            s.message,
            format!("the price catalog is dated 2026-01-10, 181 days ago (over 180): cloud prices may have changed since; {REFRESH_HINT}")
        );
        // A clock behind the catalog (a VM restored from a snapshot) is not a stale catalog.
        assert_eq!(stale(&cat, date!(2025 - 01 - 01)), None);
    }

    #[test]
    fn a_month_counts_from_its_first_day_and_an_unreadable_date_is_said() {
        assert_eq!(parse_date("2026-10"), Some(date!(2026 - 10 - 01)));
        assert_eq!(parse_date("2026-02-30"), None);
        let s = stale(&dated("2026-10"), date!(2027 - 10 - 01)).unwrap();
        assert_eq!(s.age_days, Some(365));
        let s = stale(&dated("last spring"), date!(2026 - 10 - 01)).unwrap();
        assert_eq!(s.age_days, None);
        assert!(s.message.contains("'last spring' is not YYYY-MM"), "{s:?}");
        let mut none = Catalog::embedded();
        none.date = None;
        assert!(stale(&none, date!(2026 - 10 - 01)).is_some());
    }

    /// The embedded catalog is fresh on its own date, whatever day the tests run.
    #[test]
    fn the_embedded_catalog_is_fresh_on_its_date() {
        let cat = Catalog::embedded();
        let d = parse_date(cat.date.as_deref().unwrap()).expect("a readable date");
        assert_eq!(stale(&cat, d), None);
    }
}
