//! The cost side of disktier: an embedded, dated, refreshable price/performance catalog (data in
//! `data/catalog.toml`, compiled in), the clouds' volume performance rules, `price` and `plan`.
//!
//! - [`model`]: the data model, the embedded catalog, `--catalog FILE` overlays (merge by region +
//!   type).
//! - [`age`]: how old the catalog is, and when `price`, `plan` and `catalog show` say so.
//! - [`check`]: `catalog check`'s validation; [`entries`] and [`validate`]: what every loaded
//!   file must pass (plain strings, no key twice, usable numbers).
//! - [`perf`]: the performance model (baseline, burst, bucket duration, rule errors).
//! - [`price`]: monthly line items rounded as the AWS Pricing Calculator rounds.
//! - [`plan`]: the planner (volumes, hybrid caches, instance store), with a hit-ratio hook
//!   ([`plan::HitRatio::Curve`]) for `disktier simulate`.
//! - [`quoted`]: figures from published guides checked against the catalog (in `plan`).
//! - [`import`]: `catalog import aws-offer`, streaming AWS's bulk price list.

pub mod age;
pub mod check;
pub mod entries;
pub mod fmt;
pub mod import;
pub mod load;
pub mod model;
pub mod perf;
pub mod plan;
pub mod price;
pub mod quoted;
pub mod suggest;
pub mod validate;

pub use load::LoadError;
pub use model::Catalog;
pub use perf::{Performance, RuleError, VolumeConfig};
pub use plan::{HitRatio, PlanRequest, Requirements, StoragePlan, DEFAULT_HIT_RATIO};
pub use price::{PriceError, Quote};
