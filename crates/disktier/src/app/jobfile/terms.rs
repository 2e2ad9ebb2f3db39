//! An engine error about a job of a job file, in the file's own words. The engine names the job
//! options it advises about as typed values ([`disktier_engine::advice`]), which the command
//! line spells `pass --size (e.g. --size 1G)` and `pass --direct=false`, and a job file `set
//! size= (e.g. size=1G)` and `set direct=0` (QA: a job file whose target had too little room
//! was told to pass "a smaller --size"). Options of the command itself (`--destructive`,
//! `--engine`) keep their names: they are given on the command line with a job file too.

use disktier_engine::{Render, Spelling};

/// An engine error (an `EngineError`, or fio's `FioError`) shown in the job file's spelling;
/// the engine's error stays inside, typed (its cause, such as the OS error of an `Io`, is this
/// error's cause).
#[derive(Debug)]
pub struct InFileTerms<E>(pub E);

impl<E: Render> std::fmt::Display for InFileTerms<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.render(Spelling::JobFile))
    }
}

impl<E: Render + std::error::Error> std::error::Error for InFileTerms<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::InFileTerms;
    use disktier_engine::fio::FioError;
    use disktier_engine::EngineError;

    fn in_file(e: EngineError) -> String {
        InFileTerms(e).to_string()
    }

    #[test]
    fn job_options_are_written_as_the_file_writes_them() {
        let e = EngineError::NoSpace {
            path: "x".into(),
            need: 5,
            free: 1,
            fix: disktier_engine::advice![
                disktier_engine::advice::Pass,
                " a smaller ",
                disktier_engine::OptionName::Size,
                " or pick another target"
            ],
        };
        assert_eq!(
            in_file(e),
            "x needs 5 bytes but its filesystem has only 1 bytes free: set a smaller size= or pick another target"
        );
        let e = EngineError::SizeRequired { path: "x".into() };
        assert_eq!(
            in_file(e),
            "x does not exist yet and no size was given: set size= (e.g. size=1G)"
        );
        let e = EngineError::DirectUnsupported {
            path: "/dev/shm/x".into(),
            fs: "tmpfs".into(),
        };
        assert_eq!(
            in_file(e),
            "/dev/shm/x is on tmpfs, which has no O_DIRECT: set direct=0"
        );
        let e = FioError::Timeout {
            after: std::time::Duration::from_secs(70),
        };
        assert!(
            e.to_string()
                .ends_with("(dmesg), or pass a shorter --runtime or smaller --size"),
            "{e}"
        );
        assert!(
            InFileTerms(e)
                .to_string()
                .ends_with("(dmesg), or set a shorter runtime= or smaller size="),
            "the file's words"
        );
        let ramp = disktier_engine::advice!["drop ", disktier_engine::OptionName::RampTime];
        assert_eq!(
            ramp.render(disktier_engine::Spelling::JobFile),
            "drop ramp_time="
        );
    }

    /// The old text rewrite changed any `--NAME` in the message: a path holding `--size` became
    /// `size=`. Now only what the engine names as an option is spelled the file's way.
    #[test]
    fn the_commands_own_options_and_other_text_are_kept() {
        let e = EngineError::DeviceHasSignature {
            path: "/dev/loop9".into(),
            what: "an xfs filesystem".into(),
        };
        assert_eq!(
            in_file(e),
            "/dev/loop9 holds an xfs filesystem: a write job would destroy it; pick an empty device or pass --destructive"
        );
        let e = EngineError::SizeRequired {
            path: "/mnt/a --size 5 b/--direct=false".into(),
        };
        assert_eq!(
            in_file(e),
            "/mnt/a --size 5 b/--direct=false does not exist yet and no size was given: set size= (e.g. size=1G)"
        );
        let e = EngineError::MissingPath {
            path: "/mnt/--offset".into(),
        };
        assert!(in_file(e).starts_with("/mnt/--offset does not exist"));
        for t in [
            "run it through fio with --engine fio",
            "a -- b --, --9 and --Size",
            "ends with --",
        ] {
            let a = disktier_engine::Advice::from(t);
            assert_eq!(a.render(disktier_engine::Spelling::JobFile), t);
        }
    }
}
