//! A job file's run as text: the tables `bench FILE.fio` prints and `show` prints for a stored
//! run (moved out of jobfile.rs, which was at 600 lines).

use disktier_engine::result::JobFileDoc;

/// A job file's run as tables, as `bench FILE.fio` prints it (what `show` prints for a stored
/// one): per reporting group, one row per job and direction (or the group's merged row when the
/// file asked for group_reporting), then the jobs' warnings.
pub fn render_text(doc: &JobFileDoc) -> String {
    use disktier_engine::result::Results;
    use disktier_units::fmt_ns;
    let mut s = format!("{} (engine {})\n", doc.jobfile, doc.engine);
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&format!(
        "{:<16} {:<6} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}\n",
        "job", "", "ios", "IOPS", "MiB/s", "p50", "p99", "max"
    ));
    let rows = |s: &mut String, name: &str, r: &Results| {
        for (dir, d) in [("read", &r.read), ("write", &r.write), ("sync", &r.sync)] {
            let Some(d) = d else { continue };
            // A figure the source did not carry is unknown: shown as "-", never as 0.
            let p = |q: f64| d.lat_ns.p(q).map_or("-".into(), |x| fmt_ns(x as f64));
            let max = d.lat_ns.max_ns().map_or("-".into(), |x| fmt_ns(x as f64));
            let mib = if dir == "sync" {
                "-".to_string()
            } else {
                format!("{:.2}", d.bw_bytes / 1048576.0)
            };
            s.push_str(&format!(
                "{:<16} {:<6} {:>9} {:>10.1} {:>9} {:>10} {:>10} {:>10}\n",
                name,
                dir,
                d.ios,
                d.iops,
                mib,
                p(50.0),
                p(99.0),
                max
            ));
        }
    };
    for g in &doc.groups {
        s.push_str(&format!("group {}: {}\n", g.group, g.jobs.join(", ")));
        if g.group_reporting {
            rows(&mut s, &format!("group {}", g.group), &g.results);
            continue;
        }
        for j in doc.jobs.iter().filter(|j| j.group == g.group) {
            rows(&mut s, &j.name, &j.results);
        }
    }
    for j in &doc.jobs {
        for w in &j.warnings {
            s.push_str(&format!("warning: [{}] {w}\n", j.name));
        }
    }
    s
}
