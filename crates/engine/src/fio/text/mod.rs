//! fio's default text report (`--output-format=normal`, what fio prints without options and
//! what recipes and issues quote) read into the same [`RunDoc`] as `import fio` makes of fio's
//! JSON: `disktier import fio-text`.
//!
//! Mapping: `read:`/`write:` `IOPS=`, `BW=`, `(SIZE/Nmsec)` and `issued rwts: total=R,W` ->
//! `results.{read,write}` (counts exact from `issued rwts`, so IOPS and bandwidth are recomputed
//! as fio's JSON computes them, count x 1000 / ms, when they agree with the printed, rounded
//! figures); `clat (unit): min, max, avg, stdev` and `clat percentiles (unit)` -> `lat_ns`
//! (fio's `lat` when only it has percentiles, as for JSON); the `fsync/fdatasync/sync_file_range:`
//! block's `sync (unit)` and `sync percentiles` -> `results.sync`; `cpu : usr=, sys=` (percent
//! of the run time, summed over the `jobs=N` a report combines) -> seconds; the job's options
//! line (`rw=`, `bs=`, `ioengine=`, `iodepth=`) -> the job. `trim:` (rw=trim, randtrim) is read
//! but, as `import fio` does with the JSON's `trim`, only its run time is used and a warning
//! counts the trims (`issued rwts`' third count): the result has no trim direction.
//! [`jobs`] reads every job report with its `groupid` for `import fio-text --jobs`, and checks
//! fio's `Run status group` totals against them.
//!
//! What the text does not carry is left unknown and said in the warnings: the sync count (fio
//! prints none), histogram bins, the exact latencies (fio rounds them to its unit), the file,
//! size and other options, and the time zone of the job's end date.

mod error;
mod jobs;
mod model;
mod parse;
#[cfg(test)]
mod tests;

pub use error::FioTextError;
pub use jobs::{jobs, TextJobs};
pub use model::*;
pub use parse::{parse, MAX_JOBS, MAX_LINE, MAX_TEXT};

use super::FioMeasured;
use crate::result::{
    Cpu, DirStats, HostInfo, LatStats, Results, RunDoc, TargetInfo, SCHEMA_VERSION,
};
use serde_json::Value;
use std::path::Path;

/// What the text report does not say and the user may: the profile, the target, the host.
#[derive(Debug, Clone, Default)]
pub struct TextContext {
    pub profile: Option<String>,
    /// The file, directory or device fio measured, or a name for the disk.
    pub target: Option<String>,
    pub host: Option<String>,
}

/// Reads fio's text report (named `source_name` in errors) and builds job `index`'s result.
pub fn import_text(
    text: &str,
    source_name: &str,
    index: usize,
    ctx: TextContext,
) -> Result<FioMeasured, FioTextError> {
    let r = parse(text, source_name)?;
    let doc = to_run_doc(&r, index, source_name, ctx)?;
    Ok(FioMeasured {
        doc,
        sync_hist: None,
    })
}

/// The text of the file at `path`, read capped ([`read_capped`]), and the name errors and the
/// result give it.
pub fn read_file(path: &Path) -> Result<(String, String), FioTextError> {
    let name = path.display().to_string();
    let text = read_capped(std::fs::File::open(path), &name)?;
    Ok((text, name))
}

/// Reads at most [`MAX_TEXT`] bytes of text from `input` (a file or standard input).
pub fn read_capped(
    input: std::io::Result<impl std::io::Read>,
    name: &str,
) -> Result<String, FioTextError> {
    use crate::fio::textread::{read_text, TextReadError};
    let cant = |e: std::io::Error| FioTextError::Read {
        source_name: name.to_string(),
        why: e.to_string(),
    };
    read_text(input.map_err(cant)?, MAX_TEXT as u64).map_err(|e| match e {
        TextReadError::Io(e) => cant(e),
        TextReadError::TooLarge => FioTextError::TooLarge {
            source_name: name.to_string(),
            max_mib: MAX_TEXT >> 20,
        },
        TextReadError::NotText(why) => FioTextError::NotText {
            source_name: name.to_string(),
            why,
        },
    })
}

/// Job `index` of the report as a [`RunDoc`] (engine "fio").
pub fn to_run_doc(
    r: &TextReport,
    index: usize,
    source_name: &str,
    ctx: TextContext,
) -> Result<RunDoc, FioTextError> {
    let n = r.jobs.len();
    let j = r.jobs.get(index).ok_or(FioTextError::NoSuchJob {
        source_name: source_name.into(),
        jobs: n,
        index,
        last: n.saturating_sub(1),
    })?;
    if !has_figures(j) {
        return Err(FioTextError::NoFigures {
            source_name: source_name.into(),
            index,
            name: j.name.clone(),
            error: j.error,
        });
    }
    let mut warnings = Vec::new();
    if n > 1 {
        // Jobs of one reporting group fio could have combined; of several (stonewall,
        // new_group) it never does.
        let how = if r.jobs.iter().all(|x| x.groupid == j.groupid) {
            "pass --jobs to import them all as one document, --job N for another, or run fio with --group_reporting to combine them"
        } else {
            "they are in different reporting groups: pass --jobs to import them all as one document with its groups, or --job N for another"
        };
        warnings.push(format!(
            "{source_name} holds {n} job reports; this result is job {index} ({}) alone: {how}",
            j.name
        ));
    }
    let (mut doc, said) = job_doc(j, r, ctx);
    warnings.append(&mut doc.warnings);
    warnings.extend(notes(r, said));
    doc.warnings = warnings;
    Ok(doc)
}

/// Whether a job's report holds figures of any direction (`trim:` included, as fio's JSON
/// always holds its `trim` object).
pub(crate) fn has_figures(j: &TextJob) -> bool {
    j.read.is_some() || j.write.is_some() || j.trim.is_some()
}

/// What a job's import leaves to the notes said once for the whole report.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Said {
    /// The job synced: its sync count is unknown.
    sync: bool,
    /// Its start time was taken from fio's end date, read as UTC.
    start: bool,
}

impl Said {
    pub(crate) fn or(self, o: Said) -> Said {
        Said {
            sync: self.sync || o.sync,
            start: self.start || o.start,
        }
    }
}

/// How the first warning of an import of fio's text report begins: `compare` reads from it that
/// the job's options other than those the report prints (`rw`, `bs`, `ioengine`, `iodepth`,
/// `jobs=N`) are fio's defaults, not what the job set.
pub const IMPORTED_NOTE: &str = "imported from fio's text output";

/// What the text import cannot know, said once for the report (`said` gathered over its jobs).
pub(crate) fn notes(r: &TextReport, said: Said) -> Vec<String> {
    let mut unknown = vec!["host facts", "the file and its size"];
    if said.sync {
        unknown.push("the sync count (fio's text prints none)");
    }
    let mut w = vec![format!(
        "{IMPORTED_NOTE}: {} are unknown; latencies are as fio rounded them to its unit (percentiles rounded up), and without histogram bins sync latencies between its listed percentiles are interpolated",
        unknown.join(", ")
    )];
    if r.long_lines > 0 {
        w.push(format!(
            "{} line(s) longer than {MAX_LINE} bytes were skipped",
            r.long_lines
        ));
    }
    if said.start {
        w.push(
            "the start time is fio's end date less the run time, read as UTC: fio prints the host's local time without its zone".into(),
        );
    }
    w
}

/// One job's report as a [`RunDoc`] with the warnings of this job alone; what is said once for
/// the report ([`notes`]) is returned apart.
pub(crate) fn job_doc(j: &TextJob, r: &TextReport, ctx: TextContext) -> (RunDoc, Said) {
    let mut warnings = Vec::new();
    if j.error != 0 {
        warnings.push(format!(
            "fio reported error {} for this job: the figures may be incomplete",
            j.error
        ));
    }
    let header = j.header.clone().unwrap_or_default();
    let (issued_r, issued_w) = j.issued.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let read = j
        .read
        .as_ref()
        .map(|d| dir_stats(d, issued_r, header.bs_read, "read", &mut warnings));
    let write = j
        .write
        .as_ref()
        .map(|d| dir_stats(d, issued_w, header.bs_write, "write", &mut warnings));
    // As the JSON import: the trims are counted in a warning, not in the figures.
    let trims = j.issued_trims.filter(|&n| n > 0).or_else(|| {
        let t = j.trim.as_ref()?;
        Some((t.iops * t.runtime_ms as f64 / 1000.0).round() as u64)
    });
    warnings.extend(super::trim::warning(trims.unwrap_or(0)));
    // fio's JSON takes the longest of its read, write and trim run times.
    let runtime_ms = [&j.read, &j.write, &j.trim]
        .iter()
        .filter_map(|d| d.as_ref().map(|d| d.runtime_ms))
        .max()
        .unwrap_or(0);
    let duration_s = runtime_ms as f64 / 1000.0;
    let sync = j.sync.as_ref().and_then(|s| {
        let lat = lat_stats(s.lat, &s.percentiles)?;
        Some(DirStats::syncs(0, duration_s, lat))
    });
    // Percentages of the run time summed over the jobs the report combines (`jobs=N`), as
    // fio's JSON has them of its summed `job_runtime`.
    let job_s = duration_s * f64::from(j.jobs.max(1));
    let pct = |p: Option<f64>| p.map_or(0.0, |p| p / 100.0 * job_s);
    let cpu = Cpu {
        usr_s: pct(j.usr_pct),
        sys_s: pct(j.sys_pct),
    };
    let job = job_value(j, &header);
    let path = ctx.target.unwrap_or_default();
    let target = TargetInfo {
        kind: if path.starts_with("/dev/") {
            "device"
        } else {
            "directory"
        }
        .into(),
        path,
        // fio's disk stats name the device it saw busy.
        device: r.device.clone(),
        ..TargetInfo::default()
    };
    let back = time::Duration::milliseconds(i64::try_from(runtime_ms).unwrap_or(i64::MAX));
    let start = j
        .ended
        .as_deref()
        .and_then(end_time)
        .and_then(|e| e.checked_sub(back));
    let said = Said {
        sync: sync.is_some(),
        start: start.is_some(),
    };
    let doc = RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "fio".into(),
        profile: ctx.profile,
        quick: false,
        job,
        target,
        host: HostInfo {
            hostname: ctx.host.unwrap_or_default(),
            ..HostInfo::default()
        },
        started_at: start.map(rfc3339).unwrap_or_default(),
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
    };
    (doc, said)
}

/// The job rebuilt from its options line, as `import fio` rebuilds it from fio's JSON options.
fn job_value(j: &TextJob, h: &TextHeader) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("name".into(), j.name.clone().into());
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            o.insert(k.into(), Value::String(v));
        }
    };
    put("rw", h.rw.clone());
    let writes = h.rw.as_deref().is_some_and(|rw| rw.contains("write"));
    let bs = if writes { h.bs_write } else { h.bs_read };
    put("bs", bs.or(h.bs_read).map(|b| b.to_string()));
    put("ioengine", h.ioengine.clone());
    put("iodepth", h.iodepth.map(|d| d.to_string()));
    put("numjobs", (j.jobs > 1).then(|| j.jobs.to_string()));
    super::import::job_from_options(&o, &j.name)
}

/// One direction as [`DirStats`]: the count from `issued rwts` and the rates recomputed from it
/// as fio's JSON has them, when they agree with the printed figures; else the printed ones.
fn dir_stats(
    d: &TextDir,
    issued: Option<u64>,
    bs: Option<u64>,
    name: &str,
    warnings: &mut Vec<String>,
) -> DirStats {
    let ms = d.runtime_ms as f64;
    // Printed to 3 significant digits: 0.5 % apart at most, or 0.5 below 1,000.
    let agree = |a: f64, b: f64| (a - b).abs() <= (0.006 * b).max(1.0);
    let counted = issued.filter(|&n| ms > 0.0 && agree(n as f64 * 1000.0 / ms, d.iops));
    let ios = counted.unwrap_or_else(|| {
        warnings.push(format!(
            "the {name} count is estimated from fio's rounded IOPS and run time"
        ));
        (d.iops * ms / 1000.0).round() as u64
    });
    // The count times a fixed block size, when it agrees with the printed bytes or with the
    // printed bandwidth over the run time (fio 3.19 printed 30.0 MiB as "29.0MiB"; with
    // ramp_time the bytes can hold the I/Os in flight at its end, which the count does not).
    let bw_total = d.bw_bytes * ms / 1000.0;
    let exact_bytes = bs
        .filter(|_| counted.is_some())
        .map(|bs| ios.saturating_mul(bs))
        .filter(|&b| agree(b as f64, d.io_bytes) || agree(b as f64, bw_total));
    if bs.is_some() && counted.is_some() && exact_bytes.is_none() {
        warnings.push(format!(
            "fio's {name} bytes ({:.0}) are not its count ({ios}) times the block size: its printed bytes and bandwidth are kept, rounded as printed",
            d.io_bytes
        ));
    }
    let bytes = exact_bytes.unwrap_or(d.io_bytes.round() as u64);
    let (iops, bw_bytes) = if counted.is_some() && exact_bytes.is_some() {
        // fio's JSON has bytes x 1000 / ms in whole bytes a second.
        let bw = u128::from(bytes) * 1000 / u128::from(d.runtime_ms.max(1));
        (ios as f64 * 1000.0 / ms, bw as f64)
    } else if counted.is_some() {
        (ios as f64 * 1000.0 / ms, d.bw_bytes)
    } else {
        (d.iops, d.bw_bytes)
    };
    let lat = lat_stats(d.clat, &d.clat_percentiles)
        .filter(|l| !l.percentiles.is_empty())
        .or_else(|| lat_stats(d.lat, &d.lat_percentiles).filter(|l| !l.percentiles.is_empty()))
        .or_else(|| lat_stats(d.clat, &d.clat_percentiles))
        .unwrap_or(LatStats::UNKNOWN);
    DirStats {
        ios,
        bytes,
        iops,
        bw_bytes,
        lat_ns: lat,
        stalls: None,
    }
}

/// A latency line and its percentiles as [`LatStats`], clamped to the min and max as the JSON
/// import's are; percentiles alone when fio printed no line.
fn lat_stats(
    l: Option<TextLat>,
    percentiles: &std::collections::BTreeMap<String, u64>,
) -> Option<LatStats> {
    if l.is_none() && percentiles.is_empty() {
        return None;
    }
    let mut s = match l {
        Some(l) => LatStats {
            mean: l.mean,
            stdev: l.stdev,
            min: l.min.round() as u64,
            max: l.max.round() as u64,
            percentiles: percentiles.clone(),
        },
        None => LatStats {
            percentiles: percentiles.clone(),
            ..LatStats::UNKNOWN
        },
    };
    s.clamp_percentiles();
    Some(s)
}

/// `Wed Jul 15 02:14:39 2020` as a UTC time.
fn end_time(s: &str) -> Option<time::OffsetDateTime> {
    let f: Vec<&str> = s.split_whitespace().collect();
    let [_, mon, day, hms, year] = f.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x == mon)? as u8 + 1;
    let month = time::Month::try_from(m).ok()?;
    let mut t = hms.split(':').map(|x| x.parse::<u8>().ok());
    let (Some(Some(h)), Some(Some(mi)), Some(Some(sec)), None) =
        (t.next(), t.next(), t.next(), t.next())
    else {
        return None;
    };
    let date = time::Date::from_calendar_date(year.parse().ok()?, month, day.parse().ok()?).ok()?;
    let time = time::Time::from_hms(h, mi, sec).ok()?;
    Some(time::PrimitiveDateTime::new(date, time).assume_utc())
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
