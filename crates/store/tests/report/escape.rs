//! Control and bidi characters in stored names: the page shows them escaped, as text output
//! does, in its HTML and in the text plotters writes into the charts' SVG.

use super::{assert_self_contained, fixture, page_of, stored};

// QA on dt-s24: a fio result imported from a directory named "d\u{202e}abc" put the raw
// U+202E (RIGHT-TO-LEFT OVERRIDE) into the card, the legend, the bar chart's label and the run
// list of the report, reversing what followed it on the page, where `history` escapes it.
#[test]
fn bidi_and_control_characters_in_names_are_shown_escaped() {
    let mut read = fixture("read-iops");
    read["target"]["path"] = "/data/d\u{202e}cba/f".into();
    read["host"]["hostname"] = "node\u{1b}]0;owned\u{7}".into();
    let mut etcd = fixture("ocp-recipe-ephemeral");
    etcd["target"]["path"] = "/var/lib/\u{2067}etcd".into();
    let runs = vec![
        stored("run-read", "bench", read),
        stored("run-etcd", "check", etcd),
    ];
    let page = page_of(&runs);
    for bad in ['\u{202e}', '\u{2067}', '\u{1b}', '\u{7}'] {
        assert!(
            !page.contains(bad),
            "the page holds a raw U+{:04X}",
            bad as u32
        );
    }
    assert!(page.contains("/data/d\\u{202e}cba/f"), "the card's path");
    assert!(page.contains("/var/lib/\\u{2067}etcd"));
    assert!(page.contains("node\\u{1b}]0;owned\\u{7}"), "the host name");
    // The bar chart's label is SVG text: escaped there too.
    let svg_text = page
        .split("<text")
        .skip(1)
        .any(|t| t.contains("d\\u{202e}cba/f"));
    assert!(svg_text, "no chart label names the target");
    // Other text is kept as it is.
    assert!(!page.contains("\\u{e9}"));
    assert_self_contained(&page);
}
