//! The values a user gives that end up in a shell script, an fstab line, a systemd unit or a
//! manifest — mount point, bind directories, mount options, owner, mode and filesystem label —
//! parsed once into types that can only hold what every one of those targets can carry. `setup`
//! and `render` both build their configuration from these types, and every writer takes them,
//! never a raw string; each writer then quotes for its own target with the functions at the end
//! of this module ([`fstab_escape`], [`unit_escape_path`], `disktier_cmd::shell_quote`, serde
//! for YAML).
//!
//! The rule (SECURITY.md, "Validated values"): a value is refused, with a message naming the
//! flag and the fix, when it holds a control character (newline, tab, NUL, DEL, ...), a `.` or
//! `..` component, or a character outside the small alphabet below. Nothing is silently dropped
//! or rewritten except trailing and doubled slashes.

/// A value that cannot be used, with the flag it came from and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {value:?} is not usable: {why}")]
pub struct Invalid {
    pub flag: &'static str,
    /// Shown with `{:?}`, so a newline or NUL is visible as `\n` / `\0`.
    pub value: String,
    pub why: String,
}

fn invalid(flag: &'static str, value: &str, why: impl Into<String>) -> Invalid {
    // Cap what an error message echoes back: the input may be huge.
    let value = if value.len() > 200 {
        let mut end = 200;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &value[..end])
    } else {
        value.to_string()
    };
    Invalid {
        flag,
        value,
        why: why.into(),
    }
}

/// The items of a comma-separated value (`--options`, `--bind`; clap's own split gives one
/// value per item, rejoined here), each trimmed. An empty item (`prjquota,,discard`, a
/// trailing comma) is refused, not dropped (QA: a directory lost between two commas, as an
/// empty shell variable leaves, was left out without a word); a value that is blank as a whole
/// has no items.
pub fn comma_items(flag: &'static str, values: &[String]) -> Result<Vec<String>, Invalid> {
    let list = values.join(",");
    match disktier_units::comma_items(flag, &list) {
        Ok(items) => Ok(items.into_iter().map(str::to_string).collect()),
        Err(disktier_units::UnitError::EmptyItem(_, _, n)) => Err(invalid(
            flag,
            &list,
            format!("item {n} is empty (two commas in a row, or a comma at the start or end): separate the items with single commas, or drop the extra comma"),
        )),
        Err(e) => Err(invalid(flag, &list, e.to_string())),
    }
}

/// PATH_MAX and NAME_MAX of Linux (limits.h).
const PATH_MAX: usize = 4095;
const NAME_MAX: usize = 255;

/// The characters a directory name may hold: letters, digits, `- _ . + @ :` and space. Space is
/// the one that needs quoting (shell `'...'`, fstab `\040`, unit names `\x20`); the rest mean
/// nothing to a shell, fstab, systemd (no `%` specifier, no `\` escape, no `$` variable) or YAML.
fn path_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.+@: ".contains(c)
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// What a checked string newtype (`struct T(String)`) shows of itself: `as_str`, `Deref` to
/// `str`, `Display` and `Serialize` as the plain string.
macro_rules! string_newtype {
    ($t:ident) => {
        impl $t {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $t {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
    };
}

mod escape;
mod fs;
mod label;
mod names;
mod options;
mod owner;
mod path;
#[cfg(test)]
pub(crate) mod tests;

pub use escape::*;
pub use fs::FsType;
pub use label::Label;
pub use names::{check_bind_names, check_mount_names, check_unit_where};
pub use options::{MountOptions, ATIME_OPTIONS, DEFAULT_OPTIONS, QUOTA_OPTIONS};
pub use owner::{Mode, Owner, MAX_ID};
pub use path::MountPath;
