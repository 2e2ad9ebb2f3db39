//! What the reader keeps of an offer file: the kept products, their prices, and the state of
//! the read.

use crate::model::Store;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What one kept product is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kept {
    Storage {
        type_: String,
        max_gib: Option<u64>,
        max_iops: Option<u64>,
        max_mibs: Option<f64>,
    },
    /// Provisioned IOPS; `tier` 1.. for io2's tiered usagetypes.
    Iops {
        type_: String,
        tier: u8,
    },
    Throughput {
        type_: String,
    },
    Instance {
        name: String,
        store: Option<Store>,
    },
}

/// A price dimension as the offer file has it.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Dimension {
    #[serde(default)]
    pub(super) unit: String,
    #[serde(rename = "pricePerUnit", default)]
    pub(super) price_per_unit: BTreeMap<String, String>,
    #[serde(rename = "beginRange", default)]
    pub(super) begin_range: Option<String>,
    #[serde(rename = "endRange", default)]
    pub(super) end_range: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Term {
    #[serde(rename = "priceDimensions", default)]
    pub(super) price_dimensions: BTreeMap<String, Dimension>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Product {
    #[serde(rename = "productFamily", default)]
    pub(super) product_family: Option<String>,
    #[serde(default)]
    pub(super) attributes: BTreeMap<String, String>,
}

/// A USD price found for a kept SKU.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub(super) unit: String,
    pub(super) usd: f64,
    pub(super) begin: Option<u64>,
    pub(super) end: Option<u64>,
}

pub(super) struct State<'a> {
    pub(super) region: &'a str,
    /// The usagetype prefix of the region ("EUN1-"); used when products carry no regionCode.
    pub(super) prefix: Option<String>,
    pub(super) kept: HashMap<String, Kept>,
    pub(super) prices: HashMap<String, Vec<Found>>,
    /// The products section has been read: prices of other SKUs are skipped unbuilt.
    pub(super) products_done: bool,
    /// 1, or 2 when the terms came before the products and the file is read again for them.
    pub(super) pass: u8,
    /// The first pass met the terms before the products and skipped them.
    pub(super) deferred_terms: bool,
    pub(super) regions_seen: BTreeSet<String>,
    /// Currencies other than USD that kept SKUs are priced in (an offer file of a region priced
    /// in CNY).
    pub(super) currencies: BTreeSet<String>,
    pub(super) saw_products: bool,
    pub(super) saw_terms: bool,
    pub(super) publication_date: Option<String>,
    pub(super) version: Option<String>,
    pub(super) skipped: usize,
    /// Bounds each product, SKU's terms and key built in memory.
    pub(super) budget: crate::import::ItemBudget,
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    pub region: String,
    pub volume_prices: usize,
    pub instances: usize,
    pub instance_prices: usize,
    pub products_skipped: usize,
    pub publication_date: Option<String>,
}
