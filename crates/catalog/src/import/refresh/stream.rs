//! Reading one page of a cloud price list as a stream: the items of its top-level array are
//! deserialised and handed on one at a time, so memory is bounded by one item, not the file.

use super::super::{json_error, ImportError, ItemBudget};
use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io::Read;
use std::marker::PhantomData;
use std::path::Path;

/// Walks the top-level object of one page, handing each element of `key`'s array to `f`.
struct PageSeed<'f, T, F: FnMut(T)> {
    key: &'static str,
    f: &'f mut F,
    saw: &'f mut bool,
    budget: ItemBudget,
    _t: PhantomData<T>,
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> DeserializeSeed<'de> for PageSeed<'_, T, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> Visitor<'de> for PageSeed<'_, T, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object with \"{}\"", self.key)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        loop {
            self.budget.arm();
            let k = map.next_key::<String>()?;
            self.budget.disarm();
            let Some(k) = k else { break };
            if k == self.key {
                *self.saw = true;
                map.next_value_seed(ItemsSeed::<T, F> {
                    f: self.f,
                    budget: self.budget.clone(),
                    _t: PhantomData,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct ItemsSeed<'f, T, F: FnMut(T)> {
    f: &'f mut F,
    budget: ItemBudget,
    _t: PhantomData<T>,
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> DeserializeSeed<'de> for ItemsSeed<'_, T, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> Visitor<'de> for ItemsSeed<'_, T, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of price items")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        // An item of an unexpected shape is skipped, not fatal: the lists carry many products.
        loop {
            // One item in memory at a time, and of bounded size.
            self.budget.arm();
            let v = seq.next_element::<serde_json::Value>()?;
            self.budget.disarm();
            let Some(v) = v else { break };
            if let Ok(item) = serde_json::from_value::<T>(v) {
                (self.f)(item);
            }
        }
        Ok(())
    }
}

pub(super) fn read_page<T: DeserializeOwned, R: Read>(
    reader: R,
    path: &Path,
    key: &'static str,
    format: &'static str,
    mut f: impl FnMut(T),
) -> Result<(), ImportError> {
    let reader = super::super::skip_bom(reader).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let budget = ItemBudget::default();
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
        1 << 16,
        budget.reader(reader),
    ));
    let mut saw = false;
    let res = PageSeed {
        key,
        f: &mut f,
        saw: &mut saw,
        budget,
        _t: PhantomData,
    }
    .deserialize(&mut de)
    .and_then(|_| de.end());
    match res {
        Err(e) => Err(json_error(e, path, |message| ImportError::Format {
            path: path.to_path_buf(),
            format,
            message,
        })),
        Ok(()) if !saw => Err(ImportError::Format {
            path: path.to_path_buf(),
            format,
            message: format!("no \"{key}\" array"),
        }),
        Ok(()) => Ok(()),
    }
}
