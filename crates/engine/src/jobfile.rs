//! fio job files (fio HOWTO, "Job file format"): `[global]` and job sections of `key=value`
//! lines, and the options that say which jobs run together (`stonewall`, `new_group`) and how
//! they are reported (`group_reporting`, `numjobs`).
//!
//! This module owns the file's structure: sections, comments, option lines, groups. It does not
//! give values their meaning: each job comes out as the list of its options (the `[global]`
//! sections before it, overlaid with its own), and the caller reads them with the same option
//! parser as the command line's, so a job file accepts exactly what `disktier bench --OPTION`
//! accepts. Lines are read as fio reads them: a `;` or `#` starts a comment anywhere on a line,
//! and `${NAME}` in an option line is the environment variable's value.
//! The parse is bounded: the file's size, a line's length, the number of sections and of
//! options, and `include` (fio's `include FILE`) is refused rather than followed.

use std::collections::BTreeMap;

/// Largest job file read (fio's own example files are a few KiB).
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// Longest line (fio reads lines into a 4 KiB buffer: `OPT_LEN_MAX` is 8192 in fio's parse.h;
/// disktier keeps the smaller bound).
pub const MAX_LINE: usize = 4096;
/// Most sections, `[global]` included.
pub const MAX_SECTIONS: usize = 64;
/// Most options in one section.
pub const MAX_OPTIONS: usize = 128;

/// The job options disktier runs, with fio's names: the command line's job options
/// (`--rw` is `rw`). The caller parses their values.
pub const JOB_OPTIONS: &[&str] = &[
    "rw",
    "rwmixread",
    "bs",
    "size",
    "offset",
    "numjobs",
    "iodepth",
    "ioengine",
    "direct",
    "fsync",
    "fdatasync",
    "runtime",
    "time_based",
    "ramp_time",
    "randseed",
    "iodepth_batch_submit",
    "cpus_allowed",
    "norandommap",
    // Accepted where they change nothing (the caller's parser refuses the rest, saying why):
    // fio's verify=0 (its default), iodepth_batch_complete_max at or above iodepth (disktier
    // reaps every completion at once), nrfiles=1.
    "verify",
    "iodepth_batch_complete_max",
    "nrfiles",
];

/// fio's other spellings of the same options.
const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("wait_for_previous", "stonewall"),
];

/// Options about structure and reporting, handled here.
const STRUCTURE: &[&str] = &["stonewall", "new_group", "group_reporting"];

/// Options that change nothing disktier measures: `description` is a comment, `thread` is how
/// disktier always runs jobs (threads, not processes).
const IGNORED: &[&str] = &["description", "thread"];

mod error;
pub use error::JobFileError;

/// One option line: fio's canonical name, its value (`None` for a bare flag such as `direct`),
/// and the line it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOption {
    pub key: String,
    pub value: Option<String>,
    pub line: usize,
}

/// A job section, with what it inherits from the `[global]` sections above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileJob {
    /// The section's name (fio's `jobname`).
    pub name: String,
    /// Line of the section header.
    pub line: usize,
    /// Its job options ([`JOB_OPTIONS`] names), globals first, each name at most once (a job's
    /// own value replaces the global one, in the global one's place).
    pub options: Vec<JobOption>,
    /// `filename=` or `directory=`, if given (fio's default: the current directory); with both,
    /// the file in the directory, as `filename=` on the line of the name.
    pub target: Option<JobOption>,
    /// Jobs with the same run set start together; a `stonewall` job waits for every earlier
    /// run set to finish (fio: "wait for preceding jobs in the job file to exit").
    pub run_set: u32,
    /// Reporting group (fio's `groupid`): a new one at every `stonewall` or `new_group`.
    pub group: u32,
    /// Whether the group's figures are reported as one (fio's `group_reporting`).
    pub group_reporting: bool,
}

/// A parsed job file: its jobs in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    pub jobs: Vec<FileJob>,
}

impl JobFile {
    /// The run sets in order, each the indexes of its jobs.
    pub fn run_sets(&self) -> Vec<Vec<usize>> {
        let mut sets: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, j) in self.jobs.iter().enumerate() {
            sets.entry(j.run_set).or_default().push(i);
        }
        sets.into_values().collect()
    }

    /// The reporting groups in order, each the indexes of its jobs.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut g: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, j) in self.jobs.iter().enumerate() {
            g.entry(j.group).or_default().push(i);
        }
        g.into_values().collect()
    }
}

/// fio's boolean values: a bare flag or `1`/`0` (fio also takes `true`/`false`, `yes`/`no`, `on`/`off`).
fn flag(o: &JobOption, source_name: &str) -> Result<bool, JobFileError> {
    match o.value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(_) => Err(JobFileError::BadValue {
            source_name: source_name.into(),
            line: o.line,
            key: o.key.clone(),
            value: o.value.clone().unwrap_or_default(),
            fix: "use 1 or 0 (or the bare option name for 1)".into(),
        }),
    }
}

fn valid_section_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s != "."
        && s != ".."
}

/// What a line of a job file says, without its comment (fio cuts every line at its first `;`
/// or `#`: `strip_blank_end` in fio's parse.c) and blanks: empty for a blank or comment line.
/// (QA: `filename=/mnt/x.dat ; the file` ran on a file named `x.dat ; the file`.)
pub fn content(line: &str) -> &str {
    line.split([';', '#']).next().unwrap_or("").trim()
}

/// Refuses a control character but tab in a line (QA: `rw=wr\0ite` was refused as "unknown
/// rw `write`", the NUL unseen in the message).
fn control_char(l: &str, line: usize, source_name: &str) -> Result<(), JobFileError> {
    match l
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() && *c != '\t')
    {
        Some((i, c)) => Err(JobFileError::ControlChar {
            source_name: source_name.into(),
            line,
            column: i + 1,
            what: format!("the control character U+{:04X}", c as u32),
        }),
        None => Ok(()),
    }
}

/// A section as written: name, header line, options in order.
struct RawSection {
    name: String,
    line: usize,
    options: Vec<JobOption>,
}

/// Parses `text` (named `source_name` in errors).
pub fn parse(text: &str, source_name: &str) -> Result<JobFile, JobFileError> {
    parse_mode(text, source_name, false)
}

/// Parses a file that fio will run (`--engine fio`): options disktier does not know are left
/// out instead of refused (fio reads them), so that the jobs' targets can still be checked.
pub fn parse_for_fio(text: &str, source_name: &str) -> Result<JobFile, JobFileError> {
    parse_mode(text, source_name, true)
}

fn parse_mode(text: &str, source_name: &str, lenient: bool) -> Result<JobFile, JobFileError> {
    parse_with(text, source_name, lenient, &|name| std::env::var(name).ok())
}

fn parse_with(
    text: &str,
    source_name: &str,
    lenient: bool,
    env: Env,
) -> Result<JobFile, JobFileError> {
    let src = || source_name.to_string();
    if text.len() > MAX_FILE_BYTES {
        return Err(JobFileError::TooBig {
            source_name: src(),
            len: text.len(),
            max: MAX_FILE_BYTES,
        });
    }
    let mut sections: Vec<RawSection> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.len() > MAX_LINE {
            return Err(JobFileError::LineTooLong {
                source_name: src(),
                line,
                len: raw.len(),
                max: MAX_LINE,
            });
        }
        let l = content(raw);
        if l.is_empty() {
            continue;
        }
        control_char(l, line, source_name)?;
        if let Some(rest) = l.strip_prefix('[') {
            let name = rest.strip_suffix(']').map(str::trim).unwrap_or("");
            if !valid_section_name(name) {
                return Err(JobFileError::BadSection {
                    source_name: src(),
                    line,
                    text: l.chars().take(80).collect(),
                });
            }
            if sections.len() >= MAX_SECTIONS {
                return Err(JobFileError::TooManySections {
                    source_name: src(),
                    line,
                    max: MAX_SECTIONS,
                });
            }
            if name != "global" && sections.iter().any(|s| s.name == name) {
                return Err(JobFileError::DuplicateJob {
                    source_name: src(),
                    line,
                    name: name.into(),
                });
            }
            sections.push(RawSection {
                name: name.into(),
                line,
                options: Vec::new(),
            });
            continue;
        }
        let expanded = match expand_env(l, env, MAX_LINE) {
            Ok(e) => e,
            // fio reads what disktier leaves to it (`--engine fio`).
            Err(_) if lenient && !known(split_option(l).0) => continue,
            Err(Unexpanded::Unset(name)) => {
                return Err(JobFileError::Unset {
                    source_name: src(),
                    line,
                    name: name.chars().take(80).collect(),
                })
            }
            Err(Unexpanded::TooLong) => {
                return Err(JobFileError::ExpandedTooLong {
                    source_name: src(),
                    line,
                    max: MAX_LINE,
                })
            }
        };
        let l = expanded.as_str();
        control_char(l, line, source_name)?; // a ${VAR}'s value
        let (key, value) = split_option(l);
        let word = key.split_whitespace().next().unwrap_or("");
        if word == "include" {
            return Err(JobFileError::Include {
                source_name: src(),
                line,
            });
        }
        let Some(section) = sections.last_mut() else {
            return Err(JobFileError::OutsideSection {
                source_name: src(),
                line,
                key: key.chars().take(80).collect(),
            });
        };
        if let Some((option, why)) = refused::why(key, value.as_deref()) {
            let (source_name, option) = (src(), option.chars().take(80).collect());
            return Err(JobFileError::Refused {
                source_name,
                line,
                option,
                why,
            });
        }
        if !known(key) && lenient {
            continue;
        }
        if !known(key) {
            return Err(JobFileError::Unsupported {
                source_name: src(),
                line,
                key: key.chars().take(80).collect(),
                supported: supported_list(),
            });
        }
        if section.options.len() >= MAX_OPTIONS {
            return Err(JobFileError::TooManyOptions {
                source_name: src(),
                line,
                section: section.name.clone(),
                max: MAX_OPTIONS,
            });
        }
        section.options.push(JobOption {
            key: key.to_string(),
            value,
            line,
        });
    }
    resolve(sections, source_name)
}

/// An option line's name (fio's canonical one for an alias) and value (`None` for a flag).
fn split_option(l: &str) -> (&str, Option<String>) {
    let (key, value) = match l.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
        None => (l, None),
    };
    let key = ALIASES
        .iter()
        .find(|(a, _)| *a == key)
        .map_or(key, |(_, c)| c);
    (key, value)
}

/// Whether disktier reads the option `key` (the others are refused, or left to fio).
fn known(key: &str) -> bool {
    JOB_OPTIONS.contains(&key)
        || STRUCTURE.contains(&key)
        || IGNORED.contains(&key)
        || matches!(key, "filename" | "directory" | "name")
}

/// Every option name a job file may use, for the error message.
fn supported_list() -> String {
    let mut v: Vec<&str> = JOB_OPTIONS.to_vec();
    v.extend(STRUCTURE);
    v.extend(["filename", "directory", "description", "thread"]);
    v.join(", ")
}

/// Applies `[global]` sections to the jobs after them and assigns run sets and groups.
fn resolve(sections: Vec<RawSection>, source_name: &str) -> Result<JobFile, JobFileError> {
    let mut global: Vec<JobOption> = Vec::new();
    let mut jobs = Vec::new();
    let (mut run_set, mut group) = (0u32, 0u32);
    for s in sections {
        if s.name == "global" {
            for o in s.options {
                if o.key == "name" {
                    return Err(JobFileError::BadValue {
                        source_name: source_name.into(),
                        line: o.line,
                        key: o.key,
                        value: o.value.unwrap_or_default(),
                        fix: "a name belongs to a job section, not [global]".into(),
                    });
                }
                overlay(&mut global, o);
            }
            continue;
        }
        let mut all = global.clone();
        for o in s.options {
            overlay(&mut all, o);
        }
        let mut stonewall = false;
        let mut new_group = false;
        let mut group_reporting = false;
        let (mut filename, mut directory) = (None, None);
        let mut options = Vec::new();
        let mut name = s.name.clone();
        for o in all {
            match o.key.as_str() {
                "stonewall" => stonewall = flag(&o, source_name)?,
                "new_group" => new_group = flag(&o, source_name)?,
                "group_reporting" => group_reporting = flag(&o, source_name)?,
                "filename" | "directory" => {
                    let v = o.value.as_deref().unwrap_or("");
                    if v.is_empty() || v.contains(':') {
                        return Err(JobFileError::BadValue {
                            source_name: source_name.into(),
                            line: o.line,
                            key: o.key.clone(),
                            value: v.into(),
                            fix: "give one path (fio's `a:b` lists of files are not supported)"
                                .into(),
                        });
                    }
                    if o.key == "filename" {
                        filename = Some(o);
                    } else {
                        directory = Some(o);
                    }
                }
                "name" => match o.value.as_deref() {
                    Some(v) if valid_section_name(v) => name = v.to_string(),
                    v => {
                        return Err(JobFileError::BadValue {
                            source_name: source_name.into(),
                            line: o.line,
                            key: o.key.clone(),
                            value: v.unwrap_or("").into(),
                            fix: "use letters, digits, '-', '_' or '.'".into(),
                        })
                    }
                },
                k if IGNORED.contains(&k) => {}
                _ => options.push(o),
            }
        }
        let target = target_of(filename, directory, source_name)?;
        // fio: stonewall also starts a new reporting group; the first job starts group 0.
        if !jobs.is_empty() {
            if stonewall {
                run_set += 1;
                group += 1;
            } else if new_group {
                group += 1;
            }
        }
        jobs.push(FileJob {
            name,
            line: s.line,
            options,
            target,
            run_set,
            group,
            group_reporting,
        });
    }
    if jobs.is_empty() {
        return Err(JobFileError::NoJobs {
            source_name: source_name.into(),
        });
    }
    // fio reports a group as one when any of its jobs asks (group_reporting is usually global).
    let groups: Vec<u32> = jobs
        .iter()
        .filter(|j| j.group_reporting)
        .map(|j| j.group)
        .collect();
    for j in &mut jobs {
        j.group_reporting = groups.contains(&j.group);
    }
    Ok(JobFile { jobs })
}

/// A job's target from its `filename=` and `directory=`. fio puts the file in the directory
/// when both are given (`directory=/mnt/data` in `[global]`, `filename=test.dat` in the job is
/// `/mnt/data/test.dat`; QA: disktier measured `test.dat` in the current directory, another
/// disk), even an absolute one (`/mnt/data/dev/sdb`: fio makes the directories), which is
/// refused here as surely not what was meant.
fn target_of(
    filename: Option<JobOption>,
    directory: Option<JobOption>,
    source_name: &str,
) -> Result<Option<JobOption>, JobFileError> {
    let (Some(f), Some(d)) = (&filename, &directory) else {
        return Ok(filename.or(directory));
    };
    let (file, dir) = (
        f.value.as_deref().unwrap_or(""),
        d.value.as_deref().unwrap_or(""),
    );
    if file.starts_with('/') {
        return Err(JobFileError::BadValue {
            source_name: source_name.into(),
            line: f.line,
            key: f.key.clone(),
            value: file.into(),
            fix: format!("fio reads it under directory={dir} (line {}), as {}/{}: give a name relative to the directory, or drop directory=", d.line, dir.trim_end_matches('/'), file.trim_start_matches('/')),
        });
    }
    Ok(Some(JobOption {
        value: Some(format!("{}/{file}", dir.trim_end_matches('/'))),
        ..f.clone()
    }))
}

/// Sets `o` in `list`, replacing an earlier value of the same option in its place.
fn overlay(list: &mut Vec<JobOption>, o: JobOption) {
    match list.iter_mut().find(|x| x.key == o.key) {
        Some(x) => *x = o,
        None => list.push(o),
    }
}

#[path = "jobfile/env.rs"]
mod env;
use env::{expand_env, Env, Unexpanded};

#[path = "jobfile/refused.rs"]
mod refused;

#[cfg(test)]
#[path = "jobfile/tests.rs"]
mod tests;
