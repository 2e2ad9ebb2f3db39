//! AWS's bulk price list offer file (`.../offers/v1.0/aws/AmazonEC2/<version>/<region>/index.json`),
//! read as a stream: a `DeserializeSeed` walks the top-level object, keeps only the products that
//! matter (EBS storage, provisioned IOPS and throughput, Linux on-demand instances of the region)
//! and only their on-demand prices, and skips everything else without building it. Memory stays
//! bounded by the kept products, not by the file (the real file is tens of MB).
//!
//! Format (docs/sources.md [aws-price-list]): `products{sku: {productFamily, attributes}}` and
//! `terms.OnDemand[sku][offerTermCode].priceDimensions[*].{unit, pricePerUnit.USD}`.
//!
//! `offer.rs` holds what is kept of the file, `stream.rs` reads it (the seeds and which
//! products are kept), `assemble.rs` turns what was kept into the catalog.

mod assemble;
mod offer;
mod stream;

pub use offer::Summary;

use super::{json_error, ImportError};
use crate::model::Catalog;
use assemble::assemble;
use offer::State;
use serde::de::DeserializeSeed;
use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;
use stream::TopSeed;

/// Reads an offer file from `reader` (streaming) and returns the catalog overlay for `region`.
/// A stream whose terms come before its products cannot be read twice: that is an error
/// (save it to a file and use [`import_from`]).
pub fn import<R: Read>(
    reader: R,
    path: &Path,
    region: &str,
) -> Result<(Catalog, Summary), ImportError> {
    let mut once = Some(reader);
    import_from(
        || {
            once.take().ok_or_else(|| {
                std::io::Error::other(
                    "its terms come before its products, and a stream cannot be read twice: save it to a file and import that",
                )
            })
        },
        path,
        region,
    )
}

/// Reads an offer file that `open` can open again: memory stays bounded by the kept products
/// whatever the order of the file's sections. When the terms come first, the first pass skips
/// them unbuilt and a second pass reads only the kept products' prices.
pub fn import_from<R: Read>(
    mut open: impl FnMut() -> std::io::Result<R>,
    path: &Path,
    region: &str,
) -> Result<(Catalog, Summary), ImportError> {
    let embedded = Catalog::embedded();
    let prefix = embedded
        .region(region)
        .map(|r| r.usage_prefix.clone().unwrap_or_default());
    let mut st = State {
        region,
        prefix,
        kept: HashMap::new(),
        prices: HashMap::new(),
        products_done: false,
        pass: 1,
        deferred_terms: false,
        regions_seen: BTreeSet::new(),
        currencies: BTreeSet::new(),
        saw_products: false,
        saw_terms: false,
        publication_date: None,
        version: None,
        skipped: 0,
        budget: Default::default(),
    };
    let read_err = |source: std::io::Error| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    pass(open().map_err(read_err)?, path, &mut st)?;
    if st.deferred_terms && st.saw_products {
        st.pass = 2;
        st.saw_terms = false;
        pass(open().map_err(read_err)?, path, &mut st)?;
    }
    if !st.saw_products {
        return Err(ImportError::Shape {
            path: path.to_path_buf(),
            message: "no \"products\" section".into(),
        });
    }
    if !st.saw_terms {
        return Err(ImportError::Shape {
            path: path.to_path_buf(),
            message: "no \"terms\" section with \"OnDemand\" prices".into(),
        });
    }
    assemble(st, &embedded, path)
}

/// One pass of the JSON deserializer over the file.
fn pass<R: Read>(reader: R, path: &Path, st: &mut State) -> Result<(), ImportError> {
    let reader = super::skip_bom(reader).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
        1 << 16,
        st.budget.reader(reader),
    ));
    let res = TopSeed { st }.deserialize(&mut de).and_then(|_| de.end());
    res.map_err(|e| {
        json_error(e, path, |message| ImportError::Shape {
            path: path.to_path_buf(),
            message,
        })
    })
}

/// Imports `input` and writes the catalog to `out` atomically (nothing is written on error).
pub fn import_file(input: &Path, region: &str, out: &Path) -> Result<Summary, ImportError> {
    let (cat, summary) = import_from(|| std::fs::File::open(input), input, region)?;
    let header = [
        format!(
            "Imported by `disktier catalog import aws-offer {} --region {region}`.",
            input.display()
        ),
        super::use_it_with(out),
    ];
    super::write_atomically(&cat, &header, out)?;
    Ok(summary)
}
#[cfg(test)]
#[path = "tests.rs"]
mod tests;
