//! The filesystem label.

use super::{invalid, Invalid};

/// A filesystem label (and md array name): letters, digits, `-` and `_`, not starting with `-`
/// (it follows `-L` on mkfs's command line), at most `max` bytes — 12 for xfs (xfs_admin(8)),
/// 16 for ext4 (e2label(8)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label(String);

impl Label {
    /// `fs` names the filesystem in the error; `suffix` is the length a layout adds (`-N` of
    /// `--layout separate`), explained by `suffix_why`.
    pub fn parse(
        flag: &'static str,
        raw: &str,
        fs: &str,
        max: usize,
        suffix: usize,
        suffix_why: &str,
    ) -> Result<Label, Invalid> {
        if raw.is_empty() {
            return Err(invalid(
                flag,
                raw,
                "it is empty: pass a label such as disktier",
            ));
        }
        if raw.starts_with('-')
            || !raw
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                flag,
                raw,
                "use only letters, digits, - and _ (not starting with -)",
            ));
        }
        if raw.len() + suffix > max {
            return Err(invalid(
                flag,
                raw,
                format!("{fs} holds at most {max} characters{suffix_why}: pass a shorter label"),
            ));
        }
        Ok(Label(raw.to_string()))
    }
}

string_newtype!(Label);

// ---- quoting per target -------------------------------------------------------------------
