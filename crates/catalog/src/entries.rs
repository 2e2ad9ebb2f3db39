//! The entries of one catalog file checked as text on load, before anything prints them: no
//! string may hold a control character (a newline, an escape sequence, a bell would reach the
//! terminal raw through `price`, `catalog show` and `catalog check`), and no file may list one
//! key twice (two `[[volume_price]]` rows of one region and type were merged last-wins,
//! silently). Numbers are [`crate::validate`]'s.

use crate::model::Catalog;
use crate::suggest::shown;

/// A string of a catalog that holds a control character.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{object}: {field} has a control character ({code} at character {at})")]
pub struct BadString {
    /// The entry, e.g. `volume_price us-east-1 gp3` (escaped: its own name may be the bad one).
    pub object: String,
    pub field: &'static str,
    /// `U+000A`.
    pub code: String,
    /// 1-based, in characters.
    pub at: usize,
}

/// One key listed twice in one table of a file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("[[{table}]] {key} is entry {} and entry {}", place(*.first, *.first_line), place(*.second, *.second_line))]
pub struct Duplicate {
    /// `volume_price`.
    pub table: &'static str,
    /// `us-east-1 gp3`.
    pub key: String,
    /// 1-based positions in the table.
    pub first: usize,
    pub second: usize,
    /// The lines of their `[[table]]` headers, where the file writes each entry as one.
    pub first_line: Option<usize>,
    pub second_line: Option<usize>,
}

fn place(n: usize, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{n} (line {l})"),
        None => n.to_string(),
    }
}

/// The first control character of `s`: its 1-based position and `U+XXXX`.
fn control(s: &str) -> Option<(usize, String)> {
    s.chars()
        .enumerate()
        .find(|(_, c)| c.is_control())
        .map(|(i, c)| (i + 1, format!("U+{:04X}", u32::from(c))))
}

/// Every string of `cat` holding a control character, in file order (empty when none does).
pub fn control_characters(cat: &Catalog) -> Vec<BadString> {
    let mut bad = Vec::new();
    let mut each = |object: String, fields: &[(&'static str, Option<&str>)]| {
        for (field, value) in fields {
            if let Some((at, code)) = value.and_then(control) {
                bad.push(BadString {
                    object: object.clone(),
                    field,
                    code,
                    at,
                });
            }
        }
    };
    each(
        "catalog".into(),
        &[
            ("version", cat.version.as_deref()),
            ("date", cat.date.as_deref()),
            ("source", cat.source.as_deref()),
        ],
    );
    for r in &cat.regions {
        each(
            format!("region {}", shown(&r.name)),
            &[
                ("name", Some(&r.name)),
                ("cloud", Some(&r.cloud)),
                ("usage_prefix", r.usage_prefix.as_deref()),
                ("note", r.note.as_deref()),
            ],
        );
    }
    for t in &cat.volume_types {
        each(
            format!("volume_type {}", shown(&t.name)),
            &[
                ("name", Some(&t.name)),
                ("cloud", Some(&t.cloud)),
                ("description", Some(&t.description)),
                ("media", Some(&t.media)),
                ("durability", t.durability.as_deref()),
                ("source", Some(&t.source)),
                ("date", Some(&t.date)),
            ],
        );
        for tier in t.size_tiers.iter().flatten() {
            each(
                format!("volume_type {}", shown(&t.name)),
                &[("size_tiers.name", Some(&tier.name))],
            );
        }
    }
    for p in &cat.volume_prices {
        each(
            format!("volume_price {} {}", shown(&p.region), shown(&p.type_)),
            &[
                ("region", Some(&p.region)),
                ("type", Some(&p.type_)),
                ("source", Some(&p.source)),
                ("date", Some(&p.date)),
                ("note", p.note.as_deref()),
            ],
        );
    }
    for i in &cat.instances {
        each(
            format!("instance {}", shown(&i.name)),
            &[
                ("name", Some(&i.name)),
                ("cloud", Some(&i.cloud)),
                ("source", Some(&i.source)),
                ("date", Some(&i.date)),
            ],
        );
    }
    for p in &cat.instance_prices {
        each(
            format!("instance_price {} {}", shown(&p.region), shown(&p.type_)),
            &[
                ("region", Some(&p.region)),
                ("type", Some(&p.type_)),
                ("source", Some(&p.source)),
                ("date", Some(&p.date)),
                ("note", p.note.as_deref()),
            ],
        );
    }
    bad
}

/// The lines (1-based) of the `[[table]]` headers of `text`, when there is one per entry
/// (`entries`); none when the file writes the table another way (an inline array).
fn header_lines(text: &str, table: &str, entries: usize) -> Option<Vec<usize>> {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim_start();
            l.strip_prefix("[[")
                .and_then(|r| r.split_once("]]"))
                .is_some_and(|(name, _)| name.trim() == table)
        })
        .map(|(i, _)| i + 1)
        .collect();
    (lines.len() == entries).then_some(lines)
}

/// Keys listed more than once in one table of `cat` (a file's own entries, before any merge),
/// each against its first entry; `text` (the file) gives the entries' lines.
pub fn duplicates(cat: &Catalog, text: Option<&str>) -> Vec<Duplicate> {
    let mut dups = Vec::new();
    let mut table = |name: &'static str, keys: Vec<String>| {
        let lines = text.and_then(|t| header_lines(t, name, keys.len()));
        let line = |i: usize| lines.as_ref().map(|l| l[i]);
        // First position of each key: a map, so that a file of many entries stays linear.
        let mut first = std::collections::HashMap::new();
        for (j, key) in keys.iter().enumerate() {
            if let Some(&i) = first.get(key.as_str()) {
                dups.push(Duplicate {
                    table: name,
                    key: key.clone(),
                    first: i + 1,
                    second: j + 1,
                    first_line: line(i),
                    second_line: line(j),
                });
            } else {
                first.insert(key.as_str(), j);
            }
        }
    };
    let named = |n: &String| shown(n);
    let priced = |r: &String, t: &String| format!("{} {}", shown(r), shown(t));
    table(
        "region",
        cat.regions.iter().map(|r| named(&r.name)).collect(),
    );
    table(
        "volume_type",
        cat.volume_types.iter().map(|t| named(&t.name)).collect(),
    );
    table(
        "volume_price",
        cat.volume_prices
            .iter()
            .map(|p| priced(&p.region, &p.type_))
            .collect(),
    );
    table(
        "instance",
        cat.instances.iter().map(|i| named(&i.name)).collect(),
    );
    table(
        "instance_price",
        cat.instance_prices
            .iter()
            .map(|p| priced(&p.region, &p.type_))
            .collect(),
    );
    dups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_has_no_control_character_and_no_duplicate() {
        let c = Catalog::embedded();
        assert_eq!(control_characters(&c), vec![]);
        assert_eq!(duplicates(&c, Some(crate::model::EMBEDDED)), vec![]);
    }

    #[test]
    fn a_duplicate_names_both_entries_and_their_lines() {
        let text = "\n[[volume_price]]\nregion = \"us-east-1\"\ntype = \"gp3\"\nstorage_gb_month = 0.07\nsource = \"a\"\ndate = \"2026-10\"\n\n[[ volume_price ]]\nregion = \"us-east-1\"\ntype = \"gp3\"\nstorage_gb_month = 0.06\nsource = \"b\"\ndate = \"2026-10\"\n";
        let cat: Catalog = toml::from_str(text).unwrap();
        let d = duplicates(&cat, Some(text));
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "[[volume_price]] us-east-1 gp3 is entry 1 (line 2) and entry 2 (line 9)"
        );
        // Without the text (an imported catalog): positions only.
        assert_eq!(
            duplicates(&cat, None)[0].to_string(),
            "[[volume_price]] us-east-1 gp3 is entry 1 and entry 2"
        );
    }

    #[test]
    fn a_control_character_is_found_with_its_entry_field_and_position() {
        let mut c = Catalog::embedded();
        c.volume_prices[0].source = "line1\nline2\u{1b}[31mRED\u{7}".into();
        c.regions[0].name = "us\u{7}".into();
        let bad = control_characters(&c);
        let all: Vec<String> = bad.iter().map(|b| b.to_string()).collect();
        assert!(
            all.contains(
                &"region us\\u{7}: name has a control character (U+0007 at character 3)"
                    .to_string()
            ),
            "{all:?}"
        );
        assert!(
            all.iter().any(|m| m
                .ends_with(": source has a control character (U+000A at character 6)")
                && m.starts_with("volume_price ")),
            "{all:?}"
        );
        // Nothing raw in any message.
        assert!(all.iter().all(|m| !m.chars().any(char::is_control)));
    }
}
