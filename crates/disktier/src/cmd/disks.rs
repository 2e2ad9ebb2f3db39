//! `disktier disks`: the node's block devices, classified, with whether `setup` may take each
//! one and why not.

use super::{Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use disktier_cmd::RealRunner;
use disktier_disks::discover::{discover, Disk};
use disktier_units::Bytes;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read the node below DIR, laid out like / (DIR/sys/block, DIR/proc/self/mountinfo,
    /// DIR/dev/disk/by-id, DIR/blkid/NAME): for tests and fixtures. No command runs then.
    #[arg(long, hide = true, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct Doc<'a> {
    schema_version: u32,
    disks: &'a [Disk],
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let root = args.sysfs_root.unwrap_or_else(|| PathBuf::from("/"));
    let disks = discover(&root, &RealRunner)?;
    let doc = Doc {
        schema_version: SCHEMA_VERSION,
        disks: &disks,
    };
    ctx.print(&doc, || table(&disks))?;
    Ok(Outcome::Pass)
}

/// The human table: one line per disk, then where it is mounted, its stable path and, when
/// `setup` would not take it, why.
pub fn table(disks: &[Disk]) -> String {
    let mut rows = vec![[
        "NAME".to_string(),
        "SIZE".into(),
        "CLASS".into(),
        "MODEL".into(),
        "ROT".into(),
        "SCHED".into(),
        "FS".into(),
        "ELIGIBLE".into(),
    ]];
    for d in disks {
        let fs = match (&d.signature.fstype, &d.signature.label, &d.signature.pttype) {
            (Some(t), Some(l), _) => format!("{t}({l})"),
            (Some(t), None, _) => t.clone(),
            (None, _, Some(pt)) => format!("{pt} table"),
            _ => "-".into(),
        };
        rows.push([
            d.name.clone(),
            Bytes(d.size_bytes).to_string(),
            d.class.to_string(),
            d.model.clone().unwrap_or_else(|| "-".into()),
            if d.rotational { "yes" } else { "no" }.into(),
            d.scheduler.clone().unwrap_or_else(|| "-".into()),
            fs,
            if d.eligible { "yes" } else { "no" }.into(),
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (n, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if n == 0 {
            continue;
        }
        let d = &disks[n - 1];
        if let Some(p) = &d.stable_path {
            out.push_str(&format!("    by-id: {p}\n"));
        }
        for p in &d.partitions {
            let fs = p.signature.fstype.clone().unwrap_or_else(|| "-".into());
            let at = if p.mountpoints.is_empty() {
                String::new()
            } else {
                format!(" on {}", p.mountpoints.join(", "))
            };
            out.push_str(&format!(
                "    part {} {} {fs}{at}\n",
                p.name,
                Bytes(p.size_bytes)
            ));
        }
        if !d.eligible {
            let why: Vec<String> = d.ineligible.iter().map(|r| r.to_string()).collect();
            out.push_str(&format!("    not eligible: {}\n", why.join("; ")));
        }
    }
    if disks.is_empty() {
        out.push_str("no block devices\n");
    }
    // Models, serials and by-id names come from device firmware: no escape sequence of theirs
    // reaches the terminal.
    out.chars()
        .map(|c| if c.is_control() && c != '\n' { '?' } else { c })
        .collect()
}
