//! "Did you mean": close matches by edit distance, for unknown regions, types and instances.

/// Levenshtein distance (case-insensitive).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Up to five names closest to `wanted` (distance at most a third of its length, at least 2, or
/// sharing its prefix), closest first; none when nothing is close.
pub fn close_matches<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let len = wanted.chars().count();
    let limit = (len / 3).max(2);
    let lw = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|n| {
            let prefix = lw.len() >= 2 && n.to_lowercase().starts_with(&lw);
            // The distance is at least the difference in length: a name that far off is not
            // compared at all (a hostile 100 KiB argument costs nothing).
            if !prefix && len.abs_diff(n.chars().count()) > limit {
                return None;
            }
            let d = distance(wanted, n);
            (prefix || d <= limit).then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// A name the user gave, as an error quotes it: at most 64 characters (then `...`), control
/// characters escaped (`\u{1b}`) so that a name cannot drive the terminal.
pub fn shown(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((i, _)) => format!("{}...", printable(&name[..i])),
        None => printable(name),
    }
}

pub use disktier_units::printable;

/// The end of an "unknown name" message: `did you mean a, b? (REST)`, or just `REST` when no
/// name is close.
pub fn hint(close: &[String], rest: &str) -> String {
    if close.is_empty() {
        rest.to_string()
    } else {
        format!("did you mean {}? ({rest})", close.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos() {
        assert_eq!(distance("gp3", "gp2"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        let m = close_matches("eu-nort-1", ["us-east-1", "eu-north-1", "us-central1"]);
        assert_eq!(m[0], "eu-north-1");
        let m = close_matches("m6id.xlarg", ["m6i.xlarge", "m6id.xlarge", "i3.large"]);
        assert_eq!(m[0], "m6id.xlarge");
        // Nothing close: no guess (the caller lists what there is).
        assert!(close_matches("mars-1", ["us-east-1", "eu-north-1"]).is_empty());
        // A huge name: quoted short, and no distance computed against names far shorter.
        let huge = "a".repeat(100_000);
        assert!(close_matches(&huge, ["us-east-1", "eu-north-1"]).is_empty());
        assert_eq!(shown(&huge), format!("{}...", "a".repeat(64)));
        assert_eq!(shown("gp3"), "gp3");
        // Control characters are shown escaped, never sent to the terminal.
        assert_eq!(shown("gp3\u{1b}[31m\n"), "gp3\\u{1b}[31m\\n");
        assert_eq!(hint(&[], "the catalog has gp3"), "the catalog has gp3");
        assert_eq!(
            hint(&["gp3".into()], "the catalog has gp3"),
            "did you mean gp3? (the catalog has gp3)"
        );
    }
}
