//! `disktier catalog import`: turns a cloud's own price list into a catalog file that
//! `--catalog FILE` merges over the embedded one. One file per source format:
//! [`aws_offer`] reads AWS's bulk price list offer file, streaming; [`refresh`] reads GCP's
//! Cloud Billing Catalog SKU list and Azure's Retail Prices API pages, streaming.

pub mod aws_offer;
pub mod refresh;

use crate::model::Catalog;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not an AWS offer file: {message}")]
    Shape { path: PathBuf, message: String },
    #[error("{path} is not {format}: {message}")]
    Format {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error(
        "{path} has no {cloud} disk or VM prices for region {region}{}",
        why_none(region, seen, currencies, "save the price list of")
    )]
    NoRegionPrices {
        path: PathBuf,
        cloud: &'static str,
        region: String,
        /// The regions the file names (the asked one among them if it does).
        seen: Vec<String>,
        /// The currencies other than USD the asked region's items are priced in.
        currencies: Vec<String>,
    },
    #[error("{path} is not valid JSON or is cut short: {message}")]
    Json { path: PathBuf, message: String },
    #[error(
        "{path} has no EBS or EC2 prices for region {region}{}",
        why_none(region, seen, currencies, "download the offer file of")
    )]
    NoPrices {
        path: PathBuf,
        region: String,
        /// The regions (or usagetype prefixes) its products are for, the asked one among them
        /// if it is.
        seen: Vec<String>,
        /// The currencies other than USD the asked region's products are priced in.
        currencies: Vec<String>,
    },
    #[error("{path} prices {what} at {value}, which is no price (a number above 0): download the offer file again")]
    UnusablePrice {
        path: PathBuf,
        /// What is priced, with the SKU: `st1 storage (SKU ABC)`.
        what: String,
        /// The price as read, with its unit: `NaN USD per GB-Mo`.
        value: String,
    },
    #[error("{path} prices {what} twice, and differently: {first} and {second}; which is the region's is not clear, so nothing is written: check it is the offer file of one region as AWS publishes it, or write the price you mean in a --catalog file")]
    Conflict {
        path: PathBuf,
        /// What is priced: `gp3 storage`.
        what: String,
        /// Each price as read, with its SKU: `SKU ABC at 0.08 USD per GB-Mo`.
        first: String,
        second: String,
    },
    /// `catalog refresh`: two items of the pages read price one thing differently.
    #[error("the price list prices {what} twice, and differently: {first}, and {second}; which is the region's is not clear, so nothing is written: pass the pages of one download of the list, or write the price you mean in a --catalog file")]
    Clash {
        /// What is priced: `pd-ssd storage`.
        what: String,
        /// Each item as the list words it, with its price and file.
        first: String,
        second: String,
    },
    #[error("the catalog imported from {path} does not pass `catalog check`: {}", .problems.join("; "))]
    Check {
        path: PathBuf,
        problems: Vec<String>,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why a price list gave no prices for `region`, for [`ImportError::NoPrices`] and
/// [`ImportError::NoRegionPrices`]: its items for the region are priced in another currency (QA:
/// a page in EUR was "it prices eastus, westeurope: ... or pass --region eastus", the region
/// already passed), or it has none for the region (the regions it has instead), or it names no
/// region. `fetch` is how to get the right list ("download the offer file of").
fn why_none(region: &str, seen: &[String], currencies: &[String], fetch: &str) -> String {
    if !currencies.is_empty() {
        return format!(
            ": its prices for {region} are in {}, and the catalog holds USD: {fetch} {region} in USD, or write converted prices in a --catalog file (docs/catalog.md)",
            currencies.join(", ")
        );
    }
    let others: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|r| *r != region)
        .collect();
    if seen.iter().any(|r| r == region) {
        return format!(
            ": its items for {region} are none of the prices the import keeps (docs/catalog.md lists them); is it a page of the right service?"
        );
    }
    match others.first() {
        None => " (no region names found in it)".to_string(),
        Some(first) => format!(
            " (it prices {}): {fetch} {region}, or pass --region {first}",
            others.join(", ")
        ),
    }
}

/// A bounded sample of the currencies (other than USD) a region's items were priced in, escaped:
/// an error names them, and a price list is not trusted to be plain text.
pub(crate) fn saw_currency(seen: &mut std::collections::BTreeSet<String>, code: &str) {
    if seen.len() < 8 && !code.is_empty() && code.len() <= 16 && code != "USD" {
        seen.insert(crate::suggest::printable(code));
    }
}

/// The error of a streaming JSON read of `path`: the reader failed, the document is not what the
/// importer expects (`wrong_shape` makes that error from the message), or it is not JSON.
pub(crate) fn json_error(
    e: serde_json::Error,
    path: &Path,
    wrong_shape: impl FnOnce(String) -> ImportError,
) -> ImportError {
    let message = e.to_string();
    if e.is_io() {
        ImportError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other(message),
        }
    } else if e.is_data() {
        wrong_shape(message)
    } else {
        ImportError::Json {
            path: path.to_path_buf(),
            message,
        }
    }
}

/// `reader` without the UTF-8 byte order mark a price list saved on Windows may start with
/// (Windows PowerShell's `Out-File` and `Set-Content -Encoding UTF8`, Notepad): JSON text has
/// none, but RFC 8259 (section 8.1) lets a parser ignore one, and serde_json refuses it as
/// "expected value at line 1 column 1" (QA: a whole offer file or price page behind a BOM was
/// "not valid JSON or is cut short", which sent the user to download it again).
pub(crate) fn skip_bom<R: std::io::Read>(
    mut reader: R,
) -> std::io::Result<std::io::Chain<std::io::Cursor<Vec<u8>>, R>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(3);
    (&mut reader).take(3).read_to_end(&mut head)?;
    if head == b"\xEF\xBB\xBF" {
        head.clear();
    }
    Ok(std::io::Cursor::new(head).chain(reader))
}

/// The most one item of a streamed price list (a product, a SKU, a price item, with its key)
/// may take: real ones are a few KiB, and the importers hold one at a time.
pub(crate) const ITEM_LIMIT: u64 = 16 << 20;

/// Bounds the memory one item of a streamed price list takes: an importer arms it before it
/// builds an item (or a key) in memory and disarms it after, and a read of more than
/// [`ITEM_LIMIT`] bytes while armed fails. What is skipped unbuilt (read through, never held)
/// is not counted. QA: a 200 MB string in one Azure item or AWS product took 410 MB.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemBudget(std::rc::Rc<std::cell::Cell<Option<u64>>>);

impl ItemBudget {
    pub(crate) fn arm(&self) {
        self.0.set(Some(0));
    }

    pub(crate) fn disarm(&self) {
        self.0.set(None);
    }

    /// `reader`, failing once an armed item passes [`ITEM_LIMIT`].
    pub(crate) fn reader<R: std::io::Read>(&self, reader: R) -> Budgeted<R> {
        Budgeted {
            inner: reader,
            budget: self.clone(),
        }
    }
}

pub(crate) struct Budgeted<R> {
    inner: R,
    budget: ItemBudget,
}

impl<R: std::io::Read> std::io::Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(used) = self.budget.0.get() {
            let used = used.saturating_add(n as u64);
            if used > ITEM_LIMIT {
                return Err(std::io::Error::other(format!(
                    "one item (a product, SKU or price, with its key) is over {} MiB, where a price list's are a few KiB: it is not a price list page, or a damaged one; download it again",
                    ITEM_LIMIT >> 20
                )));
            }
            self.budget.0.set(Some(used));
        }
        Ok(n)
    }
}

/// Ok when `cat`, merged over `embedded`, passes `catalog check`: what an import writes must.
/// `path` names the source in the error.
pub(crate) fn check_merged(
    embedded: &Catalog,
    cat: &Catalog,
    path: &Path,
) -> Result<(), ImportError> {
    let mut merged = embedded.clone();
    merged.merge(cat.clone());
    let report = crate::check::check(&merged);
    if !report.ok() {
        return Err(ImportError::Check {
            path: path.to_path_buf(),
            // A price list's names reach the problems: escaped, never raw on the terminal.
            problems: report
                .problems
                .iter()
                .map(|p| crate::suggest::printable(p))
                .collect(),
        });
    }
    Ok(())
}

/// The header line of an imported or refreshed catalog written to `out` that says how to use it.
fn use_it_with(out: &Path) -> String {
    format!(
        "Use it with `disktier --catalog {} ...`; entries replace the embedded ones by region + type.",
        out.display()
    )
}

/// Writes `cat` as TOML to `out` atomically ([`disktier_atomicfile`]: a temporary file beside
/// it, synced, renamed on success), so a failed import leaves nothing (and never half a file)
/// behind, below a comment of `header` lines. Each line is escaped: a path holding a newline
/// (the input's or `out`'s) would end the comment and make the rest of it TOML the file cannot
/// be read with (QA). Mode 0644: a catalog is not a secret.
pub fn write_atomically(cat: &Catalog, header: &[String], out: &Path) -> Result<(), ImportError> {
    let mut body = String::new();
    for line in header {
        body.push_str(&format!("# {}\n", crate::suggest::printable(line)));
    }
    body.push('\n');
    body.push_str(&cat.to_toml());
    let body = body.into_bytes();
    disktier_atomicfile::replace(out, &body, disktier_atomicfile::Mode::Exact(0o644)).map_err(|e| {
        ImportError::Write {
            path: out.to_path_buf(),
            source: e.into_io(),
        }
    })
}
