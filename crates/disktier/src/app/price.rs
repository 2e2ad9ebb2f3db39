//! Price: one volume's monthly quote with the published prices checked against it, and the
//! unit conversions price and plan share (whole GiB, MiB/s).

use disktier_catalog::age::{self, StaleCatalog};
use disktier_catalog::quoted::volume::{checks, QuotedVolumeCheck};
use disktier_catalog::{price, Catalog, Quote, VolumeConfig};

/// A volume to price, as given: sizes and rates in bytes.
#[derive(Debug, Clone, Copy)]
pub struct VolumeRequest<'a> {
    pub region: &'a str,
    /// The volume type (gp3, io2, pd-ssd, ...).
    pub kind: &'a str,
    /// The size in bytes: a whole number of GiB; `None` is refused, after the region and the
    /// type are checked (a misspelt type is said before the size is asked for).
    pub size: Option<u64>,
    pub iops: Option<u64>,
    /// Provisioned throughput in bytes per second.
    pub throughput: Option<u64>,
}

/// The month's quote of the volume `req` describes, and the published prices of this very
/// volume checked against the catalog.
pub fn volume(
    cat: &Catalog,
    req: &VolumeRequest<'_>,
) -> anyhow::Result<(Quote, Vec<QuotedVolumeCheck>)> {
    let Some(size) = req.size else {
        // The name first: an instance type, an unknown or misspelt type is said before
        // --size is asked for.
        let reg = price::region(cat, req.region)?;
        price::volume_type(cat, reg, req.kind)?;
        anyhow::bail!(
            "price {} needs --size, e.g. `disktier price {} --size 100GiB --region {}`",
            req.kind,
            req.kind,
            req.region
        );
    };
    let cfg = VolumeConfig {
        size_gib: whole_gib(size, "--size")?,
        iops: req.iops,
        throughput_mibs: req.throughput.map(mibs),
    };
    let quote = price::volume(cat, req.region, req.kind, &cfg)?;
    let quoted = checks(cat, &quote.region, &quote.type_, &cfg);
    Ok((quote, quoted))
}

/// The variable that sets the day the catalog's age is counted to (`YYYY-MM-DD`), in place of
/// the clock: for tests, and to see what a run on another day would say (docs/catalog.md).
pub const TODAY_VAR: &str = "DISKTIER_TODAY";

/// Today (UTC), or the day [`TODAY_VAR`] names; a value that is not a date is an error naming
/// the variable, not a silent fall-back to the clock.
pub fn today() -> anyhow::Result<time::Date> {
    match std::env::var_os(TODAY_VAR) {
        Some(v) if !v.is_empty() => {
            let s = v.to_string_lossy();
            match age::parse_date(&s) {
                Some(d) if s.trim().len() == "YYYY-MM-DD".len() => Ok(d),
                _ => anyhow::bail!(
                    "{TODAY_VAR}='{}' is not a date: write YYYY-MM-DD (e.g. 2026-11-22), or unset it to use today's",
                    disktier_catalog::suggest::printable(&s)
                ),
            }
        }
        _ => Ok(time::OffsetDateTime::now_utc().date()),
    }
}

/// The catalog's staleness today ([`age::stale`]): `None` while it is within
/// [`age::STALE_AFTER_DAYS`].
pub fn stale_catalog(cat: &Catalog) -> anyhow::Result<Option<StaleCatalog>> {
    Ok(age::stale(cat, today()?))
}

/// Whole GiB from bytes, or an error naming the fix (`what` names the option).
pub fn whole_gib(bytes: u64, what: &str) -> anyhow::Result<u64> {
    const GIB: u64 = 1 << 30;
    if bytes == 0 {
        anyhow::bail!("{what} must be at least 1GiB");
    }
    if !bytes.is_multiple_of(GIB) {
        anyhow::bail!(
            "{what} of {bytes} bytes is not a whole number of GiB (volumes are sized in GiB): use {}GiB",
            bytes.div_ceil(GIB)
        );
    }
    Ok(bytes / GIB)
}

/// MiB/s from bytes/s (1000MiB/s -> 1000).
pub fn mibs(bytes_per_sec: u64) -> f64 {
    bytes_per_sec as f64 / (1u64 << 20) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_whole_gib() {
        assert_eq!(whole_gib(5 << 30, "--size").unwrap(), 5);
        assert_eq!(
            whole_gib(0, "--size").unwrap_err().to_string(),
            "--size must be at least 1GiB"
        );
        assert_eq!(
            whole_gib((1 << 30) + 1, "--capacity").unwrap_err().to_string(),
            "--capacity of 1073741825 bytes is not a whole number of GiB (volumes are sized in GiB): use 2GiB"
        );
        assert_eq!(mibs(1000 << 20), 1000.0);
    }

    #[test]
    fn a_volume_without_a_size_is_named_first() {
        let cat = Catalog::embedded();
        let req = |kind, size| VolumeRequest {
            region: "us-east-1",
            kind,
            size,
            iops: None,
            throughput: None,
        };
        let e = volume(&cat, &req("gp3", None)).unwrap_err().to_string();
        assert_eq!(
            e,
            "price gp3 needs --size, e.g. `disktier price gp3 --size 100GiB --region us-east-1`"
        );
        let e = volume(&cat, &req("gp9", None)).unwrap_err().to_string();
        assert!(!e.contains("needs --size"), "{e}");
        let (quote, _) = volume(&cat, &req("gp3", Some(100 << 30))).unwrap();
        assert_eq!(quote.type_, "gp3");
        assert!(quote.monthly_cost_usd > 0.0);
    }
}
