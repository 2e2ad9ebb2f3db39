//! `disktier show RUN`: one stored run, as a summary a person reads or (`--format json`) the
//! stored result document itself.

use super::{Ctx, Outcome};
use crate::app::jobfile::render_text;
use disktier_engine::result::{HostInfo, JobFileDoc, TargetInfo};
use disktier_engine::DirStats;
use disktier_interfere::InterfereDoc;
use disktier_store::compare::{fmt_count, fmt_value, Unit};
use disktier_store::doc::ResultDoc;
use disktier_store::{Store, StoredRun};
use disktier_units::fmt_ns;

#[derive(Debug, clap::Args)]
// Its own exit codes: it inherited disktier's "1 a verdict failed" (QA).
#[command(
    after_help = "Exit status: 0 shown, 2 usage or runtime error (no such run, or the store cannot be read)."
)]
pub struct Args {
    /// The run id (or a unique prefix of it), as `disktier history` lists.
    pub run: String,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    // Reading never creates a store, and reads one it cannot write.
    let run = Store::open_existing(ctx.store().db.as_deref())?.get(&args.run)?;
    ctx.print(&run.doc, || crate::text::printable(&summary(&run), true))?;
    Ok(Outcome::Pass)
}

fn dir_line(name: &str, s: &DirStats) -> String {
    let p = |q: f64| {
        s.lat_ns
            .p(q)
            .map(|v| fmt_ns(v as f64))
            .unwrap_or_else(|| "-".into())
    };
    let rate = if s.bw_bytes > 0.0 {
        format!("  {}", fmt_value(Unit::BytesPerSec, s.bw_bytes))
    } else {
        String::new()
    };
    // No count beside a latency: an import that gave none (etcd-perf without fio's report).
    let iops = if s.ios == 0 && s.lat_ns.p(99.0).is_some() {
        "-".to_string()
    } else {
        fmt_count(s.iops)
    };
    format!(
        "  {name:<6} {iops} IOPS{rate}  p50 {}  p99 {}  p99.9 {}  p99.99 {}\n",
        p(50.0),
        p(99.0),
        p(99.9),
        p(99.99)
    )
}

/// The text summary of a stored run: a benchmark result's figures and verdicts, an
/// interference comparison's table and recommendation (as `interfere` printed it), a fleet
/// node that gave no document (its status and reason); any other
/// document (a fleet node's setup, or one that does not read) is printed as stored, in JSON.
pub fn summary(run: &StoredRun) -> String {
    let s = &run.summary;
    let mut out = format!(
        "run      {}\nsaved    {}\nkind     {}{}\n",
        s.id,
        s.created_at,
        s.kind,
        s.group_id
            .as_ref()
            .map(|g| format!(" (group {g})"))
            .unwrap_or_default()
    );
    if s.kind == disktier_fleet::result::UNMEASURED_KIND {
        if let Ok(d) = serde_json::from_value::<disktier_fleet::result::Unmeasured>(run.doc.clone())
        {
            out.push_str(&format!(
                "\nnode {} of fleet run {} was not measured ({}): {}\n",
                d.fleet.node, d.fleet.fleet_run_id, d.unmeasured.status, d.unmeasured.reason
            ));
            return out;
        }
    }
    if s.kind == "interfere" {
        if let Ok(doc) = serde_json::from_value::<InterfereDoc>(run.doc.clone()) {
            out.push('\n');
            out.push_str(&disktier_interfere::render_text(&doc));
            return out;
        }
    }
    let doc = match ResultDoc::read(&run.doc) {
        Ok(ResultDoc::Run(doc)) => doc,
        Ok(ResultDoc::JobFile(doc)) => {
            job_file(&mut out, &doc);
            return out;
        }
        Err(e) => {
            let benchmark = disktier_store::model::BENCHMARK_KINDS.contains(&s.kind.as_str());
            out.push_str(&format!(
                "\nthe stored document ({}), as stored:\n",
                if benchmark || s.kind == "interfere" {
                    format!("unreadable as this kind's result ({e}): written by another version of disktier or damaged")
                } else {
                    "not a benchmark result".to_string()
                }
            ));
            out.push_str(&serde_json::to_string_pretty(&run.doc).unwrap_or_default());
            out.push('\n');
            return out;
        }
    };
    out.push_str(&target_line(&doc.target));
    out.push_str(&host_line(&doc.host));
    out.push_str(&format!(
        "profile  {}{}  engine {}  started {}  {}{}\n\nresults\n",
        doc.profile.as_deref().unwrap_or("custom job"),
        if doc.quick { " (quick)" } else { "" },
        doc.engine,
        doc.started_at,
        seconds(doc.duration_s),
        if doc.interrupted {
            "  INTERRUPTED: partial figures"
        } else {
            ""
        }
    ));
    let r = &doc.results;
    for (name, d) in [("read", &r.read), ("write", &r.write), ("sync", &r.sync)] {
        if let Some(d) = d {
            out.push_str(&dir_line(name, d));
        }
    }
    if let Some(sf) = &r.small_files {
        out.push_str(&format!(
            "  small files: {} files of {} in {:.2} s{} = {} files/s, {}\n",
            sf.files,
            disktier_units::Bytes(sf.file_size),
            sf.seconds,
            super::bench::final_sync(sf.sync_s, doc.interrupted),
            fmt_count(sf.files_per_s),
            fmt_value(Unit::BytesPerSec, sf.bw_bytes)
        ));
    }
    if !doc.verdicts.is_empty() {
        out.push_str("\nverdicts\n");
        for v in &doc.verdicts {
            let msg = if v.message.is_empty() {
                format!("{} = {}", v.metric, v.value)
            } else {
                v.message.clone()
            };
            out.push_str(&format!("  {} {}: {msg}\n", pass_word(v), v.name));
        }
    }
    for w in &doc.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A verdict's word: a run cut short whose interval does not settle its verdict is neither
/// (`Verdict::inconclusive`; `check etcd` says INCONCLUSIVE for it, and so does `show`).
pub(crate) fn pass_word(v: &disktier_engine::Verdict) -> &'static str {
    match (v.pass, v.inconclusive) {
        (true, _) => "PASS",
        (false, true) => "INCONCLUSIVE",
        (false, false) => "FAIL",
    }
}

/// The `target` line: the path, its kind and what is known of its device.
fn target_line(t: &TargetInfo) -> String {
    let mut dev = Vec::new();
    for (k, v) in [
        ("fs", &t.fs_type),
        ("device", &t.device),
        ("model", &t.model),
        ("scheduler", &t.scheduler),
    ] {
        if let Some(v) = v {
            dev.push(format!("{k} {v}"));
        }
    }
    let dev = if dev.is_empty() {
        String::new()
    } else {
        format!(", {}", dev.join(", "))
    };
    // An import that names no target says so, as the result's own header does, rather than a
    // blank path before a guessed kind (QA: "target    (directory, device vda)").
    if t.path.is_empty() {
        let dev = dev.strip_prefix(", ").unwrap_or("");
        return one_line(&if dev.is_empty() {
            "target   unknown (an import's --target names it)".to_string()
        } else {
            format!("target   unknown (an import's --target names it; {dev})")
        });
    }
    one_line(&format!("target   {} ({}{dev})", t.path, t.kind))
}

/// One line of `show`, ending in a newline: a newline or other control character inside a
/// stored name (a target path, a host name) is shown escaped, as `history` shows it, so that a
/// crafted name cannot make lines of its own (QA).
fn one_line(s: &str) -> String {
    let mut line = crate::text::printable(s, false);
    line.push('\n');
    line
}

/// The `host` line; an import, which knows no host, says so.
fn host_line(h: &HostInfo) -> String {
    if h.hostname.is_empty() && h.kernel.is_empty() {
        return "host     unknown (an import: the imported output does not name it)\n".into();
    }
    // An import named with --host: only the name is known.
    if h.kernel.is_empty() {
        return one_line(&format!(
            "host     {} (named at import; nothing else known)",
            h.hostname
        ));
    }
    one_line(&format!(
        "host     {} (kernel {}, {} CPUs{}{})",
        h.hostname,
        h.kernel,
        h.cpus,
        h.cloud
            .as_ref()
            .map(|c| format!(", {c}"))
            .unwrap_or_default(),
        h.instance_type
            .as_ref()
            .map(|c| format!(" {c}"))
            .unwrap_or_default()
    ))
}

/// A job file's run (`bench FILE.fio`, `import fio --jobs`): where and when, then its jobs and
/// groups as `bench FILE.fio` printed them.
fn job_file(out: &mut String, doc: &JobFileDoc) {
    if let Some(t) = &doc.target {
        out.push_str(&target_line(t));
    }
    // An import knows no host: its hostname is empty.
    if let Some(h) = doc.host.as_ref().filter(|h| !h.hostname.is_empty()) {
        out.push_str(&host_line(h));
    }
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    out.push_str(&one_line(&format!(
        "job file {}  engine {}  started {}  {}  ({}, {}){}",
        doc.jobfile,
        doc.engine,
        doc.started_at,
        seconds(doc.duration_s),
        plural(doc.jobs.len(), "job"),
        plural(doc.groups.len(), "reporting group"),
        if doc.interrupted {
            "  INTERRUPTED: partial figures"
        } else {
            ""
        }
    )));
    out.push('\n');
    out.push_str(&render_text(doc));
}

/// A run's length, `12.3 s`; one of 10^12 s or more (31,700 years: a damaged or forged
/// document, the bound of [`disktier_store::compare::absurd`]) in scientific notation rather
/// than 300 digits (QA).
fn seconds(s: f64) -> String {
    if disktier_store::compare::absurd(s) {
        format!("{s:.2e} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_absurd_length_is_shown_short() {
        assert_eq!(seconds(5.04), "5.0 s");
        assert_eq!(seconds(1e300), "1.00e300 s");
    }

    use super::*;

    /// QA: a newline in a stored target or host name printed raw, so a crafted name could fake
    /// lines of `show`'s output (`history` already escaped it).
    #[test]
    fn stored_names_stay_on_their_line() {
        let t = TargetInfo {
            path: "/tmp/h\nverdict PASS".into(),
            kind: "directory".into(),
            model: Some("m\r\x1b[2J".into()),
            ..TargetInfo::default()
        };
        let line = target_line(&t);
        assert_eq!(line.lines().count(), 1, "{line:?}");
        assert!(
            line.starts_with("target   /tmp/h\\nverdict PASS (directory"),
            "{line:?}"
        );
        assert!(!line.contains('\x1b'), "{line:?}");
        // No path (fio's text names none): said, with what fio's disk stats named.
        let t = TargetInfo {
            device: Some("vda".into()),
            kind: "directory".into(),
            ..TargetInfo::default()
        };
        assert_eq!(
            target_line(&t),
            "target   unknown (an import's --target names it; device vda)\n"
        );
        let h = HostInfo {
            hostname: "n\nPASS".into(),
            ..HostInfo::default()
        };
        let line = host_line(&h);
        assert_eq!(line.lines().count(), 1, "{line:?}");
        assert!(line.ends_with('\n'));
    }
}
