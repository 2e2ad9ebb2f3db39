//! `disktier bench JOBFILE`: runs a fio job file. Reading the file, its jobs, the run and its
//! document are in [`crate::app::jobfile`]; each job's options are read by the command line's
//! own option parser (`app::jobfile::FileOptions`), so a job file accepts exactly what
//! `bench --OPTION` does. This prints the run per job and per reporting group and saves it
//! as one run. `--engine fio` hands the same file to fio.

use super::runargs::RunArgs;
use super::{progress, Ctx, Outcome};
use anyhow::bail;
use disktier_units::fmt_ns;
use serde_json::Value;
use std::path::Path;

/// `bench JOBFILE`: runs the file's jobs with `run`'s engine and settings. `misfits` are the
/// options given that cannot apply to a job file (refused).
pub fn run(ctx: &Ctx, target: &Path, run: &RunArgs, misfits: &[&str]) -> anyhow::Result<Outcome> {
    let result = crate::app::jobfile::run(
        target,
        run.into(),
        misfits,
        progress::stop_flag(),
        progress::reporter(ctx, "jobs"),
    );
    progress::clear();
    let r = result?;
    let value = serde_json::to_value(&r.doc)?;
    let metrics = crate::app::jobfile::metrics(&r.outs);
    save_and_print(ctx, "bench", &value, |ctx| {
        ctx.export_run_metrics("bench", &metrics, r.interrupted)
    })?;
    if r.interrupted {
        bail!("interrupted by a signal: the result above is partial (created files were removed unless --keep-files)");
    }
    Ok(Outcome::Pass)
}

/// Saves a job-file document as a run of `kind` ("bench", or "import" for an imported one),
/// then exports its metrics with `export` and prints it: output that cannot be written must
/// not cost the run.
pub fn save_and_print(
    ctx: &Ctx,
    kind: &str,
    value: &Value,
    export: impl FnOnce(&Ctx) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let id = ctx.store().save(kind, None, value)?;
    // A textfile that cannot be written does not keep the document off stdout.
    let exported = export(ctx);
    let printed = if ctx.json() {
        super::print_json(value)
    } else if !ctx.prometheus() {
        // With --format prometheus the exposition is the output.
        crate::out::print(&render(value)).map_err(Into::into)
    } else {
        Ok(())
    };
    if let Some(id) = id {
        ctx.note(format!("saved as run {id}"));
    }
    exported.and(printed)
}

/// The document as tables: per group, one row per job and direction (or the group's merged
/// row when the file asked for group_reporting).
fn render(v: &Value) -> String {
    let mut s = format!(
        "{} (engine {})\n",
        v["jobfile"].as_str().unwrap_or(""),
        v["engine"].as_str().unwrap_or("")
    );
    for n in v["notes"].as_array().into_iter().flatten() {
        s.push_str(&format!("note: {}\n", n.as_str().unwrap_or("")));
    }
    s.push_str(&format!(
        "{:<16} {:<6} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}\n",
        "job", "", "ios", "IOPS", "MiB/s", "p50", "p99", "max"
    ));
    let rows = |s: &mut String, name: &str, r: &Value| {
        for dir in ["read", "write", "sync"] {
            let d = &r[dir];
            if !d.is_object() {
                continue;
            }
            // A figure the source did not carry is null: shown as "-", never as 0.
            let p = |k: &str| {
                d["lat_ns"]["percentiles"][k]
                    .as_u64()
                    .map_or("-".into(), |x| fmt_ns(x as f64))
            };
            let max = d["lat_ns"]["max"].as_f64().map_or("-".into(), fmt_ns);
            let mib = if dir == "sync" {
                "-".to_string()
            } else {
                format!("{:.2}", d["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0)
            };
            s.push_str(&format!(
                "{:<16} {:<6} {:>9} {:>10.1} {:>9} {:>10} {:>10} {:>10}\n",
                name,
                dir,
                d["ios"].as_u64().unwrap_or(0),
                d["iops"].as_f64().unwrap_or(0.0),
                mib,
                p("50"),
                p("99"),
                max
            ));
        }
    };
    for g in v["groups"].as_array().into_iter().flatten() {
        let id = g["group"].as_u64().unwrap_or(0);
        let names: Vec<&str> = g["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        s.push_str(&format!("group {id}: {}\n", names.join(", ")));
        if g["group_reporting"].as_bool() == Some(true) {
            rows(&mut s, &format!("group {id}"), &g["results"]);
            continue;
        }
        for j in v["jobs"].as_array().into_iter().flatten() {
            if j["group"].as_u64() == Some(id) {
                rows(&mut s, j["name"].as_str().unwrap_or(""), &j["results"]);
            }
        }
    }
    for j in v["jobs"].as_array().into_iter().flatten() {
        for w in j["warnings"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "warning: [{}] {}\n",
                j["name"].as_str().unwrap_or(""),
                w.as_str().unwrap_or("")
            ));
        }
    }
    s
}
