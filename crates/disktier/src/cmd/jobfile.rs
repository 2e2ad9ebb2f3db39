//! `disktier bench JOBFILE`: runs a fio job file. Reading the file, its jobs, the run and its
//! document are in [`crate::app::jobfile`]; each job's options are read by the command line's
//! own option parser (`app::jobfile::FileOptions`), so a job file accepts exactly what
//! `bench --OPTION` does. This prints the run per job and per reporting group and saves it
//! as one run. `--engine fio` hands the same file to fio.

use super::runargs::{EngineChoice, RunArgs};
use super::{progress, Ctx, Outcome};
use crate::app::jobfile::{load_jobs, measure_file, FileOptions};
use crate::exposition::{self, RunMetrics};
use anyhow::bail;
use disktier_engine::RunOptions;
use disktier_units::fmt_ns;
use serde_json::Value;
use std::path::Path;

/// `bench JOBFILE`: runs the file's jobs with `run`'s engine and settings. `misfits` are the
/// options given that cannot apply to a job file (refused).
pub fn run(ctx: &Ctx, target: &Path, run: &RunArgs, misfits: &[&str]) -> anyhow::Result<Outcome> {
    if !misfits.is_empty() {
        bail!(
            "{} is a fio job file: its jobs take their options from the file, so {} cannot apply; put them in its [global] section",
            target.display(),
            misfits.join(", ")
        );
    }
    let lenient = run.engine == EngineChoice::Fio;
    let loaded = load_jobs(target, lenient, &FileOptions)?;
    let opts = RunOptions {
        stop: progress::stop_flag(),
        progress: progress::reporter(ctx, "jobs"),
        keep_files: run.keep_files,
        destructive: run.destructive,
        layout: !run.no_layout,
        io_log: None,
        profile: None,
        quick: false,
    };
    let started_at = disktier_engine::now_rfc3339();
    let result = measure_file(&loaded.file, target, &loaded.jobs, run.engine.into(), &opts);
    progress::clear();
    let (engine, mut outs) = result?;
    crate::app::jobfile::check_measured(target, &mut outs)?;
    let interrupted = outs.iter().any(|o| o.measured.doc.interrupted);
    let value = serde_json::to_value(loaded.document(engine, &started_at, &outs))?;
    // One run per job, labelled with the job's name and place in the file (two sections, or
    // fio's numjobs clones, may share a name).
    let metrics: Vec<RunMetrics> = outs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let d = &o.measured.doc;
            let mut m = RunMetrics::from_doc("bench", &exposition::local_node(d), d);
            m.labels.extra.push(("job", o.name.clone()));
            m.labels.extra.push(("job_index", i.to_string()));
            m
        })
        .collect();
    save_and_print(ctx, "bench", &value, |ctx| {
        ctx.export_run_metrics("bench", &metrics, interrupted)
    })?;
    if interrupted {
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
    let printed = export(ctx).and_then(|()| {
        if ctx.json() {
            super::print_json(value)?;
        } else if !ctx.prometheus() {
            // With --format prometheus the exposition is the output.
            crate::out::print(&render(value))?;
        }
        Ok(())
    });
    if let Some(id) = id {
        ctx.note(format!("saved as run {id}"));
    }
    printed
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
