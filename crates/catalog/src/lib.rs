//! The cost side of disktier: an embedded, dated, refreshable price/performance catalog (data in
//! `catalog/*.toml`, compiled in), the clouds' volume performance rules, `price` and `plan`.
