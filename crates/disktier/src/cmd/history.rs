//! `disktier history`: the stored runs, the last saved first, filtered by target, profile or kind. A
//! fio job file's run (`bench FILE.fio`, `import fio --jobs`) lists its first reporting group's
//! figures, its jobs combined (`disktier_store::doc::job_file_listing`); `show` prints every job.
//! A run stopped early (Ctrl-C or a signal) is marked "(interrupted)" beside its kind.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use crate::text::printable;
use disktier_store::model::KINDS;
use disktier_store::{Filter, RunSummary, Store};
use disktier_units::{fmt_ns, Bytes};

#[derive(Debug, clap::Args)]
// Its own exit codes: it inherited disktier's "1 a verdict failed" (QA).
#[command(
    after_help = "Exit status: 0 listed (also when no run matches), 2 usage or runtime error (the store cannot be read)."
)]
pub struct Args {
    /// Only runs on this target path (an existing path matches however it was typed, and runs
    /// stored with a relative target match the paths that end with it).
    // Any bytes: a target whose name is not UTF-8 is stored with U+FFFD in their place, and
    // found by the same lossy reading of the path typed here (clap's String refused it).
    #[arg(long, value_parser = clap::builder::OsStringValueParser::new())]
    pub target: Option<std::ffi::OsString>,
    /// Only runs of this profile (etcd, read-iops, ...).
    #[arg(long, value_parser = super::value_enum::Offered { values: super::value_enum::PROFILES, check: super::value_enum::any_text }, hide_possible_values = true)]
    pub profile: Option<String>,
    /// Only runs made by this command (bench, check, assess, import, interfere, setup), or
    /// `unmeasured`: the fleet nodes that gave no result.
    #[arg(long, value_parser = super::value_enum::Offered { values: &KINDS, check: kind }, hide_possible_values = true)]
    pub kind: Option<String>,
    /// Only the runs of one `disktier assess` (its assess id).
    #[arg(long)]
    pub group: Option<String>,
    /// The newest N runs.
    // 0 is refused, as `report --last 0` is (QA: it listed nothing and said no run matched).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,
}

/// `--kind`: one of the kinds a store holds (an unknown one would silently list nothing).
fn kind(s: &str) -> Result<String, String> {
    if KINDS.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?} is not a kind of run: runs are {}",
            KINDS.join(", ")
        ))
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let filter = Filter {
        profile: args.profile,
        kind: args.kind,
        group_id: args.group,
        last: args.last,
        ..Filter::default()
    };
    let filter = match &args.target {
        Some(t) => filter.target_os_path(t),
        None => filter,
    };
    // Reading never creates a store, and reads one it cannot write.
    let mut store = Store::open_existing(ctx.store().db.as_deref())?;
    let runs = store.list(&filter)?;
    if ctx.json() {
        print_json(&serde_json::json!({"schema_version": SCHEMA_VERSION, "runs": runs}))?;
    } else if runs.is_empty() {
        ctx.note(format_args!(
            "no stored runs match (store: {})",
            // One line: a note keeps its own line breaks, and a --db path may hold one (QA).
            crate::text::printable(&store.location(), false)
        ));
    } else {
        crate::out::print(&table(&runs))?;
    }
    Ok(Outcome::Pass)
}

/// A cell for an optional figure.
fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The listing as aligned text columns.
pub fn table(runs: &[RunSummary]) -> String {
    let mut rows = vec![[
        "ID",
        // When the run was saved, which orders the listing (`--last`): for an import, when it
        // was imported, which can be long after fio ran (`show` prints both). "WHEN" left the
        // reader to take it for the time the run measured (QA on dt-s24).
        "SAVED (UTC)",
        "KIND",
        "PROFILE",
        "TARGET",
        "HOST",
        "SYNC P99",
        "READ IOPS",
        "WRITE IOPS",
        "READ BW",
        "WRITE BW",
    ]
    .map(String::from)
    .to_vec()];
    for r in runs {
        let mut profile = r.profile.clone().unwrap_or_else(|| "-".into());
        if r.quick {
            profile.push_str(" (quick)");
        }
        rows.push(vec![
            r.id.clone(),
            r.created_at
                .get(..19)
                .unwrap_or(&r.created_at)
                .replace('T', " "),
            if r.interrupted {
                // Ctrl-C or a signal stopped it: `show` says so too.
                format!("{} (interrupted)", r.kind)
            } else {
                r.kind.clone()
            },
            profile,
            r.target.clone().unwrap_or_else(|| "-".into()),
            r.hostname.clone().unwrap_or_else(|| "-".into()),
            opt(r.sync_p99_ns, |v| fmt_ns(v as f64)),
            opt(r.read_iops, iops),
            opt(r.write_iops, iops),
            opt(r.read_bw_bytes, |v| format!("{}/s", Bytes(v as u64))),
            opt(r.write_bw_bytes, |v| format!("{}/s", Bytes(v as u64))),
        ]);
    }
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| r.into_iter().map(|c| printable(&c, false)).collect())
        .collect();
    disktier_store::compare::align(&rows)
}

/// IOPS as the column shows them, whole; a figure no disk gives (a damaged or forged row,
/// [`disktier_store::compare::absurd`]) in scientific notation rather than 300 digits (QA: a
/// stored write IOPS of 1e300).
fn iops(v: f64) -> String {
    if disktier_store::compare::absurd(v) {
        format!("{v:.2e}")
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absurd_iops_is_shown_short() {
        assert_eq!(iops(75145.6), "75146");
        assert_eq!(iops(1e300), "1.00e300");
    }
}
