//! The Job's TTL (`--ttl`, `ttlSecondsAfterFinished`): the cluster's own cleanup of a finished
//! Job when the client died, bounded below so a pod outlives the reading of its result and
//! above by the field's int32.

use crate::error::{FleetError, Result};
use std::time::Duration;

/// The shortest `--ttl` (the Job's `ttlSecondsAfterFinished`) fleet accepts. The TTL
/// controller deletes a finished Job, and its pod with it, the TTL after the Job finished (5.3 s
/// for a TTL of 5 s on the test cluster), while the client reads the result from the pod's log
/// only after it has seen the container end: a watch event and one log request, well under a
/// second on an idle cluster, several seconds on a loaded API server or when many nodes of a
/// `--parallel` run end together (their logs are read one after another). A TTL of 0 lost one
/// run in three on the test cluster (QA). 60 s is more than ten times the slowest read seen,
/// and costs nothing: the client deletes each Job as soon as its result is in, so the TTL only
/// acts when the client died.
pub const MIN_TTL: Duration = Duration::from_secs(60);

/// The longest `--ttl`: the Job's `ttlSecondsAfterFinished` is an int32 (Kubernetes API
/// reference, Job v1 batch, JobSpec: "ttlSecondsAfterFinished (int32)",
/// https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/job-v1/), so
/// 2,147,483,647 s (about 68 years). A longer one was written as that maximum without a word.
pub const MAX_TTL: Duration = Duration::from_secs(i32::MAX as u64);

/// Refuses a `--ttl` below [`MIN_TTL`], which could delete a pod before its log is read, or
/// above [`MAX_TTL`], which the Job's int32 field cannot hold.
pub fn check_ttl(ttl: Duration) -> Result<()> {
    // ttlSecondsAfterFinished counts whole seconds, as activeDeadlineSeconds does for
    // --timeout: 59.5s was cut to 59 (and shown as `59s`, below the floor, in the refusal).
    if ttl.subsec_nanos() != 0 {
        return Err(FleetError::Invalid {
            what: "--ttl",
            value: format!("{ttl:?}"),
            why: format!(
                "a Job's ttlSecondsAfterFinished counts whole seconds: give a whole number of them, e.g. {}s",
                ttl.as_secs().max(MIN_TTL.as_secs())
            ),
        });
    }
    if ttl.as_secs() > MAX_TTL.as_secs() {
        return Err(FleetError::Invalid {
            what: "--ttl",
            value: format!("{}s", ttl.as_secs()),
            why: format!(
                "the Job's ttlSecondsAfterFinished is an int32: give at most {}s (about 68 years)",
                MAX_TTL.as_secs()
            ),
        });
    }
    if ttl < MIN_TTL {
        return Err(FleetError::Invalid {
            what: "--ttl",
            value: format!("{}s", ttl.as_secs()),
            why: format!(
                "the cluster could delete a finished pod before fleet reads its result from the log: give at least {}s (the client deletes each Job itself as soon as its result is in; the TTL only cleans up after a client that died)",
                MIN_TTL.as_secs()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_below_the_floor_is_refused() {
        for s in [0, 1, 59] {
            let e = check_ttl(Duration::from_secs(s)).unwrap_err().to_string();
            assert!(e.contains("--ttl") && e.contains("60s"), "{e}");
        }
        check_ttl(MIN_TTL).unwrap();
        check_ttl(Duration::from_secs(600)).unwrap();
    }

    /// QA: `fleet run --dry-run --ttl 100000d` (8,640,000,000 s) printed a Job with
    /// `ttlSecondsAfterFinished: 2147483647`, the int32's maximum, without a word.
    #[test]
    fn a_ttl_past_the_jobs_int32_is_refused_naming_the_maximum() {
        check_ttl(MAX_TTL).unwrap();
        for s in [i32::MAX as u64 + 1, 8_640_000_000, 1_000_000_000_000] {
            let e = check_ttl(Duration::from_secs(s)).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--ttl `{s}s`")) && e.contains("at most 2147483647s"),
                "{e}"
            );
        }
    }

    /// QA: `--ttl 59.5s` was refused as `--ttl 59s` (the floor's message about a whole number
    /// it was not given) and `--ttl 90.5s` written as 90 without a word.
    #[test]
    fn a_ttl_that_is_not_whole_seconds_is_refused() {
        for (ms, shown, fix) in [(59_500, "59.5s", "60s"), (90_500, "90.5s", "90s")] {
            let e = check_ttl(Duration::from_millis(ms))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("--ttl `{shown}`"))
                    && e.contains("whole seconds")
                    && e.ends_with(fix),
                "{e}"
            );
        }
    }
}
