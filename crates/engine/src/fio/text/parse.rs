//! Line by line reading of fio's text report into a [`TextReport`]. Lines are trimmed (copies
//! in web pages lose fio's indentation), lines it does not know are skipped, and every number is
//! checked finite and not negative before it is kept.

use super::error::FioTextError;
use super::model::{
    TextDir, TextGroup, TextGroupDir, TextHeader, TextJob, TextLat, TextReport, TextSync,
};
use crate::result::percentile_key;
use std::collections::BTreeMap;

/// Largest report read: 16 MiB (a job's report is 2 to 3 KiB).
pub const MAX_TEXT: usize = 16 << 20;
/// Longest line considered; longer ones are skipped and counted.
pub const MAX_LINE: usize = 4096;
/// Most job reports read (a 16 MiB report of 2 KiB jobs would hold 8,000).
pub const MAX_JOBS: usize = 4096;

/// Where `|  1.00th=[  123], ...` lines go.
#[derive(Clone, Copy, PartialEq)]
enum Pct {
    Clat,
    Lat,
    Sync,
}

/// Which part of the current job the lines belong to.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Read,
    Write,
    Trim,
    Sync,
}

struct State {
    section: Option<Section>,
    pct: Option<(Pct, u64)>,
    disk_stats: bool,
    /// Within a `Run status group` section (its `READ:`/`WRITE:`/`TRIM:` lines).
    group: bool,
}

/// Parses fio's text report; `source_name` names it in errors.
pub fn parse(text: &str, source_name: &str) -> Result<TextReport, FioTextError> {
    if text.len() > MAX_TEXT {
        return Err(FioTextError::TooLarge {
            source_name: source_name.into(),
            max_mib: MAX_TEXT >> 20,
        });
    }
    let bad = |what: String| FioTextError::Implausible {
        source_name: source_name.into(),
        what,
    };
    let mut r = TextReport::default();
    let mut headers: BTreeMap<String, TextHeader> = BTreeMap::new();
    let mut st = State {
        section: None,
        pct: None,
        disk_stats: false,
        group: false,
    };
    for raw in text.lines() {
        if raw.len() > MAX_LINE {
            r.long_lines += 1;
            continue;
        }
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix('|') {
            if let (Some((which, unit)), Some(job)) = (st.pct, r.jobs.last_mut()) {
                let map = match (which, st.section) {
                    (Pct::Sync, _) => {
                        &mut job.sync.get_or_insert_with(TextSync::default).percentiles
                    }
                    (p, Some(Section::Read)) => pct_map(dir_of(&mut job.read), p),
                    (p, Some(Section::Write)) => pct_map(dir_of(&mut job.write), p),
                    (p, Some(Section::Trim)) => pct_map(dir_of(&mut job.trim), p),
                    _ => continue,
                };
                percentiles(rest, unit, map).map_err(|w| bad(format!("job {}: {w}", job.name)))?;
            }
            continue;
        }
        st.pct = None;
        if st.disk_stats {
            st.disk_stats = false;
            if let Some((dev, _)) = line.split_once(": ios=") {
                r.device.get_or_insert_with(|| dev.trim().to_string());
            }
            continue;
        }
        if line.starts_with("Disk stats") {
            st.disk_stats = true;
            continue;
        }
        if let Some(v) = line.strip_prefix("fio-").filter(|v| !v.contains(' ')) {
            r.version.get_or_insert_with(|| format!("fio-{v}"));
            continue;
        }
        if let Some((name, rest)) = line.split_once(": (g=") {
            headers
                .entry(name.to_string())
                .or_insert_with(|| header(rest));
            continue;
        }
        if let Some(i) = line.find(": (groupid=") {
            if r.jobs.len() >= MAX_JOBS {
                return Err(FioTextError::TooManyJobs {
                    source_name: source_name.into(),
                    max: MAX_JOBS,
                });
            }
            let name = line[..i].to_string();
            r.jobs.push(job_line(&name, &line[i + 2..]));
            st.section = None;
            st.group = false;
            continue;
        }
        if let Some(rest) = line.strip_prefix("Run status group ") {
            st.section = None;
            let id = rest.split_whitespace().next().and_then(|g| g.parse().ok());
            st.group = id.is_some() && r.groups.len() < MAX_JOBS;
            if let Some(id) = id.filter(|_| st.group) {
                r.groups.push(TextGroup {
                    id,
                    ..TextGroup::default()
                });
            }
            continue;
        }
        if st.group {
            if let Some(g) = r.groups.last_mut() {
                let id = g.id;
                let in_group = |d: String| bad(format!("run status group {id}: {d}"));
                for (prefix, slot) in [
                    ("READ:", &mut g.read),
                    ("WRITE:", &mut g.write),
                    ("TRIM:", &mut g.trim),
                ] {
                    // fio 3's form; fio 2's (`io=, aggrb=, ..., mint=, maxt=`) is not read.
                    if let Some(rest) = line.strip_prefix(prefix).filter(|r| r.contains("run=")) {
                        *slot = Some(group_dir(rest).map_err(in_group)?);
                        break;
                    }
                }
            }
            continue;
        }
        let Some(job) = r.jobs.last_mut() else {
            continue;
        };
        let jname = job.name.clone();
        let ctx = |w: String| bad(format!("job {jname}: {w}"));
        let mut was_dir = false;
        for (prefix, sec) in [
            ("read:", Section::Read),
            ("write:", Section::Write),
            ("trim:", Section::Trim),
        ] {
            if let Some(rest) = line.strip_prefix(prefix).filter(|r| r.contains("IOPS=")) {
                st.section = Some(sec);
                let d = direction(rest).map_err(&ctx)?;
                match sec {
                    Section::Read => job.read = Some(d),
                    Section::Write => job.write = Some(d),
                    Section::Trim => job.trim = Some(d),
                    Section::Sync => {}
                }
                was_dir = true;
            }
        }
        if was_dir {
            continue;
        }
        if line.starts_with("fsync/fdatasync/sync_file_range") {
            st.section = Some(Section::Sync);
            continue;
        }
        if let Some((kind, rest)) = line.split_once(" percentiles (") {
            let unit = rest.split_once(')').and_then(|(u, _)| unit_ns(u));
            st.pct = match (kind, unit) {
                ("clat", Some(u)) => Some((Pct::Clat, u)),
                ("lat", Some(u)) => Some((Pct::Lat, u)),
                ("sync", Some(u)) => Some((Pct::Sync, u)),
                _ => None,
            };
            continue;
        }
        if let Some((kind, unit, rest)) = lat_line(line) {
            let l = lat_stats(rest, unit).map_err(&ctx)?;
            match (kind, st.section) {
                ("sync", Some(Section::Sync)) => {
                    job.sync.get_or_insert_with(TextSync::default).lat = Some(l)
                }
                ("clat", Some(Section::Read)) => dir_of(&mut job.read).clat = Some(l),
                ("clat", Some(Section::Write)) => dir_of(&mut job.write).clat = Some(l),
                ("lat", Some(Section::Read)) => dir_of(&mut job.read).lat = Some(l),
                ("lat", Some(Section::Write)) => dir_of(&mut job.write).lat = Some(l),
                ("clat", Some(Section::Trim)) => dir_of(&mut job.trim).clat = Some(l),
                ("lat", Some(Section::Trim)) => dir_of(&mut job.trim).lat = Some(l),
                _ => {}
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("cpu") {
            if let Some(rest) = rest.trim_start().strip_prefix(':') {
                job.usr_pct = field(rest, "usr=").and_then(|v| number(v.trim_end_matches('%')));
                job.sys_pct = field(rest, "sys=").and_then(|v| number(v.trim_end_matches('%')));
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("issued rwts:") {
            let total = rest.split_once("total=").map(|(_, t)| t);
            if let Some(t) = total.and_then(|t| t.split_whitespace().next()) {
                let mut n = t.split(',').map(|x| x.trim().parse::<u64>().ok());
                if let (Some(Some(rd)), Some(Some(wr))) = (n.next(), n.next()) {
                    job.issued = Some((rd, wr));
                    job.issued_trims = n.next().flatten();
                }
            }
        }
    }
    for job in &mut r.jobs {
        job.header = headers.get(&job.name).cloned();
        let dirs = [&job.read, &job.write, &job.trim].into_iter().flatten();
        let maps = dirs
            .flat_map(|d| [&d.clat_percentiles, &d.lat_percentiles])
            .chain(job.sync.as_ref().map(|s| &s.percentiles));
        for m in maps {
            rising(m).map_err(|w| bad(format!("job {}: {w}", job.name)))?;
        }
    }
    if r.jobs.is_empty() {
        return Err(FioTextError::NoJobs {
            source_name: source_name.into(),
        });
    }
    Ok(r)
}

fn dir_of(d: &mut Option<TextDir>) -> &mut TextDir {
    d.get_or_insert_with(TextDir::default)
}

fn pct_map(d: &mut TextDir, p: Pct) -> &mut BTreeMap<String, u64> {
    match p {
        Pct::Lat => &mut d.lat_percentiles,
        _ => &mut d.clat_percentiles,
    }
}

/// `nsec`, `usec`, `msec`, `sec` in nanoseconds.
fn unit_ns(u: &str) -> Option<u64> {
    match u.trim() {
        "nsec" => Some(1),
        "usec" => Some(1_000),
        "msec" => Some(1_000_000),
        "sec" => Some(1_000_000_000),
        _ => None,
    }
}

/// `clat (usec): min=...` -> ("clat", 1000, "min=..."); `lat (usec)   : 2=0.10%` (the
/// distribution) is not one.
fn lat_line(line: &str) -> Option<(&str, u64, &str)> {
    let (kind, rest) = line.split_once(" (")?;
    if !matches!(kind, "clat" | "lat" | "slat" | "sync") {
        return None;
    }
    let (u, rest) = rest.split_once("):")?;
    let rest = rest.trim_start();
    rest.starts_with("min=")
        .then_some(())
        .and(unit_ns(u))
        .map(|u| (kind, u, rest))
}

/// A number as fio prints it, with its `k`, `M`, `G` (powers of 1,000) suffix; finite and not
/// negative, or `None`.
pub(crate) fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    let (digits, mul) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1e3),
        b'M' => (&s[..s.len() - 1], 1e6),
        b'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    // Only digits and one point: "inf", "NaN", "1e400" and signs are not fio's.
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || digits.bytes().filter(|&b| b == b'.').count() > 1
    {
        return None;
    }
    // fio prints 64-bit counts: anything larger (or "1" and 400 zeros, which parses as
    // infinity) is not its output, and would overflow once scaled to ns or bytes.
    let v = digits.parse::<f64>().ok()? * mul;
    (v < u64::MAX as f64).then_some(v)
}

/// The value after `key` up to the next `,` or `)` (or the end).
fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let i = s.find(key)? + key.len();
    let rest = &s[i..];
    let end = rest.find([',', ')', ';']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// `min=2, max=434, avg=18.88, stdev=12.67` in `unit` nanoseconds.
fn lat_stats(s: &str, unit: u64) -> Result<TextLat, String> {
    let get = |k: &str| {
        field(s, k)
            .and_then(number)
            .map(|v| v * unit as f64)
            .ok_or_else(|| format!("\"{k}\" in \"{s}\" is not a number"))
    };
    let l = TextLat {
        min: get("min=")?,
        max: get("max=")?,
        mean: get("avg=")?,
        stdev: get("stdev=")?,
    };
    if l.min > l.max {
        return Err(format!("min {} above max {} in \"{s}\"", l.min, l.max));
    }
    Ok(l)
}

/// `1.00th=[  123],  5.00th=[  456],` into `map`, in `unit` nanoseconds.
fn percentiles(s: &str, unit: u64, map: &mut BTreeMap<String, u64>) -> Result<(), String> {
    for item in s.split("],") {
        let item = item.trim().trim_end_matches(']').trim();
        if item.is_empty() {
            continue;
        }
        let Some((p, v)) = item.split_once("th=[") else {
            return Err(format!("percentile \"{item}\" is not \"P.PPth=[N]\""));
        };
        let (Some(p), Some(v)) = (number(p), number(v)) else {
            return Err(format!("percentile \"{item}\" is not a number"));
        };
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!("percentile {p} is outside 0 to 100"));
        }
        // As u64: at most 2^64 ns; `as` saturates, never panics.
        let ns = (v * unit as f64).round() as u64;
        map.insert(percentile_key(p), ns);
    }
    Ok(())
}

/// Percentiles must not fall as the rank rises; checked once a report is read (per line it
/// would sort the block again for each of up to a million lines).
fn rising(map: &BTreeMap<String, u64>) -> Result<(), String> {
    let mut by_rank: Vec<(f64, u64)> = map
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, *v)))
        .collect();
    by_rank.sort_by(|a, b| a.0.total_cmp(&b.0));
    if by_rank.windows(2).any(|w| w[1].1 < w[0].1) {
        return Err("its percentiles fall as the rank rises".into());
    }
    Ok(())
}

/// `IOPS=45.2k, BW=177MiB/s (185MB/s)(5312MiB/30001msec); 0 zone resets`.
fn direction(s: &str) -> Result<TextDir, String> {
    let iops = field(s, "IOPS=")
        .and_then(number)
        .ok_or_else(|| format!("IOPS in \"{s}\" is not a number"))?;
    let bw_bytes = field(s, "BW=")
        .and_then(|b| bytes(b.split(' ').next()?.trim_end_matches("/s")))
        .ok_or_else(|| format!("BW in \"{s}\" is not a rate"))?;
    // The last parenthesis: "(29.0MiB/15937msec)".
    let (io_bytes, runtime_ms) = s
        .rfind(")(")
        .map(|i| &s[i + 2..])
        .and_then(|t| t.split_once(')'))
        .and_then(|(t, _)| t.split_once('/'))
        .and_then(|(b, t)| Some((bytes(b)?, t.strip_suffix("msec")?.parse::<u64>().ok()?)))
        .ok_or_else(|| format!("\"{s}\" lacks fio's \"(SIZE/Nmsec)\""))?;
    Ok(TextDir {
        iops,
        bw_bytes,
        io_bytes,
        runtime_ms,
        ..TextDir::default()
    })
}

/// A `Run status group` line after `READ:`: `bw=95.7MiB/s (100MB/s), 47.8MiB/s-47.9MiB/s
/// (50.1MB/s-50.3MB/s), io=192MiB (201MB), run=2003-2006msec`.
fn group_dir(s: &str) -> Result<TextGroupDir, String> {
    let first = |k: &str| field(s, k).and_then(|v| v.split(' ').next());
    let bw_bytes = first("bw=")
        .and_then(|b| bytes(b.trim_end_matches("/s")))
        .ok_or_else(|| format!("bw in \"{s}\" is not a rate"))?;
    let io_bytes = first("io=")
        .and_then(bytes)
        .ok_or_else(|| format!("io in \"{s}\" is not a size"))?;
    let run_ms = first("run=")
        .and_then(|r| r.strip_suffix("msec")?.split_once('-'))
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
        .filter(|(a, b)| a <= b)
        .ok_or_else(|| format!("run in \"{s}\" is not \"MIN-MAXmsec\""))?;
    Ok(TextGroupDir {
        io_bytes,
        bw_bytes,
        run_ms,
    })
}

/// `1928KiB`, `29.0MiB`, `1974kB`, `2300B` in bytes.
fn bytes(s: &str) -> Option<f64> {
    let s = s.trim();
    let i = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, u) = s.split_at(i);
    let mul = match u {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024f64.powi(2),
        "GiB" => 1024f64.powi(3),
        "TiB" => 1024f64.powi(4),
        "PiB" => 1024f64.powi(5),
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "PB" => 1e15,
        _ => return None,
    };
    Some(number(n)? * mul)
}

/// The options line after `NAME: (g=`.
fn header(s: &str) -> TextHeader {
    let one_size = |tag: &str| {
        let (lo, hi) = field(s, tag)?.split_once('-')?;
        let (lo, hi) = (bytes(lo)?, bytes(hi)?);
        (lo == hi && lo >= 1.0).then_some(lo as u64)
    };
    TextHeader {
        rw: field(s, "rw=").map(str::to_string),
        bs_read: one_size("(R)"),
        bs_write: one_size("(W)"),
        ioengine: field(s, "ioengine=").map(str::to_string),
        iodepth: field(s, "iodepth=").and_then(|d| d.parse().ok()),
    }
}

/// `(groupid=0, jobs=1): err= 0: pid=408906: Wed Jul 15 02:14:39 2020` after the name.
fn job_line(name: &str, s: &str) -> TextJob {
    let ended = s
        .find(" pid=")
        .and_then(|i| s[i..].split_once(": "))
        .map(|(_, d)| d.trim().to_string())
        .filter(|d| !d.is_empty());
    TextJob {
        name: name.to_string(),
        groupid: field(s, "groupid=")
            .and_then(|g| g.parse().ok())
            .unwrap_or(0),
        jobs: field(s, "jobs=").and_then(|g| g.parse().ok()).unwrap_or(1),
        // `err= 0:`, or `err=25 (file:ioengines.c:399, ...)`: its leading digits.
        error: field(s, "err=")
            .and_then(|e| {
                let e = e.trim_start();
                let end = e.find(|c: char| !c.is_ascii_digit()).unwrap_or(e.len());
                e[..end].parse().ok()
            })
            .unwrap_or(0),
        ended,
        ..TextJob::default()
    }
}
