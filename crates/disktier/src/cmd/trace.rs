//! `disktier trace`: record the engine's I/O as a block trace, import public trace formats, and
//! describe a trace (footprint, mix, sizes, sequentiality, reuse). The format and the importers
//! live in `disktier-cachesim`, the one pass that describes a trace in
//! [`crate::app::tracestats`]; this module parses the options and prints.

use super::bench::RunArgs;
use super::{print_json, Ctx, Outcome};
use crate::app::job::{self, JobOptions};
use crate::app::tracestats::{describe, Described};
use crate::app::SCHEMA_VERSION;
use anyhow::bail;
use disktier_cachesim::import::{self, Format};
use disktier_units::{clap_parsers, Bytes};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: TraceCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum TraceCmd {
    /// Run a job with the native engine and record every I/O it issues (DTTRACE format).
    Record(Box<RecordArgs>),
    /// Convert a public trace (blkparse, msr, alibaba, tencent, fio-iolog) into DTTRACE;
    /// gzip and zstd input is detected by its magic bytes.
    Import(ImportArgs),
    /// Describe a trace: footprint, read/write mix, sizes, sequentiality, reuse.
    #[command(visible_alias = "describe")]
    Stats(StatsArgs),
}

#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// File, directory or block device to run on.
    pub target: PathBuf,
    /// Where to write the trace.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// A built-in profile (etcd, write-iops, ...); job options override its settings.
    #[arg(long, short = 'p', value_name = "NAME", value_parser = super::value_enum::Offered { values: super::value_enum::PROFILES, check: super::value_enum::any_text }, hide_possible_values = true)]
    pub profile: Option<String>,
    /// Scale the profile down so it takes seconds.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub job: JobOptions,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Input format: blkparse, msr, alibaba, tencent, fio-iolog.
    #[arg(value_parser = parse_format, value_name = "FORMAT")]
    pub input_format: Format,
    /// The trace to read (plain, .gz or .zst); - reads standard input (`blkparse -o - | ...`).
    pub file: PathBuf,
    /// Where to write the DTTRACE file.
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: PathBuf,
    /// Fail on the first malformed line instead of counting and skipping it.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// A DTTRACE file (from `trace record` or `trace import`).
    pub file: PathBuf,
    /// Block size for footprint and reuse.
    #[arg(long, default_value = "4KiB", value_parser = clap_parsers::size)]
    pub block: u64,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).map_err(|e| e.to_string())
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.cmd {
        TraceCmd::Record(a) => record(ctx, *a),
        TraceCmd::Import(a) => import_cmd(ctx, a),
        TraceCmd::Stats(a) => stats_cmd(ctx, a),
    }
}

/// `trace record --format json`: the trace written and the engine's own counts, to check the
/// one against the other.
#[derive(serde::Serialize)]
struct RecordDoc<'a> {
    schema_version: u32,
    #[serde(serialize_with = "crate::text::lossy_path")]
    trace: &'a Path,
    /// I/O records in the trace.
    records: u64,
    duration_s: f64,
    interrupted: bool,
    engine: EngineCounts,
}

/// What the engine counted while the trace was recorded.
#[derive(serde::Serialize)]
struct EngineCounts {
    read_ios: u64,
    read_bytes: u64,
    write_ios: u64,
    write_bytes: u64,
    sync_ios: u64,
}

fn record(ctx: &Ctx, a: RecordArgs) -> anyhow::Result<Outcome> {
    let run = (&a.run).into();
    crate::app::tracelog::needs_native(a.run.engine.into())?;
    let profile = a.profile.as_deref().map(job::profile).transpose()?;
    let recorded = crate::app::tracelog::record(
        crate::app::measure::Request {
            target: &a.target,
            profile,
            quick: a.quick,
            job: &a.job,
            run,
            io_log: None,
        },
        &a.output,
        super::progress::stop_flag(),
        super::progress::reporter(ctx, "trace record"),
    );
    super::progress::clear();
    let crate::app::tracelog::Recorded {
        measurement: m,
        records,
        span,
    } = recorded?;
    let r = &m.doc.results;
    let dir = |d: &Option<disktier_engine::DirStats>| {
        d.as_ref().map(|d| (d.ios, d.bytes)).unwrap_or((0, 0))
    };
    let (rio, rb) = dir(&r.read);
    let (wio, wb) = dir(&r.write);
    let (sio, _) = dir(&r.sync);
    if ctx.json() {
        // Through a Value: its keys are sorted, as this document has always been printed.
        print_json(&serde_json::to_value(RecordDoc {
            schema_version: SCHEMA_VERSION,
            trace: &a.output,
            records,
            duration_s: m.doc.duration_s,
            interrupted: m.doc.interrupted,
            engine: EngineCounts {
                read_ios: rio,
                read_bytes: rb,
                write_ios: wio,
                write_bytes: wb,
                sync_ios: sio,
            },
        })?)?;
    } else {
        outln!(
            "recorded {records} I/Os to {} ({:.1} s): engine counted {rio} reads ({}), {wio} writes ({}), {sio} syncs",
            crate::text::path(&a.output),
            m.doc.duration_s,
            Bytes(rb),
            Bytes(wb)
        )?;
        ctx.note(next_steps(&a.output, rb.saturating_add(wb).min(span)));
    }
    if m.doc.interrupted {
        bail!(
            "the run was interrupted; the trace {} holds what ran",
            a.output.display()
        );
    }
    Ok(Outcome::Pass)
}

/// The commands to run on a recorded trace, its path quoted for a shell, with cache sizes
/// that fit what the run could have touched: at most `moved`, the bytes it moved or, when
/// smaller, the range its I/Os spanned (QA: 1GiB..16GiB was suggested for a 2 MiB run, every
/// size larger than its footprint, and a path with a space was printed bare; a time-based run
/// over 16 MiB that moved 872 MiB was offered 64MiB..1GiB).
fn next_steps(trace: &Path, moved: u64) -> String {
    // Quoted for a shell, then escaped for the terminal (a newline in the name stays on the
    // line as `\n`).
    let t = crate::text::printable(&disktier_cmd::shell_quote(&trace.to_string_lossy()), false);
    let hi = moved.clamp(1 << 20, 1 << 50).next_power_of_two();
    let lo = (hi / 16).max(64 << 10);
    format!(
        "next: disktier trace stats {t}; disktier simulate --trace {t} --cache-sizes {}..{}",
        pow2(lo),
        pow2(hi)
    )
}

/// A power of two of bytes as `--cache-sizes` reads it (`256KiB`, `16GiB`).
fn pow2(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut i = 0;
    let mut v = b;
    while v >= 1024 && v.is_multiple_of(1024) && i + 1 < units.len() {
        v /= 1024;
        i += 1;
    }
    format!("{v}{}", units[i])
}

fn import_cmd(ctx: &Ctx, a: ImportArgs) -> anyhow::Result<Outcome> {
    // Ctrl-C, SIGTERM or SIGHUP: the import stops and leaves -o as it was.
    let stop = super::progress::stop_flag();
    // `-` is standard input, as in blkparse's own `-o -`; `./-` names a file called `-`.
    let input = if a.file.as_os_str() == "-" {
        PathBuf::from("/dev/stdin")
    } else {
        a.file.clone()
    };
    let rep = import::import_to_file(a.input_format, &input, &a.output, a.strict, stop)?;
    if ctx.json() {
        let mut v = serde_json::to_value(&rep)?;
        v["schema_version"] = json!(SCHEMA_VERSION);
        v["output"] = crate::text::path_json(&a.output);
        print_json(&v)?;
    } else {
        outln!(
            "imported {} requests from {} ({} format, compression {}) into {}",
            rep.records,
            crate::text::path(&input),
            a.input_format.name(),
            rep.compression,
            crate::text::path(&a.output)
        )?;
        if rep.skipped > 0 {
            outln!(
                "skipped {} header, comment or non-request lines",
                rep.skipped
            )?;
        }
        if rep.out_of_order > 0 {
            outln!(
                "{} requests were timed before the first one and were placed at time 0",
                rep.out_of_order
            )?;
        }
    }
    if rep.malformed > 0 {
        ctx.note(format!(
            "warning: {} malformed line(s) skipped, first at line(s) {}; pass --strict to stop at the first",
            rep.malformed,
            rep.first_malformed
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Outcome::Pass)
}

fn stats_cmd(ctx: &Ctx, a: StatsArgs) -> anyhow::Result<Outcome> {
    let Described {
        source,
        start_unix_ns,
        stats: s,
    } = {
        // A long trace takes minutes: on a terminal a progress line, as simulate draws.
        let draw = |r: &crate::app::traceread::Replaying| {
            super::progress::draw(&super::progress::reading_line("trace stats", r))
        };
        let described = describe(
            &a.file,
            a.block,
            super::progress::enabled(ctx).then_some(&draw),
        );
        super::progress::clear();
        described?
    };
    if ctx.json() {
        let mut v = serde_json::to_value(&s)?;
        v["schema_version"] = json!(SCHEMA_VERSION);
        v["trace"] = crate::text::path_json(&a.file);
        v["source"] = json!(source);
        v["start_unix_ns"] = json!(start_unix_ns);
        print_json(&v)?;
        return Ok(Outcome::Pass);
    }
    outln!(
        "{} (source: {})",
        crate::text::path(&a.file),
        crate::text::printable(&source, false)
    )?;
    if s.truncated {
        outln!("warning: the trace has no trailer (its writer did not finish); these are the records before the cut")?;
    }
    outln!(
        "requests     {} over {:.3} s ({:.0}/s): {} reads, {} writes, {} syncs, {} discards; {} stream(s)",
        s.requests, s.seconds, s.requests_per_second, s.reads, s.writes, s.syncs, s.discards, s.streams
    )?;
    if s.empty_reads + s.empty_writes > 0 {
        outln!(
            "no data      {} reads and {} writes of 0 bytes: counted as requests but, as simulate does, not among the reads and writes, the mix, sizes, sequentiality or reuse",
            s.empty_reads, s.empty_writes
        )?;
    }
    outln!(
        "bytes        read {}, written {}, discarded {}",
        Bytes(s.read_bytes),
        Bytes(s.write_bytes),
        Bytes(s.discard_bytes)
    )?;
    outln!(
        "footprint    {} ({} read, {} written) at {} blocks",
        Bytes(s.footprint_bytes),
        Bytes(s.read_footprint_bytes),
        Bytes(s.write_footprint_bytes),
        Bytes(s.block_bytes)
    )?;
    outln!(
        "mix          {:.1} % reads by requests, {:.1} % by bytes",
        s.read_fraction * 100.0,
        s.read_bytes_fraction * 100.0
    )?;
    outln!(
        "sequential   {:.1} % of requests continue their stream's previous one",
        s.sequential_fraction * 100.0
    )?;
    outln!(
        "reuse        {:.1} % of block accesses revisit a block (the best a cache of {} blocks can hit; one that fills larger units, as lvmcache's chunks, also hits first accesses near cached data); reuse distance p50 {}, p90 {}, p99 {}",
        s.reuse_fraction * 100.0,
        Bytes(s.block_bytes),
        Bytes(s.reuse_distance.p50_bytes),
        Bytes(s.reuse_distance.p90_bytes),
        Bytes(s.reuse_distance.p99_bytes)
    )?;
    outln!("sizes")?;
    let data = (s.reads + s.writes).max(1);
    let mut lo = 0u64;
    for b in &s.size_histogram {
        if b.requests > 0 {
            let label = if b.le_bytes == u64::MAX {
                format!("> {}", Bytes(lo))
            } else {
                format!("<= {}", Bytes(b.le_bytes))
            };
            outln!(
                "  {label:>12}  {:>10}  {:5.1} %",
                b.requests,
                b.requests as f64 * 100.0 / data as f64
            )?;
        }
        lo = b.le_bytes;
    }
    Ok(Outcome::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_steps_fit_the_run_and_quote_the_path() {
        let n = next_steps(Path::new("/tmp/my trace.dtt"), 2 << 20);
        assert_eq!(
            n,
            "next: disktier trace stats '/tmp/my trace.dtt'; disktier simulate --trace '/tmp/my trace.dtt' --cache-sizes 128KiB..2MiB"
        );
        let n = next_steps(Path::new("t.dtt"), (40 << 30) + 1);
        assert!(
            n.ends_with("--trace t.dtt --cache-sizes 4GiB..64GiB"),
            "{n}"
        );
        assert!(next_steps(Path::new("t"), 0).ends_with("64KiB..1MiB"));
        assert_eq!(pow2(1 << 50), "1PiB");
    }
}
