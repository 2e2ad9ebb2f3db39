//! Fuzz targets (bolero) for the catalog's parsers of outside input: a catalog overlay
//! (`--catalog FILE`) carried through to price and plan, and AWS's offer file import. Each runs
//! over its corpus in `tests/__fuzz__/<target>/corpus` and briefly on random inputs in
//! `cargo test`; `bench/fuzz.sh TARGET MINUTES` runs one long.

use disktier_catalog::model::Catalog;
use disktier_catalog::perf::VolumeConfig;
use disktier_catalog::plan::{self, HitRatio, PlanRequest, Requirements};
use disktier_catalog::price;
use disktier_testkit::fuzz::CappedAlloc;
use disktier_testkit::fuzz_target;
use std::path::Path;

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(1 << 30);

fn finite(x: f64, what: &str) {
    assert!(x.is_finite() && x >= 0.0, "{what} = {x}");
}

/// Property: an overlay that loads can be priced and planned without a panic, and every cost
/// is a finite, non-negative number.
#[test]
fn fuzz_catalog_overlay() {
    fuzz_target!("fuzz_catalog_overlay", |input| {
        let Ok(text) = std::str::from_utf8(input) else {
            return;
        };
        let Ok(overlay) = Catalog::parse(text, "fuzz") else {
            return;
        };
        let mut cat = Catalog::embedded();
        cat.merge(overlay);
        let _ = disktier_catalog::check::check(&cat);
        let regions: Vec<String> = cat.regions.iter().map(|r| r.name.clone()).collect();
        for region in regions.iter().take(4) {
            for t in cat.volume_types.iter().take(16) {
                for size in [1, 100, 16384] {
                    let cfg = VolumeConfig::new(size, Some(16000), Some(1000.0));
                    if let Ok(q) = price::volume(&cat, region, &t.name, &cfg) {
                        finite(q.monthly_cost_usd, "monthly cost");
                    }
                }
            }
            let req = PlanRequest {
                region: region.clone(),
                requirements: Requirements {
                    capacity_gib: 5120,
                    iops: Some(16000),
                    throughput_mibs: Some(1000.0),
                },
                allow_hybrid: true,
                instance: cat.instances.first().map(|i| i.name.clone()),
                allow_ephemeral: true,
                hit_ratio: HitRatio::Assumed(plan::DEFAULT_HIT_RATIO),
            };
            if let Ok(p) = plan::plan(&cat, &req) {
                serde_json::to_string(&p).unwrap();
            }
        }
    });
}

/// Any bytes as an AWS offer file: an overlay or an error, with memory bounded whatever the
/// order of products and terms.
#[test]
fn fuzz_aws_offer() {
    fuzz_target!("fuzz_aws_offer", |input| {
        for region in ["us-east-1", "eu-north-1"] {
            if let Ok((cat, _)) =
                disktier_catalog::import::aws_offer::import(input, Path::new("fuzz.json"), region)
            {
                let _ = disktier_catalog::check::check(&cat);
            }
        }
    });
}

/// Any bytes as a page of a cloud's price API (`catalog refresh gcp|azure`), alone and as the
/// second page after a real one: an overlay that passes `catalog check` once merged, or an
/// error; memory bounded (the item array is streamed).
fn fuzz_refresh(target: &str, cloud: disktier_catalog::import::refresh::Cloud, regions: [&str; 2]) {
    let first = disktier_testkit::fuzz::seeds(env!("CARGO_MANIFEST_DIR"), target)
        .first()
        .cloned()
        .unwrap_or_default();
    fuzz_target!(target, |input| {
        for region in regions {
            let pages: Vec<Vec<(std::path::PathBuf, &[u8])>> = vec![
                vec![("fuzz.json".into(), input)],
                vec![
                    ("seed.json".into(), &first[..]),
                    ("fuzz.json".into(), input),
                ],
            ];
            for p in pages {
                if let Ok((cat, _)) = disktier_catalog::import::refresh::refresh(cloud, p, region) {
                    let mut merged = Catalog::embedded();
                    merged.merge(cat);
                    assert!(disktier_catalog::check::check(&merged).ok());
                }
            }
        }
    });
}

#[test]
fn fuzz_gcp_skus() {
    fuzz_refresh(
        "fuzz_gcp_skus",
        disktier_catalog::import::refresh::Cloud::Gcp,
        ["asia-east1", "us-central1"],
    );
}

#[test]
fn fuzz_azure_prices() {
    fuzz_refresh(
        "fuzz_azure_prices",
        disktier_catalog::import::refresh::Cloud::Azure,
        ["eastus", "westeurope"],
    );
}
