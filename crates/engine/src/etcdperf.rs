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
    #[error("{source_name} is {bytes} bytes, over the {max} bytes an etcd-perf output can be: pass the file the image printed (`podman run ... > FILE`)")]
    TooLarge {
        source_name: String,
        bytes: usize,
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
            bytes: text.len(),
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
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_BYTES as u64 + 1), &mut buf)
        .map_err(read_err)?;
    if buf.len() > MAX_BYTES {
        return Err(EtcdPerfError::TooLarge {
            source_name: name,
            bytes: buf.len(),
            max: MAX_BYTES,
        });
    }
    parse(&String::from_utf8_lossy(&buf), &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "99th percentile of fsync is 4046848 ns\n99th percentile of the fsync is within the recommended threshold - 10 ms, the disk can be used to host etcd\n";

    #[test]
    fn seed_lines() {
        let e = parse(SEED, "t").unwrap();
        assert_eq!(e.p99_ns, 4_046_848);
        assert_eq!(e.image_pass, Some(true));
        assert!(e.pass());
        let d = e.to_run_doc("t", "2026-01-01T00:00:00Z".into());
        assert_eq!(
            d.results.sync.as_ref().unwrap().lat_ns.p(99.0),
            Some(4_046_848)
        );
        assert!(d.verdicts[0].pass);
    }

    #[test]
    fn disagreeing_image_verdict_is_shown() {
        let t = "99th percentile of fsync is 12000000 ns\n99th percentile of the fsync is within the recommended threshold of 10 ms, the disk can be used to host etcd\n";
        let e = parse(t, "t").unwrap();
        assert!(!e.pass());
        let d = e.to_run_doc("t", String::new());
        assert!(!d.verdicts[0].pass);
        assert!(d.verdicts[1].pass);
        assert!(
            d.warnings.iter().any(|w| w.contains("disagrees")),
            "{:?}",
            d.warnings
        );
    }

    #[test]
    fn warn_line_and_fio_report() {
        let t = "etcd_perf: (g=0): rw=write, bs=(R) 8000B-8000B, (W) 8000B-8000B, (T) 8000B-8000B, ioengine=sync, iodepth=1\n  issued rwts: total=0,12000,0,0 short=0,0,0,0 dropped=0,0,0,0\n  WRITE: bw=1562KiB/s (1600kB/s), 1562KiB/s-1562KiB/s (1600kB/s-1600kB/s), io=91.6MiB (96.0MB), run=60000-60000msec\n99th percentile of fsync is 15007744 ns\nWARN: 99th percentile of the fsync is greater than the recommended value which is 10 ms, faster disks are recommended to host etcd for better performance\n";
        let e = parse(t, "t").unwrap();
        assert_eq!(e.image_pass, Some(false));
        assert_eq!(e.bs, Some(8000));
        assert_eq!(e.writes, Some(12000));
        assert_eq!(e.runtime_ms, Some(60000));
        assert_eq!(e.image_job, Some(ImageJob::Current));
        let d = e.to_run_doc("t", String::new());
        assert!((d.results.sync.unwrap().iops - 200.0).abs() < 1e-9);
        assert!(!d.warnings.iter().any(|w| w.contains("disagrees")));
    }

    /// The OSTree-vs-etcd recipe's baseline report (fio 3.19, `--size=30m --bs=2300`) with the
    /// image's two lines: QA found the size taken as the image's 22 MiB and min, max and mean
    /// of 0 beside the p99.
    const SEED_004: &str = "etcd: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) 2300B-2300B, ioengine=sync, iodepth=1
fio-3.19
Starting 1 process
etcd: Laying out IO file (1 file / 30MiB)
etcd: (groupid=0, jobs=1): err= 0: pid=408906: Wed Jul 15 02:14:39 2020
  write: IOPS=858, BW=1928KiB/s (1974kB/s)(29.0MiB/15937msec); 0 zone resets
    clat (nsec): min=1024, max=14349k, avg=103520.77, stdev=145454.55
     lat (nsec): min=1082, max=14350k, avg=104346.19, stdev=145488.30
    clat percentiles (usec):
     |  1.00th=[    5],  5.00th=[    7], 10.00th=[   14], 20.00th=[   25],
  fsync/fdatasync/sync_file_range:
    sync (usec): min=732, max=4286, avg=1052.51, stdev=278.42
    sync percentiles (usec):
     | 99.00th=[ 1434], 99.50th=[ 3884], 99.90th=[ 4113], 99.95th=[ 4178],
     issued rwts: total=0,13677,0,0 short=13677,0,0,0 dropped=0,0,0,0
Run status group 0 (all jobs):
  WRITE: bw=1928KiB/s (1974kB/s), 1928KiB/s-1928KiB/s (1974kB/s-1974kB/s), io=29.0MiB (31.5MB), run=15937-15937msec
99th percentile of fsync is 1433600 ns
99th percentile of the fsync is within the recommended threshold - 10 ms, the disk can be used to host etcd
";

    #[test]
    fn size_and_latencies_come_from_fios_report() {
        let e = parse(SEED_004, "t").unwrap();
        assert_eq!(e.file_bytes, Some(30 << 20));
        let d = e.to_run_doc("t", String::new());
        assert_eq!(d.job["size"], 30 << 20);
        let w = d.results.write.as_ref().unwrap();
        assert_eq!((w.ios, w.bytes), (13677, 31_457_100));
        let s = d.results.sync.as_ref().unwrap();
        assert_eq!((s.lat_ns.min, s.lat_ns.max), (732_000, 4_286_000));
        assert!((s.lat_ns.mean - 1_052_510.0).abs() < 1e-6);
        assert_eq!(s.lat_ns.p(99.0), Some(1_433_600));
        assert_eq!((w.lat_ns.min, w.lat_ns.max), (1_024, 14_349_000));
        // Without the layout line, the classic job's size is what its writes covered.
        let no_layout = SEED_004.replace("etcd: Laying out IO file (1 file / 30MiB)\n", "");
        let d = parse(&no_layout, "t")
            .unwrap()
            .to_run_doc("t", String::new());
        assert_eq!(d.job["size"], 31_457_100);
    }

    #[test]
    fn what_the_output_does_not_say_is_null() {
        let d = parse(SEED, "t").unwrap().to_run_doc("t", String::new());
        let v = serde_json::to_value(&d).unwrap();
        let lat = &v["results"]["sync"]["lat_ns"];
        for k in ["min", "max", "mean", "stdev"] {
            assert!(lat[k].is_null(), "{k}: {lat}");
        }
        assert_eq!(lat["percentiles"]["99"], 4_046_848);
        assert!(v["job"].get("size").is_none(), "{}", v["job"]);
        // And it reads back as unknown.
        let back: RunDoc = serde_json::from_value(v).unwrap();
        assert!(back.results.sync.unwrap().lat_ns.max_ns().is_none());
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            parse("hello\n", "t"),
            Err(EtcdPerfError::NoP99 { .. })
        ));
        let two = format!("{SEED}{SEED}");
        assert!(matches!(
            parse(&two, "t"),
            Err(EtcdPerfError::Several { count: 2, .. })
        ));
        let big = "x".repeat(MAX_BYTES + 1);
        assert!(matches!(
            parse(&big, "t"),
            Err(EtcdPerfError::TooLarge { .. })
        ));
        let long = format!("{}\n{SEED}", "y".repeat(MAX_LINE + 1));
        assert_eq!(parse(&long, "t").unwrap().long_lines, 1);
    }
}
