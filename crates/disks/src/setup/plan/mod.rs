//! Planning: from the disks' real state (sysfs, blkid, mountinfo) and the request, the steps
//! that bring the node to the requested state, and nothing more. A node already in that state
//! gets an empty plan; a node whose disks came back blank gets everything again; a node left
//! half-way by a crash gets the rest.

mod checks;
mod persist_steps;
mod planner;
mod state;
mod types;

pub use planner::given_name;
pub use state::{derived_uuid, is_derived_form, own_state, owner_ids};
pub use types::{DevState, DeviceReport, Layout, SetupPlan, Skipped};

use crate::discover::{Disk, Node};
use crate::setup::config::{LayoutChoice, SetupConfig};
use crate::setup::kernel::{is_quota_option, Kernel};
use crate::setup::step::Step;
use crate::setup::SetupError;
use planner::{names, resolve, Planner};
use std::path::Path;

/// Plans one round. `root` is where discovery read the node (`/` for the real node).
pub fn plan(
    cfg: &SetupConfig,
    node: &Node,
    kernel: &Kernel,
    root: &Path,
    has_program: &dyn Fn(&str) -> bool,
) -> Result<SetupPlan, SetupError> {
    if let Some(why) = &kernel.no_quota {
        if let Some(o) = cfg.options.iter().find(|o| is_quota_option(o)) {
            return Err(SetupError::NoQuota {
                option: o.to_string(),
                why: why.clone(),
                needs: crate::setup::kernel::quota_needs(cfg.fs),
            });
        }
    }
    let mut p = Planner {
        cfg,
        node,
        kernel,
        root,
        plan: SetupPlan::default(),
        persisted: Vec::new(),
        binds: Vec::new(),
        mounting: false,
    };

    // Choose the disks.
    let mut chosen: Vec<(&Disk, DevState)> = Vec::new();
    match &cfg.devices {
        Some(list) => {
            for (i, given) in list.iter().enumerate() {
                let d = resolve(node, root, given)?;
                if let Some(j) = chosen.iter().position(|(c, _)| c.name == d.name) {
                    return Err(SetupError::Config(format!(
                        "--devices {} and {given} are the same disk ({}): name each disk once",
                        list[..i]
                            .iter()
                            .filter(|g| given_name(root, g).as_deref() == Some(d.name.as_str()))
                            .map(|g| g.as_str())
                            .next()
                            .unwrap_or(chosen[j].0.best_path()),
                        d.name
                    )));
                }
                match own_state(d, &cfg.label) {
                    DevState::Refused(reasons) => {
                        return Err(SetupError::Refused {
                            device: given.to_string(),
                            reasons: reasons.iter().map(|r| r.to_string()).collect(),
                        })
                    }
                    s => chosen.push((d, s)),
                }
            }
        }
        None => {
            for d in node.disks.iter().filter(|d| d.ephemeral) {
                match own_state(d, &cfg.label) {
                    DevState::Refused(reasons) => p.plan.skipped.push(Skipped {
                        path: d.best_path().to_string(),
                        class: d.class,
                        why: reasons
                            .iter()
                            .map(|r| r.to_string())
                            .collect::<Vec<_>>()
                            .join("; "),
                        reasons,
                    }),
                    s => chosen.push((d, s)),
                }
            }
        }
    }
    for s in &p.plan.skipped {
        p.plan
            .notes
            .push(format!("skipped {} ({}): {}", s.path, s.class, s.why));
    }
    p.plan.devices = chosen
        .iter()
        .map(|(d, s)| DeviceReport {
            path: d.best_path().to_string(),
            name: d.name.clone(),
            class: d.class,
            state: s.word(),
        })
        .collect();
    if chosen.is_empty() {
        p.plan.notes.push(
            "no eligible local ephemeral disk (instance store, local SSD, Azure temp NVMe): nothing to do"
                .into(),
        );
        return Ok(p.plan);
    }

    // Choose the layout from the request and what the disks already hold.
    let members = chosen
        .iter()
        .filter(|(_, s)| matches!(s, DevState::OurMember { .. }))
        .count();
    let fss = chosen
        .iter()
        .filter(|(_, s)| matches!(s, DevState::OurFs { .. }))
        .count();
    let layout = match cfg.layout {
        LayoutChoice::Separate => {
            if members > 0 {
                return Err(SetupError::Config(format!(
                    "--layout separate, but {} already belong to disktier's RAID0 array {:?}: drop --layout separate to keep the array",
                    names(&chosen, |s| matches!(s, DevState::OurMember { .. })),
                    cfg.label
                )));
            }
            Layout::Separate
        }
        _ if members > 0 => Layout::Raid0,
        _ if chosen.len() == 1 => {
            if cfg.layout == LayoutChoice::Raid0 {
                p.plan.notes.push(format!(
                    "--layout raid0 with one disk: RAID0 needs two or more, so {} is used directly (no md array)",
                    chosen[0].0.best_path()
                ));
            }
            Layout::Direct
        }
        LayoutChoice::Auto | LayoutChoice::Raid0 => {
            if fss > 0 {
                return Err(SetupError::Config(format!(
                    "{} already {} disktier's filesystem, but {} disks were chosen: pass --devices with the disk(s) to keep, or --layout separate",
                    names(&chosen, |s| matches!(s, DevState::OurFs { .. })),
                    if fss == 1 { "holds" } else { "hold" },
                    chosen.len()
                )));
            }
            Layout::Raid0
        }
    };
    p.plan.layout = Some(layout);
    match layout {
        Layout::Direct => {
            let (d, s) = &chosen[0];
            p.single(d, s, &cfg.mount, &cfg.label)?;
            p.bind_dirs(Some(d.maj_min.clone()))?;
        }
        Layout::Separate => p.separate(&chosen)?,
        Layout::Raid0 => p.raid(&chosen, has_program)?,
    }
    if p.plan.steps.iter().any(Step::replan_after) {
        return Ok(p.plan);
    }
    p.persist()?;
    if p.mounting && !kernel.selinux {
        p.plan
            .notes
            .push("SELinux is not enabled (no /sys/fs/selinux/enforce): no relabel needed".into());
    }
    Ok(p.plan)
}
