//! Every primary source the embedded catalog cites by ID (`[aws-ebs-types]`, in a `source`, a
//! `note` or a comment) has its row in docs/sources.md, which gives the page's address: an ID
//! without one names no page a reader can check the figure against.

const CATALOG: &str = include_str!("../data/catalog.toml");
const SOURCES: &str = include_str!("../../../docs/sources.md");

/// The `[id]`s of `text`: lowercase letters, digits and hyphens, with at least one hyphen (so a
/// TOML table header such as `[[region]]` is not one).
fn cited_ids(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find(']') else { break };
        let id = &rest[..close];
        if id.contains('-')
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            out.push(id);
        }
    }
    out
}

#[test]
fn every_source_id_the_catalog_cites_has_its_row_in_docs_sources() {
    let ids = cited_ids(CATALOG);
    assert!(ids.contains(&"aws-ebs-pricing") && ids.contains(&"aws-storage-optimized"));
    let missing: Vec<&str> = ids
        .into_iter()
        .filter(|id| !SOURCES.contains(&format!("| `[{id}]` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "cited in crates/catalog/data/catalog.toml, no row in docs/sources.md: {missing:?}"
    );
}

#[test]
fn ids_are_told_from_table_headers() {
    assert_eq!(
        cited_ids("[[region]]\nsource = \"[aws-ebs-types] and [x]\" # [gcp-disk-pricing]"),
        ["aws-ebs-types", "gcp-disk-pricing"]
    );
}
