//! fio's JSON (fio 3.x, `jobs[]` as documented in fio's HOWTO, "JSON output") read into a
//! [`RunDoc`]: parsing with a size cap, one document per job, the job's options mapped back.

use super::histogram::{bin_stalls, histogram, sync_histogram};
use super::value::{int, num};
use super::FioError;
use crate::job::{Job, Rw};
use crate::result::{
    percentile_key, Cpu, DirStats, HostInfo, LatStats, Results, RunDoc, TargetInfo, SCHEMA_VERSION,
};
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a fio run gives: the document and fio's fsync/fdatasync latency histogram.
#[derive(Debug, Clone)]
pub struct FioMeasured {
    pub doc: RunDoc,
    /// From `jobs[0].sync.lat_ns.bins` (json+), when the job synced.
    pub sync_hist: Option<Histogram<u64>>,
}

/// Parses fio's JSON output. fio may print notes before the document (e.g. "note: both
/// iodepth >= 1 and synchronous I/O engine are selected"), so parsing starts at the first line
/// that opens an object. `--output-format=normal,json` (or `json+,normal`) writes the JSON
/// between the text report's head and its job reports: the JSON is read, the text left.
pub fn parse(text: &str, source_name: &str) -> Result<Value, FioError> {
    let json_line = text.trim_start().starts_with('{') || text.contains("\n{");
    if !json_line && text.contains(": (groupid=") {
        return Err(FioError::NotJson {
            source_name: source_name.into(),
            why: "it is fio's text report: import it with `disktier import fio-text`".into(),
        });
    }
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))
        .or_else(|| text.find('{'))
        .ok_or_else(|| FioError::NotJson {
            source_name: source_name.into(),
            why: "no JSON object found".into(),
        })?;
    let values = json_values(&text[start..]);
    if values > MAX_JSON_VALUES {
        return Err(FioError::NotJson {
            source_name: source_name.into(),
            why: format!(
                "it holds about {values} JSON values, more than the {MAX_JSON_VALUES} an import reads: each takes 32 bytes or more in memory"
            ),
        });
    }
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let v = match de.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err(FioError::NotJson {
                source_name: source_name.into(),
                why: e.to_string(),
            })
        }
        None => {
            return Err(FioError::NotJson {
                source_name: source_name.into(),
                why: "empty".into(),
            })
        }
    };
    if !v.get("jobs").is_some_and(Value::is_array) {
        return Err(FioError::Missing {
            source_name: source_name.into(),
            what: "the \"jobs\" list".into(),
        });
    }
    Ok(v)
}

/// What the fio JSON does not say about the run.
#[derive(Debug, Clone, Default)]
pub struct DocContext {
    /// The job as disktier ran it; when `None` it is rebuilt from fio's options.
    pub job: Option<Value>,
    /// The target; when `None` it is taken from fio's `filename`/`directory` option.
    pub target: Option<TargetInfo>,
    pub host: HostInfo,
    pub profile: Option<String>,
    pub quick: bool,
}

/// A latency block (`clat_ns`, `lat_ns`) as [`LatStats`]; `None` when it holds no samples.
fn lat_stats(block: &Value) -> Option<(LatStats, u64)> {
    let n = int(block, "N");
    if n == 0 {
        return None;
    }
    let mut percentiles = BTreeMap::new();
    if let Some(Value::Object(map)) = block.get("percentile") {
        for (k, v) in map {
            if let (Ok(p), Some(ns)) = (k.parse::<f64>(), v.as_f64()) {
                percentiles.insert(percentile_key(p), ns.max(0.0).round() as u64);
            }
        }
    }
    let known = |k: &str| block.get(k).is_some_and(|v| v.is_number() || v.is_string());
    let mut lat = LatStats {
        mean: num(block, "mean"),
        stdev: if known("stddev") {
            num(block, "stddev")
        } else {
            f64::NAN
        },
        min: int(block, "min"),
        max: int(block, "max"),
        percentiles,
    };
    // fio's percentiles are its bins' values, which can lie above the max it measured.
    lat.clamp_percentiles();
    Some((lat, n))
}

/// One direction (`read`, `write`), `None` when it did no I/O.
fn dir_stats(dir: &Value) -> Option<DirStats> {
    let ios = int(dir, "total_ios");
    if ios == 0 && int(dir, "io_bytes") == 0 {
        return None;
    }
    // Completion latency; fall back to total latency when only it carries percentiles
    // (fio with clat_percentiles=0, lat_percentiles=1).
    let clat = dir.get("clat_ns").and_then(lat_stats);
    let lat = match clat {
        Some((c, _)) if !c.percentiles.is_empty() => c,
        other => dir
            .get("lat_ns")
            .and_then(lat_stats)
            .filter(|(l, _)| !l.percentiles.is_empty())
            .map(|(l, _)| l)
            .or(other.map(|(c, _)| c))
            .unwrap_or(LatStats::UNKNOWN),
    };
    Some(DirStats {
        ios,
        bytes: int(dir, "io_bytes"),
        iops: num(dir, "iops"),
        bw_bytes: num(dir, "bw_bytes"),
        lat_ns: lat,
        stalls: None,
    })
}

/// fio's options for job `j`: the global ones overlaid with the job's own.
fn options(v: &Value, j: &Value) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    for src in [v.get("global options"), j.get("job options")] {
        if let Some(Value::Object(o)) = src {
            for (k, val) in o {
                m.insert(k.clone(), val.clone());
            }
        }
    }
    m
}

/// The job in disktier's shape, rebuilt from fio's options where it can be (for imports).
pub(super) fn job_from_options(opts: &serde_json::Map<String, Value>, jobname: &str) -> Value {
    let s = |k: &str| opts.get(k).and_then(Value::as_str).map(str::to_string);
    // As fio read them: under its default kb_base=1024 its KiB is 1,000 bytes and its k 1,024;
    // a job's kb_base=1000 turns that round.
    let kb_base = match s("kb_base").as_deref().map(str::trim) {
        Some("1000") => 1000,
        _ => 1024,
    };
    let size = |k: &str| s(k).and_then(|x| disktier_units::parse_fio_size_with(&x, kb_base).ok());
    let mut job = Job {
        name: jobname.to_string(),
        ..Job::default()
    };
    if let Some(t) = s("filename").or_else(|| s("directory")) {
        job.target = PathBuf::from(t);
    }
    if let Some(rw) = s("rw")
        .or_else(|| s("readwrite"))
        .and_then(|r| Rw::from_name(&r))
    {
        job.rw = rw;
    }
    if let Some(bs) = size("bs").or_else(|| size("blocksize")) {
        job.bs = bs;
    }
    job.size = size("size");
    if let Some(o) = size("offset") {
        job.offset = o;
    }
    let n = |k: &str| s(k).and_then(|x| x.parse::<u32>().ok());
    if let Some(x) = n("numjobs") {
        job.numjobs = x;
    }
    if let Some(x) = n("iodepth") {
        job.iodepth = x;
    }
    if let Some(x) = n("rwmixread") {
        job.rwmixread = x;
    }
    if let Some(x) = n("fsync") {
        job.fsync = x;
    }
    if let Some(x) = n("fdatasync") {
        job.fdatasync = x;
    }
    if let Some(x) = n("iodepth_batch_submit").or_else(|| n("iodepth_batch")) {
        job.iodepth_batch_submit = x;
    }
    if let Some(x) = s("randseed").and_then(|x| x.parse().ok()) {
        job.randseed = x;
    }
    if let Some(e) = s("ioengine") {
        match crate::job::IoEngineKind::from_name(&e) {
            Some(k) => job.ioengine = k,
            None => {
                // libaio, posixaio, ...: keep fio's name in the document.
                let mut v = job.to_json();
                v["ioengine"] = Value::String(e);
                return finish_job(v, opts);
            }
        }
    } else {
        // fio's default engine is psync (docs/sources.md [fio-doc]: without an engine fio falls
        // back to psync, where iodepth does nothing).
        job.ioengine = crate::job::IoEngineKind::Psync;
    }
    job.direct = s("direct").is_some_and(|d| d == "1" || d == "true");
    job.time_based = s("time_based").is_some_and(|d| d != "0" && d != "false");
    job.norandommap = s("norandommap").is_some_and(|d| d != "0" && d != "false");
    if let Some(c) = s("cpus_allowed") {
        job.cpus_allowed = c;
    }
    if let Some(r) = s("runtime").and_then(|r| parse_fio_time(&r)) {
        job.runtime = Some(r);
    }
    if let Some(r) = s("ramp_time").and_then(|r| parse_fio_time(&r)) {
        job.ramp_time = r;
    }
    finish_job(job.to_json(), opts)
}

/// Keeps fio's own option list beside the rebuilt job, so nothing an import said is lost.
fn finish_job(mut v: Value, opts: &serde_json::Map<String, Value>) -> Value {
    v["fio_options"] = Value::Object(opts.clone());
    v
}

/// fio's time values: a bare number is seconds; suffixes us, ms, s, m, h.
fn parse_fio_time(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(n) = s.parse::<f64>() {
        // try_: "1e400" or "inf" in fio's options is no time, not a panic (fuzz_fio_json).
        return Duration::try_from_secs_f64(n).ok();
    }
    disktier_units::parse_duration(s).ok()
}

/// Converts job `index` of fio's JSON `v` into a [`RunDoc`] (engine "fio"): `disktier import
/// fio` of one job. When the file holds several, a warning says which this is and how to
/// import the others.
pub fn to_run_doc(
    v: &Value,
    index: usize,
    source_name: &str,
    ctx: DocContext,
) -> Result<RunDoc, FioError> {
    let mut doc = job_doc(v, index, source_name, ctx)?;
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .map_or(&[][..], |a| a);
    if jobs.len() > 1 {
        let group = |j: &Value| j.get("groupid").and_then(Value::as_u64).unwrap_or(0);
        let one_group = jobs.iter().all(|j| group(j) == group(&jobs[0]));
        // Jobs of one reporting group could have been combined by fio; jobs of several groups
        // (stonewall, new_group) never are: --jobs imports them all.
        let how = if one_group {
            "pass --jobs to import them all as one document (or run fio with --group_reporting to combine them)"
        } else {
            "they are in different reporting groups: pass --jobs to import them all as one document with its groups"
        };
        doc.warnings.insert(
            0,
            format!(
                "{source_name} holds {} jobs; this result is job {index} ({}) alone: {how}, or --job N for another",
                jobs.len(),
                jobs[index]
                    .get("jobname")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
        );
    }
    Ok(doc)
}

/// Job `index` of fio's JSON `v` as a [`RunDoc`], on its own.
fn job_doc(
    v: &Value,
    index: usize,
    source_name: &str,
    ctx: DocContext,
) -> Result<RunDoc, FioError> {
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| FioError::Missing {
            source_name: source_name.into(),
            what: "the \"jobs\" list".into(),
        })?;
    if jobs.is_empty() {
        return Err(FioError::NoJobs {
            source_name: source_name.into(),
        });
    }
    let j = jobs.get(index).ok_or(FioError::NoSuchJob {
        source_name: source_name.into(),
        jobs: jobs.len(),
        index,
        last: jobs.len() - 1,
    })?;
    for key in ["read", "write"] {
        if !j.get(key).is_some_and(Value::is_object) {
            return Err(FioError::Missing {
                source_name: source_name.into(),
                what: format!("jobs[{index}].{key}"),
            });
        }
    }
    let mut warnings = Vec::new();
    let err = int(j, "error");
    if err != 0 {
        warnings.push(format!(
            "fio reported error {err} for this job: the figures may be incomplete"
        ));
    }
    for key in ["read", "write"] {
        super::plausible::direction(&j[key], &format!("jobs[{index}].{key}")).map_err(|what| {
            FioError::Implausible {
                source_name: source_name.into(),
                what,
            }
        })?;
    }
    if let Some(s) = j.get("sync") {
        super::plausible::latency(&s["lat_ns"], &format!("jobs[{index}].sync.lat_ns")).map_err(
            |what| FioError::Implausible {
                source_name: source_name.into(),
                what,
            },
        )?;
    }
    let read = dir_stats(&j["read"]);
    let write = dir_stats(&j["write"]);
    warnings.extend(super::trim::warning(int(&j["trim"], "total_ios")));
    let runtime_ms = ["read", "write", "trim"]
        .iter()
        .map(|d| int(&j[*d], "runtime"))
        .max()
        .filter(|&ms| ms > 0)
        .unwrap_or_else(|| int(j, "job_runtime"));
    let duration_s = runtime_ms as f64 / 1000.0;
    let sync = j.get("sync").and_then(|s| {
        let (lat, n) = s.get("lat_ns").and_then(lat_stats)?;
        // fio 3.33 leaves sync.total_ios at 0; lat_ns.N holds the count.
        let ios = int(s, "total_ios").max(n);
        Some(DirStats {
            stalls: s.get("lat_ns").and_then(bin_stalls),
            ..DirStats::syncs(ios, duration_s, lat)
        })
    });
    // usr_cpu/sys_cpu are percentages of job_runtime (summed over the group's jobs).
    let job_runtime_s = int(j, "job_runtime") as f64 / 1000.0;
    let cpu = Cpu {
        usr_s: num(j, "usr_cpu") / 100.0 * job_runtime_s,
        sys_s: num(j, "sys_cpu") / 100.0 * job_runtime_s,
    };
    let opts = options(v, j);
    let jobname = j.get("jobname").and_then(Value::as_str).unwrap_or("fio");
    let job = ctx.job.unwrap_or_else(|| job_from_options(&opts, jobname));
    let target = ctx.target.unwrap_or_else(|| {
        let dir = opts.get("directory").and_then(Value::as_str);
        let file = opts.get("filename").and_then(Value::as_str);
        TargetInfo {
            path: file.or(dir).unwrap_or("").to_string(),
            kind: if file.is_some_and(|f| f.starts_with("/dev/")) {
                "device"
            } else if file.is_some() {
                "file"
            } else {
                "directory"
            }
            .into(),
            // fio's disk_util names the device it saw busy.
            device: v
                .get("disk_util")
                .and_then(Value::as_array)
                .and_then(|d| d.first())
                .and_then(|d| d.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..TargetInfo::default()
        }
    });
    let started_at = started_at(v, runtime_ms);
    Ok(RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "fio".into(),
        profile: ctx.profile,
        quick: ctx.quick,
        job,
        target,
        host: ctx.host,
        started_at,
        duration_s,
        interrupted: false,
        results: Results {
            read,
            write,
            sync,
            cpu,
            small_files: None,
        },
        series: Vec::new(),
        verdicts: Vec::new(),
        warnings,
    })
}

/// fio's `timestamp` is when the report was written (the end of the run): start = end - runtime.
fn started_at(v: &Value, runtime_ms: u64) -> String {
    let end_ms = v
        .get("timestamp_ms")
        .and_then(Value::as_u64)
        .or_else(|| v.get("timestamp").and_then(Value::as_u64).map(|s| s * 1000))
        .unwrap_or(0);
    let start_ms = end_ms.saturating_sub(runtime_ms);
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(start_ms as i128 * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Reads fio's JSON text (a file's or standard input's, named `source_name` in errors) into a
/// [`RunDoc`] and, for json+ output, the sync histogram: `disktier import fio`.
pub fn import_text(
    text: &str,
    source_name: &str,
    index: usize,
    ctx: DocContext,
) -> Result<FioMeasured, FioError> {
    let v = parse(text, source_name)?;
    let doc = to_run_doc(&v, index, source_name, ctx)?;
    if !super::figures::has_figures(&v["jobs"][index]) {
        return Err(super::figures::no_figures(&v, index, source_name));
    }
    Ok(FioMeasured {
        doc,
        sync_hist: sync_histogram(&v, index),
    })
}

/// [`import_text`] on a file.
pub fn import_file(path: &Path, index: usize, ctx: DocContext) -> Result<FioMeasured, FioError> {
    let name = path.display().to_string();
    let text = read_capped(std::fs::File::open(path), &name)?;
    import_text(&text, &name, index, ctx)
}

/// One job of fio's output of a job file, as the native engine's [`crate::Measured`].
#[derive(Debug, Clone)]
pub struct FioJob {
    /// fio's `jobname` (with `group_reporting`, the group's first job).
    pub name: String,
    /// fio's `groupid`.
    pub group: u32,
    pub measured: crate::types::Measured,
}

/// Every job in fio's JSON `v` (the output of a job file), with its group and, for json+
/// output, its latency histograms (read and write completion latency, sync latency).
pub fn jobs(v: &Value, source_name: &str, ctx: &DocContext) -> Result<Vec<FioJob>, FioError> {
    let n = v.get("jobs").and_then(Value::as_array).map_or(0, Vec::len);
    if n == 0 {
        return Err(FioError::NoJobs {
            source_name: source_name.into(),
        });
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let j = &v["jobs"][i];
        let doc = job_doc(v, i, source_name, ctx.clone())?;
        let hist = |dir: &str| {
            j.get(dir)
                .and_then(|d| d.get("clat_ns"))
                .and_then(histogram)
        };
        let read_hist = doc.results.read.as_ref().and(hist("read"));
        let write_hist = doc.results.write.as_ref().and(hist("write"));
        out.push(FioJob {
            name: j
                .get("jobname")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            group: j
                .get("groupid")
                .and_then(Value::as_u64)
                .and_then(|g| u32::try_from(g).ok())
                .unwrap_or(0),
            measured: crate::types::Measured {
                read_hist,
                write_hist,
                sync_hist: sync_histogram(v, i),
                doc,
            },
        });
    }
    Ok(out)
}

/// The largest fio JSON read: 256 MiB (a json+ output with histogram bins for 64 jobs is a few
/// MiB).
pub const MAX_JSON: u64 = 256 << 20;

/// The most JSON values an import parses. The text is capped at [`MAX_JSON`], but a value of
/// two bytes (`0,`) becomes a 32-byte `Value`: QA's 200 MB array of zeros (100 M values) aborted
/// with "memory allocation of 4294967296 bytes failed". fio's json+ output holds a few
/// thousand values a job (its latency bins), so 2^23 leaves room for 1,024 jobs; at the bound
/// the document takes about 256 MiB.
pub const MAX_JSON_VALUES: usize = 1 << 23;

/// About how many values the JSON `text` holds: its commas and opening brackets outside
/// strings, a cheap upper bound taken before anything is allocated per value.
fn json_values(text: &str) -> usize {
    let (mut n, mut in_str, mut esc) = (1usize, false, false);
    for b in text.bytes() {
        match (in_str, esc, b) {
            (true, true, _) => esc = false,
            (true, false, b'\\') => esc = true,
            (true, false, b'"') => in_str = false,
            (true, false, _) => {}
            (false, _, b'"') => in_str = true,
            (false, _, b',' | b'[' | b'{') => n += 1,
            _ => {}
        }
    }
    n
}

/// Reads at most [`MAX_JSON`] bytes of fio JSON from `input` (a file or standard input).
pub fn read_capped(
    input: std::io::Result<impl std::io::Read>,
    name: &str,
) -> Result<String, FioError> {
    use super::textread::{read_text, TextReadError};
    let cant = |e: std::io::Error| FioError::Read {
        source_name: name.to_string(),
        why: e.to_string(),
    };
    match read_text(input.map_err(cant)?, MAX_JSON) {
        Ok(text) => Ok(text),
        Err(TextReadError::Io(e)) => Err(cant(e)),
        // Read, but not text: not fio's JSON.
        Err(TextReadError::NotText(why)) => Err(FioError::NotJson {
            source_name: name.to_string(),
            why,
        }),
        Err(TextReadError::TooLarge) => Err(FioError::NotJson {
            source_name: name.to_string(),
            why: format!("larger than {} MiB", MAX_JSON >> 20),
        }),
    }
}
