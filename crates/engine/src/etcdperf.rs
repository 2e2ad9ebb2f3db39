//! The OpenShift etcd-perf image's text output (`podman run ... quay.io/openshift-scale/etcd-perf`),
//! read into a [`RunDoc`] so its old results sit in the store next to disktier's own `check etcd`
//! runs. The image runs fio (until 2022 with `--size=22m --bs=2300`, since then with
//! `--size=100m --bs=8000 --runtime=60 --time_based`), may print fio's text report, and ends with
//!
//! ```text
//! 99th percentile of fsync is 4046848 ns
//! 99th percentile of the fsync is within the recommended threshold - 10 ms, the disk can be used to host etcd
//! ```
//!
//! or a `WARN: ... is greater than the recommended value ... faster disks are recommended ...` line.
//! The verdict is recomputed with disktier's own threshold
//! ([`crate::verdict::ETCD_SYNC_P99_THRESHOLD_NS`]); the image's sentence is kept, and a
//! disagreement between the two is reported.

use crate::result::{DirStats, HostInfo, LatStats, Results, RunDoc, TargetInfo, Verdict};
use crate::verdict::ETCD_SYNC_P99_THRESHOLD_NS;
use crate::SCHEMA_VERSION;
use std::collections::BTreeMap;
use std::path::Path;

/// Largest file read (fio's text report plus the image's lines is a few KiB).
pub const MAX_BYTES: usize = 4 << 20;
/// Longest line considered; longer lines are skipped (and counted in a warning).
pub const MAX_LINE: usize = 4096;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EtcdPerfError {
    #[error("cannot read {source_name}: {why}")]
    Read { source_name: String, why: String },
    /// `size` is the file's ("10737418240 bytes"), or "more than N bytes" for a stream (QA: a
    /// 10 GiB file and /dev/zero were each said to be "4194305 bytes", what was read of them).
    #[error("{source_name} is {size}, and an etcd-perf output is at most {max} bytes: pass the file the image printed (`podman run ... > FILE`)")]
    TooLarge {
        source_name: String,
        size: String,
        max: usize,
    },
    #[error("{source_name} has no line \"99th percentile of fsync is N ns\": it is not the etcd-perf image's output (for fio's JSON use `disktier import fio`, for its text report `disktier import fio-text`)")]
    NoP99 { source_name: String },
    #[error("{source_name} holds {count} etcd-perf results (lines \"99th percentile of fsync is N ns\"): split it into one file per run")]
    Several { source_name: String, count: usize },
}

/// Which version of the image produced the output, told from fio's block size when fio's
/// report is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageJob {
    /// `--size=22m --bs=2300` (the image until 2022, etcd's documented job).
    Classic,
    /// `--size=100m --bs=8000 --runtime=60 --time_based`.
    Current,
}

impl ImageJob {
    fn bs(self) -> u64 {
        match self {
            ImageJob::Classic => 2300,
            ImageJob::Current => 8000,
        }
    }
    fn size(self) -> u64 {
        match self {
            ImageJob::Classic => 22 << 20,
            ImageJob::Current => 100 << 20,
        }
    }
}

/// What the output says.
#[derive(Debug, Clone, PartialEq)]
pub struct EtcdPerf {
    /// "99th percentile of fsync is N ns".
    pub p99_ns: u64,
    /// The image's own verdict: `Some(true)` for "within the recommended threshold", `Some(false)`
    /// for the WARN line, `None` when the output has neither.
    pub image_pass: Option<bool>,
    /// The image's verdict sentence as printed.
    pub image_line: Option<String>,
    /// fio's block size, from its report (`bs=(R) 2300B-2300B, (W) 2300B-2300B`).
    pub bs: Option<u64>,
    /// Writes fio issued (`issued rwts: total=0,N,...`).
    pub writes: Option<u64>,
    /// fio's run time in ms (`run=N-Nmsec`).
    pub runtime_ms: Option<u64>,
    /// The file fio laid out (`Laying out IO file (1 file / 30MiB)`), in bytes.
    pub file_bytes: Option<u64>,
    /// fio's completion latency of the writes (`clat (nsec): min=..., max=..., avg=..., stdev=...`).
    pub write_lat: Option<LineStats>,
    /// fio's fdatasync latency (`sync (usec): min=..., max=..., avg=..., stdev=...`).
    pub sync_lat: Option<LineStats>,
    /// The image version, when fio's block size tells it.
    pub image_job: Option<ImageJob>,
    /// Lines over [`MAX_LINE`] that were skipped.
    pub long_lines: usize,
}

/// One of fio's latency summary lines, in ns: `clat (nsec): min=1024, max=14349k, avg=103520.77,
/// stdev=145454.55` (fio prints the unit in parentheses and may abbreviate a value with k, M).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stdev: f64,
}

impl LineStats {
    /// `rest` is what follows `clat ` or `sync `: `(usec): min=732, max=4286, avg=1052.51, stdev=278.42`.
    fn parse(rest: &str) -> Option<LineStats> {
        let (unit, values) = rest.strip_prefix('(')?.split_once("):")?;
        let scale = match unit.trim() {
            "nsec" => 1.0,
            "usec" => 1e3,
            "msec" => 1e6,
            "sec" => 1e9,
            _ => return None,
        };
        let f = |key: &str| -> Option<f64> {
            let v = values
                .split(',')
                .map(str::trim)
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))?;
            let (num, mult) = match v.strip_suffix('k') {
                Some(n) => (n, 1e3),
                None => match v.strip_suffix('M') {
                    Some(n) => (n, 1e6),
                    None => (v, 1.0),
                },
            };
            let x = num.trim().parse::<f64>().ok()? * mult * scale;
            (x.is_finite() && x >= 0.0).then_some(x)
        };
        let (min, max, mean, stdev) = (f("min")?, f("max")?, f("avg")?, f("stdev")?);
        Some(LineStats {
            min: min.round() as u64,
            max: max.round() as u64,
            mean,
            stdev,
        })
    }

    fn lat(self) -> LatStats {
        LatStats {
            mean: self.mean,
            stdev: self.stdev,
            min: self.min,
            max: self.max,
            percentiles: BTreeMap::new(),
        }
    }
}

/// Parses the image's output. Never panics; memory is bounded by the text's length.
pub fn parse(text: &str, source_name: &str) -> Result<EtcdPerf, EtcdPerfError> {
    if text.len() > MAX_BYTES {
        return Err(EtcdPerfError::TooLarge {
            source_name: source_name.into(),
            size: format!("{} bytes", text.len()),
            max: MAX_BYTES,
        });
    }
    let mut p99s = Vec::new();
    let mut image_pass = None;
    let mut image_line = None;
    let mut bs = None;
    let mut writes = None;
    let mut runtime_ms = None;
    let mut file_bytes = None;
    let mut write_lat = None;
    let mut sync_lat = None;
    let mut long_lines = 0;
    for line in text.lines() {
        if line.len() > MAX_LINE {
            long_lines += 1;
            continue;
        }
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("99th percentile of fsync is ") {
            if let Some(n) = rest
                .strip_suffix(" ns")
                .and_then(|n| n.trim().parse::<u64>().ok())
            {
                p99s.push(n);
            }
        } else if l.contains("99th percentile of the fsync is") {
            if l.contains("within the recommended threshold") {
                image_pass = Some(true);
                image_line = Some(l.to_string());
            } else if l.contains("greater than the recommended value") {
                image_pass = Some(false);
                image_line = Some(l.to_string());
            }
        } else if bs.is_none() && l.contains("rw=write") {
            // "etcd_perf: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) ..."
            bs = l
                .split_once("(W) ")
                .and_then(|(_, r)| r.split(['B', '-']).next())
                .and_then(|n| n.trim().parse::<u64>().ok())
                .filter(|n| *n > 0);
        } else if let Some(rest) = l.strip_prefix("issued rwts: total=") {
            writes = rest
                .split([',', ' '])
                .nth(1)
                .and_then(|n| n.parse::<u64>().ok());
        } else if let Some(rest) = l.strip_prefix("clat ") {
            write_lat = write_lat.or(LineStats::parse(rest));
        } else if let Some(rest) = l.strip_prefix("sync ") {
            sync_lat = sync_lat.or(LineStats::parse(rest));
        } else if let Some(rest) = l.split_once("Laying out IO file").map(|(_, r)| r.trim()) {
            // "(1 file / 30MiB)"
            file_bytes = rest
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split_once('/')
                .and_then(|(_, size)| disktier_units::parse_size(size.trim()).ok())
                .filter(|b| *b > 0);
        } else if l.starts_with("WRITE:") {
            runtime_ms = l
                .split_once("run=")
                .and_then(|(_, r)| r.split(['-', 'm']).next())
                .and_then(|n| n.trim().parse::<u64>().ok());
        }
    }
    let p99_ns = match p99s.as_slice() {
        [] => {
            return Err(EtcdPerfError::NoP99 {
                source_name: source_name.into(),
            })
        }
        [one] => *one,
        more => {
            return Err(EtcdPerfError::Several {
                source_name: source_name.into(),
                count: more.len(),
            })
        }
    };
    let image_job = match bs {
        Some(2300) => Some(ImageJob::Classic),
        Some(8000) => Some(ImageJob::Current),
        _ => None,
    };
    Ok(EtcdPerf {
        p99_ns,
        image_pass,
        image_line,
        bs,
        writes,
        runtime_ms,
        file_bytes,
        write_lat,
        sync_lat,
        image_job,
        long_lines,
    })
}

impl EtcdPerf {
    /// Whether the p99 passes disktier's threshold (10 ms, etcd's documented limit).
    pub fn pass(&self) -> bool {
        self.p99_ns < ETCD_SYNC_P99_THRESHOLD_NS
    }

    /// The result document: engine `etcd-perf`, profile `etcd`, the sync p99 and the etcd verdict
    /// recomputed by disktier's threshold. `started_at` is when the run is known to have happened
    /// (the file's modification time, as the output holds no date).
    pub fn to_run_doc(&self, source_name: &str, started_at: String) -> RunDoc {
        self.to_named_run_doc(source_name, started_at, Named::default())
    }

    /// [`EtcdPerf::to_run_doc`] with what the user named at import (`--target`, `--host`): the
    /// output itself names neither.
    pub fn to_named_run_doc(&self, source_name: &str, started_at: String, named: Named) -> RunDoc {
        let unknown = if named.host.is_some() {
            "the device is unknown"
        } else {
            "host and device are unknown"
        };
        let mut warnings = vec![if self.sync_lat.is_some() {
            format!(
                "imported from the etcd-perf image's output ({source_name}): {unknown}; of the latencies, fio's report gives min, max, mean and stdev, the image the fsync p99"
            )
        } else {
            format!(
                "imported from the etcd-perf image's output ({source_name}): {unknown}; only the fsync p99 is known"
            )
        }];
        let target = named.target.unwrap_or(ETCD_DIR);
        let pass = self.pass();
        let thr_ms = ETCD_SYNC_P99_THRESHOLD_NS as f64 / 1e6;
        let message = if pass {
            format!(
                "99th percentile of fsync {} ns is within {thr_ms} ms: the disk can host etcd",
                self.p99_ns
            )
        } else {
            format!(
                "99th percentile of fsync {} ns is over {thr_ms} ms: faster disks are recommended to host etcd",
                self.p99_ns
            )
        };
        if let (Some(img), Some(line)) = (self.image_pass, &self.image_line) {
            if img != pass {
                let w = format!(
                    "the image's own verdict disagrees with its number: it said \"{line}\", disktier's threshold ({thr_ms} ms, etcd docs) says {}",
                    if pass { "pass" } else { "fail" }
                );
                warnings.push(w);
            }
        }
        if self.long_lines > 0 {
            warnings.push(format!(
                "{} line(s) longer than {MAX_LINE} bytes were skipped",
                self.long_lines
            ));
        }
        let job_kind = self.image_job;
        let bs = self.bs.or(job_kind.map(ImageJob::bs));
        let mut job = serde_json::json!({
            "name": "etcd-perf",
            "rw": "write",
            "ioengine": "sync",
            "fdatasync": 1,
            "directory": target,
        });
        if let Some(bs) = bs {
            job["bs"] = bs.into();
        }
        if let Some(k) = job_kind {
            // The size fio was given, from its report: the file it laid out, or, for the
            // classic job (one pass, not time-based), the bytes its writes covered. The image's
            // own size is only a guess (the OSTree-vs-etcd recipe ran the same job with
            // --size=30m).
            let written = self
                .writes
                .zip(bs)
                .map(|(n, bs)| n.saturating_mul(bs))
                .filter(|b| *b > 0 && k == ImageJob::Classic);
            if let Some(size) = self.file_bytes.or(written) {
                job["size"] = size.into();
            } else if k == ImageJob::Current {
                job["size"] = k.size().into();
            }
            if k == ImageJob::Current {
                job["runtime"] = 60.into();
                job["time_based"] = 1.into();
            }
        } else {
            warnings.push(
                "fio's report is not in the file: which image version (22m/2300 B or 100m/8000 B writes) is unknown".into(),
            );
        }
        let duration_s = self.runtime_ms.unwrap_or(0) as f64 / 1e3;
        let ios = self.writes.unwrap_or(0);
        // What is not in the file is unknown (null), never 0.
        let mut sync_lat = self.sync_lat.map_or(LatStats::UNKNOWN, LineStats::lat);
        // The p99 is the image's printed figure, the one its verdict is on: kept as printed.
        sync_lat.percentiles.insert("99".to_string(), self.p99_ns);
        let sync = DirStats::syncs(ios, duration_s, sync_lat);
        let write = (ios > 0).then(|| {
            let bytes = ios.saturating_mul(bs.unwrap_or(0));
            DirStats {
                ios,
                bytes,
                iops: sync.iops,
                bw_bytes: if duration_s > 0.0 {
                    bytes as f64 / duration_s
                } else {
                    0.0
                },
                lat_ns: self.write_lat.map_or(LatStats::UNKNOWN, LineStats::lat),
                stalls: None,
            }
        });
        let mut verdicts = vec![Verdict {
            name: "etcd".into(),
            metric: "sync.p99".into(),
            value: self.p99_ns as f64,
            threshold: ETCD_SYNC_P99_THRESHOLD_NS as f64,
            pass,
            message,
            ci95: None,
            inconclusive: false,
        }];
        if let Some(img) = self.image_pass {
            verdicts.push(Verdict {
                name: "etcd-perf-image".into(),
                metric: "sync.p99".into(),
                value: self.p99_ns as f64,
                threshold: ETCD_SYNC_P99_THRESHOLD_NS as f64,
                pass: img,
                message: self.image_line.clone().unwrap_or_default(),
                ci95: None,
                inconclusive: false,
            });
        }
        RunDoc {
            schema_version: SCHEMA_VERSION,
            engine: "etcd-perf".into(),
            profile: Some("etcd".into()),
            quick: false,
            job,
            target: TargetInfo {
                path: target.into(),
                kind: "directory".into(),
                ..TargetInfo::default()
            },
            host: HostInfo {
                hostname: named.host.unwrap_or_default().into(),
                ..HostInfo::default()
            },
            started_at,
            duration_s,
            interrupted: false,
            results: Results {
                write,
                sync: Some(sync),
                ..Results::default()
            },
            series: Vec::new(),
            verdicts,
            warnings,
        }
    }
}

/// Reads and parses a file, refusing one over [`MAX_BYTES`] before reading it whole.
/// Where the etcd-perf image measures (its `--volume /var/lib/etcd:/var/lib/etcd`), unless the
/// import names another target.
const ETCD_DIR: &str = "/var/lib/etcd";

/// What the user names at import, as the output names neither.
#[derive(Debug, Clone, Copy, Default)]
pub struct Named<'a> {
    pub target: Option<&'a str>,
    pub host: Option<&'a str>,
}

pub fn parse_file(path: &Path) -> Result<EtcdPerf, EtcdPerfError> {
    let name = path.display().to_string();
    let read_err = |e: std::io::Error| EtcdPerfError::Read {
        source_name: name.clone(),
        why: e.to_string(),
    };
    let f = std::fs::File::open(path).map_err(read_err)?;
    // A regular file's size is known; of a stream only that it is longer than what was read.
    let size = match f.metadata() {
        Ok(m) if m.is_file() => format!("{} bytes", m.len()),
        _ => format!("more than {MAX_BYTES} bytes"),
    };
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_BYTES as u64 + 1), &mut buf)
        .map_err(read_err)?;
    if buf.len() > MAX_BYTES {
        return Err(EtcdPerfError::TooLarge {
            source_name: name,
            size,
            max: MAX_BYTES,
        });
    }
    parse(&String::from_utf8_lossy(&buf), &name)
}

#[cfg(test)]
#[path = "etcdperf_tests.rs"]
mod tests;
