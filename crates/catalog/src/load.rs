//! Loading a catalog: the embedded one, a file (a regular file, bounded in size) or an overlay
//! merged over the embedded one, parsed and then checked before use: strings and keys
//! ([`crate::entries`]: no control character, no key twice in one file), then number by number
//! ([`crate::validate`]).

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
    /// A FIFO, a directory, a device: reading one could block forever or mean nothing.
    #[error("catalog {path} is {kind}, not a regular file: pass the path of a catalog TOML file")]
    NotAFile { path: String, kind: &'static str },
    #[error("catalog {path} is not a valid catalog file: {message} (see `disktier catalog show --format json` for the shape, or docs/catalog.md)")]
    Parse { path: String, message: String },
    /// Strings that would reach the terminal raw: all of them.
    #[error("catalog {path} has {} string(s) with a control character: {}: write plain text on one line (no \\n, \\t or \\u escapes)", .bad.len(), .bad.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; "))]
    Strings {
        path: String,
        bad: Vec<crate::entries::BadString>,
    },
    /// One key twice in one file: both entries, so that one edit fixes the file.
    #[error("catalog {path} lists the same entry twice: {}: keep one of each (entries of one file are not merged)", .dups.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; "))]
    Duplicates {
        path: String,
        dups: Vec<crate::entries::Duplicate>,
    },
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
        let path = crate::suggest::printable(name);
        let cat: Catalog = toml::from_str(text).map_err(|e| LoadError::Parse {
            path: path.clone(),
            // The parser quotes what it read (a key, a value): escaped, never raw.
            message: crate::suggest::printable(e.message())
                + &e.span()
                    .map(|s| format!(" (at byte {})", s.start))
                    .unwrap_or_default(),
        })?;
        let bad = crate::entries::control_characters(&cat);
        if !bad.is_empty() {
            return Err(LoadError::Strings { path, bad });
        }
        let dups = crate::entries::duplicates(&cat, Some(text));
        if !dups.is_empty() {
            return Err(LoadError::Duplicates { path, dups });
        }
        let bad = crate::validate::numbers(&cat);
        if !bad.is_empty() {
            return Err(LoadError::Numbers { path, bad });
        }
        Ok(cat)
    }

    /// Reads a catalog file (a regular file of at most [`MAX_FILE`] bytes) and parses it.
    pub fn load(path: &Path) -> Result<Catalog, LoadError> {
        use std::io::Read;
        let text = open_regular(path)?
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
                path: crate::suggest::printable(&path.display().to_string()),
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

/// What a file that is not a regular file is, in words.
fn kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading when it is a regular file. It is looked at before it is opened, and
/// opened without blocking (O_NONBLOCK), then looked at again: a FIFO put in its place between the
/// two is refused too, instead of waiting forever for a writer. `Ok(Err(..))` is an I/O error for
/// the caller to wrap.
fn open_regular(path: &Path) -> Result<std::io::Result<std::fs::File>, LoadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |t: std::fs::FileType| LoadError::NotAFile {
        path: crate::suggest::printable(&path.display().to_string()),
        kind: kind(t),
    };
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(refuse(m.file_type())),
        Ok(_) => {}
        Err(e) => return Ok(Err(e)),
    }
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    match f.metadata() {
        Ok(m) if !m.is_file() => Err(refuse(m.file_type())),
        Ok(_) => Ok(Ok(f)),
        Err(e) => Ok(Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_directory_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo");
        let e = Catalog::load(&fifo).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "is a FIFO (named pipe), not a regular file: pass the path of a catalog TOML file"
            ),
            "{e}"
        );
        let e = Catalog::load(d.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a regular file"), "{e}");
    }

    #[test]
    fn duplicates_and_control_characters_are_refused_naming_the_entry() {
        let row = |src: &str| {
            format!("[[volume_price]]\nregion = \"us-east-1\"\ntype = \"gp3\"\nstorage_gb_month = 0.07\nsource = \"{src}\"\ndate = \"2026-10\"\n\n")
        };
        let e = Catalog::parse(&(row("a") + &row("b")), "o.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "catalog o.toml lists the same entry twice: [[volume_price]] us-east-1 gp3 is entry 1 (line 1) and entry 2 (line 8): keep one of each (entries of one file are not merged)");
        let e = Catalog::parse(&row("line1\\nline2\\u001b[31mRED\\u0007"), "o.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("catalog o.toml has 1 string(s) with a control character: volume_price us-east-1 gp3: source has a control character (U+000A at character 6)"), "{e}");
        assert!(!e.chars().any(char::is_control), "{e:?}");
    }
}
