//! The job file's option reader: the command line's own job options ([`JobOptions`]), one
//! `key=value` at a time, so a job file accepts exactly what `bench --OPTION` does.

use crate::app::job::JobOptions;
use disktier_engine::Job;

/// How a job's options are read: [`FileOptions`] (the command line's own option parser), or a
/// test's parser.
pub trait OptionParser {
    /// Checks one option, `--key=value` or `--key`; the error is the parser's reason in one line.
    fn check(&self, arg: &str) -> Result<(), String>;
    /// Reads the options together and lays them over `job`.
    fn apply(&self, args: &[String], job: Job) -> anyhow::Result<Job>;
}

/// [`JobOptions`] alone, as a parser of one job file option at a time.
#[derive(Debug, clap::Parser)]
#[command(no_binary_name = true)]
struct Opts {
    #[command(flatten)]
    job: JobOptions,
}

/// The command line's job option parser as the job file's option reader, so a job file accepts
/// exactly what `bench --OPTION` does.
pub struct FileOptions;

impl OptionParser for FileOptions {
    fn check(&self, arg: &str) -> Result<(), String> {
        // QA: `bs=4KiB` ran 4,096-byte blocks here and 4,000-byte ones in fio, whose default
        // kb_base=1024 reads the IEC units as powers of 1,000.
        if let Some((_, v)) = arg.split_once('=') {
            let unit = v.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if unit.len() < v.len() && disktier_units::is_iec(unit) {
                return Err(format!("{v}: fio reads {unit} as a power of 1,000 (its default kb_base=1024), disktier as a power of 1,024; write the bytes, or k, m, g for powers of 1,024, so that both read the same size"));
            }
        }
        <Opts as clap::Parser>::try_parse_from([arg])
            .map(|_| ())
            .map_err(|e| {
                let why = e.to_string();
                why.lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string()
            })
    }

    fn apply(&self, args: &[String], job: Job) -> anyhow::Result<Job> {
        let opts = <Opts as clap::Parser>::try_parse_from(args)?.job;
        let job = opts.apply(job);
        opts.check(&job)?;
        Ok(job)
    }
}

/// The options whose values the checks before fio starts read: whether the job writes, and
/// how many files, how large and where (the files that exist, the room they need, the ones to
/// remove afterwards). A value of theirs only fio reads is refused, never left to fio (QA:
/// `numjobs=$ncpus`, fio's reserved keyword, was dropped; the checks saw one thread, fio ran
/// two, wrote `a.1.0` over a file of that name that existed, and left it behind).
const CHECKED_BEFORE_FIO: &[&str] = &["rw", "size", "offset", "numjobs"];

/// Whether a value of the job file option `key` that disktier cannot read may be left to fio
/// (`--engine fio`): yes, unless the checks before fio starts read it.
pub fn left_to_fio(key: &str) -> bool {
    !CHECKED_BEFORE_FIO.contains(&key)
}

/// Why such a value is refused all the same when fio runs the file (`lenient`).
pub fn checked_before_fio(lenient: bool) -> &'static str {
    if lenient {
        "; with --engine fio, disktier checks the job's files before fio runs it (which exist, whether they fit, which to remove afterwards), so it must read this value too: write the number fio would use"
    } else {
        ""
    }
}

/// Whether fio reads `key=value` as the option left out: `runtime=0` is fio's default, no
/// limit (QA: `bench FILE.fio --engine fio` refused it as a runtime under 1 ms, a file fio runs;
/// the native engine still refuses it, as `bench --runtime 0`, saying to leave it out).
pub fn fio_reads_as_unset(key: &str, value: Option<&str>) -> bool {
    key == "runtime"
        && value.is_some_and(|v| disktier_units::parse_duration(v).is_ok_and(|d| d.is_zero()))
}

/// `value` of the job file option `key` as the checks before fio starts must read it when fio
/// runs the file (`--engine fio`), where the native reader refuses it:
/// - a size in IEC units as fio reads it (`40KiB`: 40,000 bytes under fio's default
///   kb_base=1024; QA: `size=40KiB` was dropped, and a directory was refused for no size);
/// - a `rw` that trims as the write it is to the data (QA: `rw=trim` was dropped, the checks
///   took fio's default read, and fio trimmed away a device's GPT partition table without
///   --destructive); fio's `:N` offset modifier changes no direction.
pub fn as_fio_reads(key: &str, value: String) -> String {
    if key == "rw" {
        let rw = value.split(':').next().unwrap_or("").trim();
        return match rw {
            "rw" => "readwrite",
            r if r.contains("trim") && r.starts_with("rand") => "randwrite",
            r if r.contains("trim") => "write",
            r => r,
        }
        .to_string();
    }
    let unit = value.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if unit.len() < value.len() && disktier_units::is_iec(unit) {
        if let Ok(bytes) = disktier_units::parse_fio_size(&value) {
            return bytes.to_string();
        }
    }
    value
}
