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
            d.size_bytes
                .map_or_else(|| "?".to_string(), |b| Bytes(b).to_string()),
            d.class.to_string(),
            d.model.clone().unwrap_or_else(|| "-".into()),
            if d.rotational { "yes" } else { "no" }.into(),
            d.scheduler.clone().unwrap_or_else(|| "-".into()),
            fs,
            if d.eligible { "yes" } else { "no" }.into(),
        ]);
    }
    // Padded by display width (a model or label in CJK takes two columns a character).
    // A firmware string's newline would split a row in two: control characters are replaced
    // here, before the table is laid out, as they are in the rest of the text below.
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| r.iter().map(|c| printable(c)).collect())
        .collect();
    let table = disktier_store::compare::align(&rows);
    let mut out = String::new();
    for (n, line) in table.lines().enumerate() {
        out.push_str(line);
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
    out.lines().map(|l| printable(l) + "\n").collect()
}

fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_disks::discover::discover;

    fn fixture_disks() -> Vec<Disk> {
        let r = disktier_cmd::RecordingRunner::new();
        discover(&disktier_testkit::cli::sysfs_fixture("aws-m6id-xlarge"), &r).unwrap()
    }

    /// Columns line up in terminal columns: a CJK model (two columns a character) and a model
    /// with a newline in it (firmware strings are outside input) leave the next column where
    /// the others have it, and every disk keeps its own sub-lines.
    #[test]
    fn columns_line_up_by_display_width_and_firmware_newlines_stay_on_their_row() {
        let mut d = fixture_disks();
        assert!(d.len() >= 2, "fixture has {} disks", d.len());
        d[0].model = Some("データ用ディスク".into());
        d[1].model = Some("two\nlines".into());
        let t = table(&d);
        let class_col = |line: &str, class: &str| {
            let at = line
                .find(class)
                .unwrap_or_else(|| panic!("{class} in {line:?}"));
            unicode_width::UnicodeWidthStr::width(&line[..at])
        };
        let lines: Vec<&str> = t.lines().collect();
        let header = class_col(lines[0], "CLASS");
        let rows: Vec<&&str> = lines
            .iter()
            .filter(|l| d.iter().any(|x| l.starts_with(&format!("{} ", x.name))))
            .collect();
        assert_eq!(rows.len(), d.len(), "{t}");
        for (row, disk) in rows.iter().zip(&d) {
            assert_eq!(class_col(row, &disk.class.to_string()), header, "{t}");
        }
        assert!(t.contains("two?lines"), "{t}");
    }
}
