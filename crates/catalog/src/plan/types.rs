//! The planner's types: the request, the options and rejections it answers with, its errors,
//! and the two values every phase works on: [`Ctx`] (what it reads) and [`Candidates`] (what it
//! fills). The phases depend on this file only, never on each other in a circle.

use crate::model::Catalog;
use crate::price::PriceError;
use serde::{Deserialize, Serialize};

/// The hit ratio the planner assumes for hybrid caches when the user gives none (issue #3's
/// example, `--hit-ratio 0.9`). It is a guess, stated in every hybrid option; `disktier simulate`
/// replaces it with a prediction from a trace (bcache [kernel-bcache] and lvmcache [lvmcache]
/// predict no hit ratio of their own).
pub const DEFAULT_HIT_RATIO: f64 = 0.9;

/// What a hybrid's hit ratio is, in the words every place that shows it uses: the `h` of its
/// effective rate min(cache / h, backing / (1 - h)). A simulated ratio is this share, not the
/// share of blocks found in the cache: a writethrough write that hits still goes to the backing
/// volume.
pub const HIT_RATIO_MEANS: &str = "requests served without the backing volume";

/// What the data needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirements {
    pub capacity_gib: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_mibs: Option<f64>,
}

/// How the planner learns a hybrid cache's hit ratio.
pub enum HitRatio {
    /// A stated assumption (`--hit-ratio`, default [`DEFAULT_HIT_RATIO`]).
    Assumed(f64),
    /// A prediction for a cache of the given size in bytes (from `disktier simulate`'s miss-ratio
    /// curve). The planner then tries several cache sizes and keeps the cheapest that meets the
    /// requirements.
    Curve {
        source: String,
        hit_ratio_for: Box<dyn Fn(u64) -> f64 + Send + Sync>,
    },
}

impl std::fmt::Debug for HitRatio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HitRatio::Assumed(h) => write!(f, "Assumed({h})"),
            HitRatio::Curve { source, .. } => write!(f, "Curve({source})"),
        }
    }
}

/// A planning question.
#[derive(Debug)]
pub struct PlanRequest {
    pub region: String,
    pub requirements: Requirements,
    pub allow_hybrid: bool,
    /// The instance the data lives on now (for the instance-store comparison).
    pub instance: Option<String>,
    pub allow_ephemeral: bool,
    pub hit_ratio: HitRatio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Volume,
    Hybrid,
    InstanceStore,
}

impl Kind {
    /// The name `plan --format json` writes (`volume`, `hybrid`, `instance-store`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Volume => "volume",
            Kind::Hybrid => "hybrid",
            Kind::InstanceStore => "instance-store",
        }
    }
}

/// One piece of an option (a volume, or an instance store).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    #[serde(rename = "type")]
    pub type_: String,
    /// "volume", "cache", "backing" or "instance-store".
    pub role: String,
    pub size_gib: u64,
    pub iops: Option<u64>,
    pub throughput_mibs: Option<f64>,
    pub monthly_cost_usd: f64,
}

/// What an option delivers, sustained and burst.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct OptionPerformance {
    pub iops: Option<f64>,
    pub throughput_mibs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_throughput_mibs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_seconds: Option<f64>,
    /// Hybrid: the hit ratio the effective figures assume, and where it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio_source: Option<String>,
    /// Hybrid: the hit ratio the requirements need.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio_needed: Option<f64>,
}

/// What the same money buys in plain volumes (the OpenShift instance-disk recipe's comparison).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Equivalent {
    pub gp2_gib: Option<u64>,
    pub gp3_gib: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOption {
    pub kind: Kind,
    /// "gp3 5,120 GiB, 16,000 IOPS, 1,000 MiB/s".
    pub label: String,
    pub monthly_cost_usd: f64,
    pub components: Vec<Component>,
    pub performance: OptionPerformance,
    pub caveats: Vec<String>,
    /// Cheapest single volume meeting the requirements minus this option (none when no single
    /// volume meets them).
    pub savings_usd: Option<f64>,
    /// Unrounded monthly cost (instance-store deltas; the OpenShift instance-disk recipe's $66.138
    /// style figures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_monthly_cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalent: Option<Equivalent>,
    pub weak: bool,
    /// The requirements ("iops", "throughput") the catalog has no figure to check this option
    /// against: not counted as met, so the option ranks after every option that provably meets
    /// the requirements (an instance store whose IOPS the cloud does not publish).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<String>,
}

/// An option that does not meet the requirements, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    pub kind: Kind,
    pub label: String,
    pub reason: String,
    /// The closest configuration of this kind that the rules allow, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Box<PlanOption>>,
}

/// The planner's answer: the options that meet the requirements (cheapest first), the rejected
/// ones with their reasons, and notes. (A storage plan, not the engine's I/O plan nor disks'
/// setup plan.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoragePlan {
    pub region: String,
    pub requirements: Requirements,
    /// The hit ratio assumed for hybrids (when not from a curve).
    pub assumed_hit_ratio: Option<f64>,
    pub options: Vec<PlanOption>,
    pub rejected: Vec<Rejected>,
    pub notes: Vec<String>,
    /// Published figures about `--instance`'s family, checked against the catalog (each
    /// check's message is also in `notes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quoted_checks: Vec<crate::quoted::QuotedCheck>,
    /// Published prices of a volume that meets the requirements as asked, checked against the
    /// catalog (each check's message is also in `notes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quoted_volume_checks: Vec<crate::quoted::volume::QuotedVolumeCheck>,
    /// When the prices the options use were recorded, and from which catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices_recorded: Option<PricesRecorded>,
}

/// The catalog a plan was priced from and the span of its prices' dates (`plan --format
/// json`'s `prices_recorded`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PricesRecorded {
    /// "2026.11.22 of 2026-11-22": the catalog's version and date.
    pub catalog: String,
    /// The oldest and newest `date` of the prices used ("2024-06").
    pub oldest: String,
    pub newest: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Price(#[from] PriceError),
    #[error("hit ratio {0} is not between 0 and 1: pass e.g. --hit-ratio 0.9")]
    HitRatio(f64),
    #[error("capacity must be at least 1 GiB")]
    Capacity,
    #[error("no option in {region} meets {wanted}: {}{}", .blockers.join("; "), .nearest.as_ref().map(|n| format!("; nearest feasible: {n}")).unwrap_or_default())]
    Impossible {
        region: String,
        wanted: String,
        blockers: Vec<String>,
        nearest: Option<String>,
    },
}

/// Why a type cannot meet the requirements: the rule's own words.
#[derive(Debug, Clone)]
pub(super) struct Blocker {
    pub(super) message: String,
}

pub(super) fn block(message: String) -> Blocker {
    Blocker { message }
}

/// What every phase reads: the catalog, the request, and the request's region (checked to be in
/// the catalog) and its cloud.
pub(super) struct Ctx<'a> {
    pub(super) cat: &'a Catalog,
    pub(super) region: &'a str,
    pub(super) cloud: &'a str,
    pub(super) request: &'a PlanRequest,
}

impl Ctx<'_> {
    pub(super) fn req(&self) -> &Requirements {
        &self.request.requirements
    }
}

/// What the generating phases fill: the options that meet the requirements, the rejected ones
/// with their reasons, and notes for the reader.
#[derive(Default)]
pub(super) struct Candidates {
    pub(super) options: Vec<PlanOption>,
    pub(super) rejected: Vec<Rejected>,
    pub(super) notes: Vec<String>,
}

impl Candidates {
    pub(super) fn reject(
        &mut self,
        kind: Kind,
        label: String,
        reason: String,
        nearest: Option<PlanOption>,
    ) {
        self.rejected.push(Rejected {
            kind,
            label,
            reason,
            nearest: nearest.map(Box::new),
        });
    }
}
