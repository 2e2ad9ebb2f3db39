//! Loading a catalog: the embedded one, a file (bounded in size) or an overlay merged over the
//! embedded one, parsed and then checked number by number ([`crate::validate`]) before use.

use crate::model::{Catalog, EMBEDDED};
use std::path::Path;

/// The largest catalog file read (the embedded one is about 30 KiB).
pub const MAX_FILE: u64 = 16 << 20;

/// Why a catalog file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read catalog {path}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("catalog {path} is not a valid catalog file: {message} (see `disktier catalog show --format json` for the shape, or docs/catalog.md)")]
    Parse { path: String, message: String },
    /// Numbers price and plan cannot use (NaN, infinite, negative, a zero divisor, sizes out of
    /// order or range): all of them, so that one edit fixes the file.
    #[error("catalog {path} has {} unusable number(s): {}", .bad.len(), .bad.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; "))]
    Numbers {
        path: String,
        bad: Vec<crate::validate::BadNumber>,
    },
}

impl Catalog {
    /// The embedded catalog. It is checked by a unit test, so a parse failure here is a build bug.
    pub fn embedded() -> Catalog {
        Catalog::parse(EMBEDDED, "embedded catalog").expect("embedded catalog parses")
    }

    /// Parses a catalog (or overlay) and checks every number in it ([`crate::validate`]).
    pub fn parse(text: &str, name: &str) -> Result<Catalog, LoadError> {
        let cat: Catalog = toml::from_str(text).map_err(|e| LoadError::Parse {
            path: name.to_string(),
            message: e.message().to_string()
                + &e.span()
                    .map(|s| format!(" (at byte {})", s.start))
                    .unwrap_or_default(),
        })?;
        let bad = crate::validate::numbers(&cat);
        if !bad.is_empty() {
            return Err(LoadError::Numbers {
                path: name.to_string(),
                bad,
            });
        }
        Ok(cat)
    }

    /// Reads a catalog file (at most [`MAX_FILE`] bytes) and parses it.
    pub fn load(path: &Path) -> Result<Catalog, LoadError> {
        use std::io::Read;
        let text = std::fs::File::open(path)
            .and_then(|f| {
                let mut s = String::new();
                f.take(MAX_FILE + 1).read_to_string(&mut s)?;
                if s.len() as u64 > MAX_FILE {
                    return Err(std::io::Error::other(format!(
                        "larger than {} MiB, which no catalog is: is it the right file?",
                        MAX_FILE >> 20
                    )));
                }
                Ok(s)
            })
            .map_err(|source| LoadError::Read {
                path: path.display().to_string(),
                source,
            })?;
        Catalog::parse(&text, &path.display().to_string())
    }

    /// The embedded catalog with an optional overlay file merged in.
    pub fn with_overlay(path: Option<&Path>) -> Result<Catalog, LoadError> {
        let mut cat = Catalog::embedded();
        if let Some(p) = path {
            cat.merge(Catalog::load(p)?);
        }
        Ok(cat)
    }
}
