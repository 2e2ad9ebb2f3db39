//! Generating local-disk options for `--instance`: the instance's own instance store, switching
//! to its instance-store sibling (the OpenShift instance-disk recipe [recipe-ocp-instance-disk]),
//! or GCP local SSDs in the counts the machine type allows. All are ephemeral: weighed only with
//! `--allow-ephemeral`, else a note says what they would give.

use super::cost::equivalent;
use super::explain::{counts_words, local_ssd_caveats, sibling_caveats, store_performance};
use super::rank::push_checked;
use super::types::{Candidates, Component, Ctx, Kind, OptionPerformance, PlanError, PlanOption};
use crate::fmt::{int, round_cents, usd};
use crate::model::Store;
use crate::perf::VolumeConfig;
use crate::price;

/// The local-disk options of `inst_name` (an instance type of the catalog).
pub(super) fn instance_store(
    ctx: &Ctx,
    inst_name: &str,
    out: &mut Candidates,
) -> Result<(), PlanError> {
    let (cat, region) = (ctx.cat, ctx.region);
    let inst = price::known_instance(cat, inst_name)?;
    // An instance of another cloud than the region's: say so, as `price` does for volume types.
    let reg = price::region(cat, region)?;
    price::same_cloud(cat, reg, &inst.name, true, &inst.cloud)?;
    if let Some(counts) = &inst.local_ssd_counts {
        return gcp_local_ssd(ctx, inst_name, counts, inst.weak, out);
    }
    // An instance's own store costs nothing more, so its price is not needed (QA: `plan --region
    // us-west-2 --instance i3.8xlarge` failed for the i3's missing us-west-2 price).
    if let Some(store) = &inst.store {
        out.notes.push(format!(
            "{inst_name} already has an instance store: use it (disktier disks / setup) at no extra cost"
        ));
        if ctx.request.allow_ephemeral {
            let (iops, tp, perf_caveat) = store_performance(inst);
            let mut opt = store_option(
                format!("{inst_name}'s own instance store ({})", nvme(store)),
                format!("{inst_name} instance store"),
                store,
                0.0,
                (iops, tp),
                vec![
                    format!(
                        "data on the instance store is {}: only for data you can rebuild",
                        price::store_lifetime(&inst.cloud)
                    ),
                    perf_caveat,
                ],
            );
            opt.weak = inst.weak;
            push_checked(opt, store.total_bytes() >> 30, ctx.req(), out);
        }
        return Ok(());
    }
    let Some(sib) = crate::quoted::store_sibling(cat, inst_name) else {
        out.notes.push(format!(
            "the catalog has no instance-store sibling of {inst_name}"
        ));
        return Ok(());
    };
    // Without both on-demand prices in the region the switch cannot be priced: a note says
    // which one is missing, and the volumes are still planned (left item: the whole plan failed).
    let (now, then) = match (
        price::instance_monthly(cat, region, inst_name),
        price::instance_monthly(cat, region, &sib),
    ) {
        (Ok(now), Ok(then)) => (now, then),
        (Err(e), _) | (_, Err(e)) => {
            out.notes.push(format!(
                "{sib} (its instance-store sibling) is not weighed against {inst_name}: {e}"
            ));
            return Ok(());
        }
    };
    let delta = then - now;
    let s = cat.instance(&sib).expect("sibling exists");
    let store = s.store.as_ref().expect("a sibling has a store");
    if !ctx.request.allow_ephemeral {
        out.notes.push(format!(
            "{sib} has {} x {} GB of local NVMe for {}/month more than {inst_name}: pass --allow-ephemeral to weigh it (data lost on stop)",
            store.count,
            int(store.size_gb),
            usd(delta)
        ));
        return Ok(());
    }
    let equivalent = equivalent(cat, region, delta);
    let (iops, tp, perf_caveat) = store_performance(s);
    let mut caveats = sibling_caveats(
        (inst_name, &sib, &s.cloud),
        store,
        (now, delta),
        &equivalent,
    );
    caveats.push(perf_caveat);
    let mut opt = store_option(
        format!("{inst_name} -> {sib} ({})", nvme(store)),
        format!("{sib} instance store"),
        store,
        delta,
        (iops, tp),
        caveats,
    );
    opt.equivalent = Some(equivalent);
    opt.weak = s.weak || inst.weak;
    push_checked(opt, store.total_bytes() >> 30, ctx.req(), out);
    Ok(())
}

/// "2 x 237 GB NVMe".
fn nvme(store: &Store) -> String {
    format!("{} x {} GB NVMe", store.count, int(store.size_gb))
}

/// An instance-store option costing `delta` a month more than the instance has now.
fn store_option(
    label: String,
    type_: String,
    store: &Store,
    delta: f64,
    (iops, tp): (Option<f64>, Option<f64>),
    caveats: Vec<String>,
) -> PlanOption {
    PlanOption {
        kind: Kind::InstanceStore,
        label,
        monthly_cost_usd: round_cents(delta),
        components: vec![Component {
            type_,
            role: "instance-store".into(),
            size_gib: store.total_bytes() >> 30,
            iops: iops.map(|i| i as u64),
            throughput_mibs: tp,
            monthly_cost_usd: round_cents(delta),
        }],
        performance: OptionPerformance {
            iops,
            throughput_mibs: tp,
            ..Default::default()
        },
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: Some(delta),
        equivalent: None,
        weak: false,
        unverified: vec![],
    }
}

/// GCP local SSDs on `machine`, in the fewest of the allowed `counts` that hold the capacity
/// and, by the catalog's figures, deliver the IOPS and throughput; else the most the machine
/// takes (then rejected with the shortfall). `weak`: the catalog lists only the counts seen to
/// work, not every count the machine type allows, so a shortfall is no limit of the machine.
fn gcp_local_ssd(
    ctx: &Ctx,
    machine: &str,
    counts: &[u32],
    weak: bool,
    out: &mut Candidates,
) -> Result<(), PlanError> {
    let (cat, region, req) = (ctx.cat, ctx.region, ctx.req());
    let label = format!("{machine} + local SSD");
    let most = counts.iter().max().copied().unwrap_or(0);
    if counts.is_empty() {
        let reason = format!(
            "{machine} cannot have local SSD (e2 machine types): use an n1/n2 machine type"
        );
        out.reject(Kind::InstanceStore, label, reason, None);
        return Ok(());
    }
    let Ok((_, vt, _)) = price::lookup(cat, region, "local-ssd") else {
        out.notes
            .push(format!("no local-ssd price for {region} in the catalog"));
        return Ok(());
    };
    let unit = vt.unit_gib.unwrap_or(375);
    if !ctx.request.allow_ephemeral {
        out.notes.push(if weak {
            format!(
                "{machine} takes local SSDs of {unit} GiB (the catalog lists {} for it): pass --allow-ephemeral to weigh them (data lost on stop)",
                counts_words(counts)
            )
        } else {
            format!(
                "{machine} can take up to {most} local SSDs of {unit} GiB: pass --allow-ephemeral to weigh them (data lost on stop)"
            )
        });
        return Ok(());
    }
    let mut fitting: Vec<u32> = counts
        .iter()
        .copied()
        .filter(|&n| n as u64 * unit >= req.capacity_gib)
        .collect();
    fitting.sort_unstable();
    let quote = |n: u32| {
        let cfg = VolumeConfig::new(n as u64 * unit, None, None);
        price::volume(cat, region, "local-ssd", &cfg)
    };
    let delivers = |n: u32| {
        quote(n).ok().is_some_and(|q| {
            let p = &q.performance;
            req.iops
                .is_none_or(|w| p.baseline_iops.is_none_or(|i| i + 1e-9 >= w as f64))
                && req
                    .throughput_mibs
                    .is_none_or(|w| p.baseline_throughput_mibs.is_none_or(|t| t + 1e-9 >= w))
        })
    };
    let Some(n) = fitting
        .iter()
        .copied()
        .find(|&n| delivers(n))
        .or(fitting.last().copied())
    else {
        let shortfall = format!(
            "{most} x {} GiB = {} GiB < {} GiB required",
            int(unit),
            int(most as u64 * unit),
            int(req.capacity_gib)
        );
        let reason = if weak {
            // QA: "n1-standard-2 allows at most 1 local SSD" stated a limit no source gives.
            format!(
                "the catalog lists only {} for {machine} (not every count GCP allows for it is in the catalog's sources): {shortfall}; check the machine type's valid local SSD counts in cloud.google.com/compute/docs/disks/local-ssd",
                counts_words(counts)
            )
        } else {
            format!(
                "{machine} allows at most {}: {shortfall}",
                crate::fmt::count(most as usize, "local SSD")
            )
        };
        out.reject(Kind::InstanceStore, label, reason, None);
        return Ok(());
    };
    let q = quote(n)?;
    let (iops, tp) = (
        q.performance.baseline_iops,
        q.performance.baseline_throughput_mibs,
    );
    let mut caveats = local_ssd_caveats(machine, counts, weak, n, &q.performance, &vt.source);
    if let Some(m) = crate::quoted::measured::local_ssd(machine, n) {
        caveats.push(measured_caveat(m, (iops, tp), req));
    }
    let opt = PlanOption {
        kind: Kind::InstanceStore,
        // The catalog's unit is GiB: a local SSD is 375 GiB, 402,653,184,000 bytes (fdisk in the
        // GKE local-SSD recipe [recipe-gke-local-ssd]).
        label: format!("{machine} + {n} x {unit} GiB local SSD"),
        monthly_cost_usd: q.monthly_cost_usd,
        components: vec![Component {
            type_: "local-ssd".into(),
            role: "instance-store".into(),
            size_gib: n as u64 * unit,
            iops: iops.map(|i| i as u64),
            throughput_mibs: tp,
            monthly_cost_usd: q.monthly_cost_usd,
        }],
        performance: OptionPerformance {
            iops,
            throughput_mibs: tp,
            ..Default::default()
        },
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: q.weak,
        unverified: vec![],
    };
    push_checked(opt, n as u64 * unit, req, out);
    Ok(())
}

/// What a recipe measured on these very local SSDs, against the catalog's figures (`iops`,
/// `mibs`) and the requirements (`asked`): QA saw the plan offer n1-standard-2's one local SSD
/// for 60,000 IOPS from the catalog's 90,000, where the GKE local-SSD recipe measured 45,200;
/// the recipe's throughput runs (398 MiB/s write, 703 read) are named beside them (left item of
/// session 25).
fn measured_caveat(
    m: &crate::quoted::measured::MeasuredLocalSsd,
    (iops, mibs): (Option<f64>, Option<f64>),
    asked: &crate::plan::Requirements,
) -> String {
    let mut s = format!(
        "{} measured {} with {}: {} random-write IOPS and {} random-read",
        m.source,
        m.machine,
        crate::fmt::count(m.count as usize, "local SSD"),
        int(m.write_iops),
        int(m.read_iops)
    );
    if let Some(i) = iops.filter(|i| (m.write_iops as f64) < *i) {
        s.push_str(&format!(
            ", the write side below the catalog's {}",
            int(i.floor() as u64)
        ));
    }
    // The catalog's throughput is the write side's too; the option is offered only for what
    // it gives, so a requirement is never past a measured figure above it.
    s.push_str(&format!(
        "; {} MiB/s written and {} MiB/s read in 1 MiB I/Os",
        int(m.write_mibs),
        int(m.read_mibs)
    ));
    if let Some(t) = mibs {
        s.push_str(&format!(", where the catalog counts {t:.0} MiB/s"));
    }
    if let Some(w) = asked.iops.filter(|w| m.write_iops < *w) {
        s.push_str(&format!(
            "; below the {} IOPS required: measure it (disktier bench) before counting on the catalog's figure",
            int(w)
        ));
    }
    s
}
