//! Assess's options as typed, checked into a [`Request`]: the report file, the profiles of
//! `--only`, and the targets (the current directory by default), each an existing directory,
//! canonicalised and de-duplicated. The checks run in this order, so the first bad option is
//! the one named.

use super::{all_local, Request, SUITE};
use crate::app::measure::Tool;
use anyhow::{bail, Context};
use disktier_engine::Profile;
use std::path::PathBuf;

/// What the user asked `assess` for, unchecked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directories on the filesystems to assess (empty: the current directory).
    pub paths: Vec<PathBuf>,
    /// Every writable local filesystem, and every eligible disk (`--all-local`).
    pub all_local: bool,
    /// The full profiles instead of the quick suite.
    pub full: bool,
    /// Only these profiles, by name (empty: the whole suite).
    pub only: Vec<String>,
    /// Where the HTML report goes (`--report`).
    pub report: PathBuf,
    /// Write no report (`--no-report`).
    pub no_report: bool,
    /// What runs the profiles.
    pub tool: Tool,
}

impl Options {
    /// The request these options describe, or the first option that is wrong.
    pub fn check(self) -> anyhow::Result<Request> {
        if !self.no_report && self.report.as_os_str() == "-" {
            // `report -o -` prints the HTML; here it would interleave with the table.
            bail!("--report - would write the HTML into assess's own output on standard output: pass a file, or --no-report and `disktier report -o -` afterwards");
        }
        if !self.no_report {
            // Refused before minutes of measuring, not after (QA: a --report in a directory
            // that does not exist failed the assessment at its end, with exit 2).
            crate::app::report::check_destination(&self.report, "--report")?;
        }
        let profiles = profiles(&self.only)?;
        let mut skipped = Vec::new();
        let raw = if self.all_local {
            let (dirs, s) = all_local()?;
            skipped = s;
            dirs
        } else if self.paths.is_empty() {
            vec![std::env::current_dir()
                .context("cannot read the current directory: pass a PATH")?]
        } else {
            self.paths
        };
        Ok(Request {
            targets: targets(raw)?,
            skipped,
            profiles,
            quick: !self.full,
            lenient: self.all_local,
            tool: self.tool,
            report: (!self.no_report).then_some(self.report),
        })
    }
}

/// The profiles `--only` names (trimmed), in its order, each once; the whole suite when it
/// names none.
fn profiles(only: &[String]) -> anyhow::Result<Vec<Profile>> {
    let mut profiles = Vec::new();
    for name in only {
        let p = Profile::from_name(name.trim()).with_context(|| {
            format!(
                "--only {name}: no such profile; choose from {}",
                SUITE
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        // Named twice, run once (QA: `--only etcd,etcd` ran and saved it twice, showed it once).
        if !profiles.contains(&p) {
            profiles.push(p);
        }
    }
    if profiles.is_empty() {
        profiles = SUITE.to_vec();
    }
    Ok(profiles)
}

/// Each path an existing directory (never a block device: assess does not write raw),
/// canonicalised; a directory given twice is assessed once, where it first appears.
fn targets(raw: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    let mut targets = Vec::new();
    for p in raw {
        let meta = std::fs::metadata(&p).with_context(|| {
            format!(
                "{}: cannot assess a path that does not exist: give a directory on the disk",
                p.display()
            )
        })?;
        if !meta.is_dir() {
            use std::os::unix::fs::FileTypeExt;
            if meta.file_type().is_block_device() {
                bail!("{} is a block device: assess never writes to raw devices; mount a filesystem on it (disktier setup) and give its directory, or use disktier bench --destructive", p.display());
            }
            bail!(
                "{} is not a directory: give a directory on the filesystem to assess",
                p.display()
            );
        }
        let canon = p
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", p.display()))?;
        if !targets.contains(&canon) {
            targets.push(canon);
        }
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(paths: Vec<PathBuf>) -> Options {
        Options {
            paths,
            all_local: false,
            full: false,
            only: Vec::new(),
            report: "disktier-report.html".into(),
            no_report: false,
            tool: Tool::Native,
        }
    }

    fn err(o: Options) -> String {
        format!("{:#}", o.check().err().expect("refused"))
    }

    #[test]
    fn report_to_stdout_is_refused_first_unless_no_report() {
        let mut o = opts(vec!["/nonexistent/x".into()]);
        o.only = vec!["nosuch".into()];
        o.report = "-".into();
        assert!(err(o.clone()).starts_with("--report - would write the HTML"));
        o.no_report = true;
        // Then --only is checked before the paths.
        assert!(err(o).starts_with("--only nosuch: no such profile; choose from etcd, read-iops"));
    }

    #[test]
    fn only_names_profiles_trimmed_in_order_and_defaults_to_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(vec![dir.path().into()]);
        assert_eq!(o.clone().check().unwrap().profiles, SUITE.to_vec());
        o.only = vec![" latency".into(), "etcd".into(), "latency".into()];
        let r = o.check().unwrap();
        assert_eq!(r.profiles, vec![Profile::Latency, Profile::Etcd]);
        assert!(r.quick && !r.lenient);
        assert_eq!(r.report, Some(PathBuf::from("disktier-report.html")));
    }

    #[test]
    fn targets_must_be_directories_and_are_canonical_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        let canon = dir.path().canonicalize().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut o = opts(vec![
            dir.path().join("sub/.."),
            sub.clone(),
            dir.path().into(),
        ]);
        o.no_report = true;
        o.full = true;
        let r = o.check().unwrap();
        assert_eq!(r.targets, vec![canon.clone(), canon.join("sub")]);
        assert_eq!(r.report, None);
        assert!(!r.quick);

        let missing = dir.path().join("missing");
        assert_eq!(
            err(opts(vec![missing.clone()])),
            format!(
                "{}: cannot assess a path that does not exist: give a directory on the disk: No such file or directory (os error 2)",
                missing.display()
            )
        );
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(
            err(opts(vec![file.clone()])),
            format!(
                "{} is not a directory: give a directory on the filesystem to assess",
                file.display()
            )
        );
    }

    /// Regression (QA): a --report in a directory that does not exist (or a directory, or a
    /// file that is no report) failed the assessment at its end, after every profile ran.
    #[test]
    fn a_report_that_cannot_be_written_is_refused_before_measuring() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(vec![dir.path().into()]);
        o.report = dir.path().join("missing/r.html");
        let e = err(o.clone());
        assert!(
            e.ends_with("missing does not exist; create it, or pass another --report"),
            "{e}"
        );
        o.report = dir.path().into();
        let e = err(o.clone());
        assert!(
            e.ends_with("is not a regular file: pass another --report"),
            "{e}"
        );
        let store = dir.path().join("results.db");
        std::fs::write(&store, "SQLite format 3").unwrap();
        o.report = store;
        let e = err(o.clone());
        assert!(
            e.contains("is not a disktier report") && e.contains("pass another --report"),
            "{e}"
        );
        o.no_report = true;
        assert!(o.check().is_ok());
    }

    #[test]
    fn no_path_is_the_current_directory() {
        let r = opts(Vec::new()).check().unwrap();
        assert_eq!(
            r.targets,
            vec![std::env::current_dir().unwrap().canonicalize().unwrap()]
        );
    }
}
