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
/// sharing its prefix), closest first; all names when nothing is close.
pub fn close_matches<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = names.into_iter().collect();
    let limit = (wanted.chars().count() / 3).max(2);
    let lw = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (distance(wanted, n), *n))
        .filter(|(d, n)| *d <= limit || (lw.len() >= 2 && n.to_lowercase().starts_with(&lw)))
        .collect();
    scored.sort();
    scored.dedup();
    if scored.is_empty() {
        let mut all: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        all.sort();
        all.dedup();
        return all;
    }
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_string())
        .collect()
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
    }
}
