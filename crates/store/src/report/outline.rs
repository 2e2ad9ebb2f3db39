//! A text outline of a rendered page (headings, tables, figures), for tests and `--format text`.

use std::fmt::Write as _;

/// The report's structure without the drawings: sections, headings, charts and cards, one per
/// line, for golden files (the SVG itself changes with plotters versions; the outline must not).
pub fn outline(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let end = rest.find('>').unwrap_or(rest.len() - 1);
        let tag = &rest[..=end];
        let text_end = rest[end + 1..]
            .find('<')
            .map_or(rest.len(), |j| end + 1 + j);
        let text = rest[end + 1..text_end].trim();
        let attr = |name: &str| {
            let key = format!("{name}=\"");
            tag.find(&key).map(|k| {
                let v = &tag[k + key.len()..];
                v[..v.find('"').unwrap_or(v.len())].to_string()
            })
        };
        if tag.starts_with("<section") {
            let _ = writeln!(out, "section #{}", attr("id").unwrap_or_default());
        } else if tag.starts_with("<h2") || tag.starts_with("<h3") {
            let inner_end = rest.find("</h").unwrap_or(text_end);
            let inner = strip_tags(&rest[end + 1..inner_end]);
            let _ = writeln!(out, "  {} {}", &tag[1..3], inner.trim());
        } else if tag.starts_with("<figure") {
            let svg_ok = rest[end..]
                .trim_start_matches('>')
                .trim_start()
                .starts_with("<svg");
            let _ = writeln!(
                out,
                "    chart {}{}",
                attr("data-chart").unwrap_or_default(),
                if svg_ok { " [svg]" } else { " [NO SVG]" }
            );
        } else if tag.starts_with("<div class=\"card\"") {
            let _ = writeln!(out, "    card {}", attr("data-target").unwrap_or_default());
        } else if tag.starts_with("<span class=\"badge") {
            let _ = writeln!(
                out,
                "      badge {}: {}",
                attr("class")
                    .unwrap_or_default()
                    .trim_start_matches("badge "),
                text
            );
        } else if tag.starts_with("<table") {
            let rows = rest[end..]
                .split("</table>")
                .next()
                .unwrap_or("")
                .matches("<tr>")
                .count();
            let _ = writeln!(
                out,
                "    table {} ({} rows)",
                attr("class").unwrap_or_default(),
                rows.saturating_sub(1)
            );
        }
        rest = &rest[end + 1..];
    }
    out
}

pub(super) fn strip_tags(s: &str) -> String {
    let mut o = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => o.push(c),
            _ => {}
        }
    }
    o
}
