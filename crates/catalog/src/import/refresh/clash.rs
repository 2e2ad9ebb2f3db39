//! Two items of the price list that price one thing differently (`catalog refresh gcp|azure`):
//! which is the region's price is not clear, so the refresh is refused naming both items and
//! their files, as `catalog import aws-offer` refuses two SKUs of one price (QA: a second
//! "SSD backed PD Capacity" SKU of the region at another price, or pages of the same list
//! saved on two days, replaced the first price without a word: the last one read won).

use super::super::ImportError;
use crate::suggest::shown;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One item as the error names it: its words in the list, its price, the file it was read from.
#[derive(Debug, Clone)]
struct Seen {
    usd: f64,
    item: String,
    file: usize,
}

/// The price each thing ("pd-ssd storage") took first, and the first item that priced one of
/// them differently.
#[derive(Debug, Clone, Default)]
pub(super) struct Clashes {
    seen: BTreeMap<String, Seen>,
    first: Option<(String, Seen, Seen)>,
}

impl Clashes {
    /// Records that `item` (as the list words it, read from file `file`) prices `what` at
    /// `usd`; two items of one price are one price.
    pub(super) fn saw(&mut self, what: String, usd: f64, item: &str, file: usize) {
        let now = Seen {
            usd,
            item: shown(item),
            file,
        };
        match self.seen.get(&what) {
            None => {
                self.seen.insert(what, now);
            }
            Some(before) if before.usd.total_cmp(&usd).is_ne() => {
                if self.first.is_none() {
                    self.first = Some((what, before.clone(), now));
                }
            }
            Some(_) => {}
        }
    }

    /// The refusal of the first clash, if there was one; `paths` are the files read, in order.
    pub(super) fn error(&self, paths: &[PathBuf]) -> Option<ImportError> {
        let (what, a, b) = self.first.as_ref()?;
        let named = |s: &Seen| {
            let file = paths
                .get(s.file)
                .map(|p| shown(&p.display().to_string()))
                .unwrap_or_default();
            format!("{} at {} USD ({file})", s.item, s.usd)
        };
        Some(ImportError::Clash {
            what: shown(what),
            first: named(a),
            second: named(b),
        })
    }
}
