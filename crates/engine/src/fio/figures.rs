//! Whether fio's JSON holds any figures: a job fio could not run (its `error` set, nothing
//! read, written, synced or trimmed) is no result, in `import fio` as in `import fio-text`.

use super::value::int;
use super::FioError;
use serde_json::Value;

/// Whether job `j` of fio's JSON read, wrote, synced or trimmed anything. A trim's
/// `total_ios` counts the trims issued, which a job fio could not run (trim on a regular file,
/// `err=25`) also has: its bytes say whether any completed.
pub(super) fn has_figures(j: &Value) -> bool {
    ["read", "write"]
        .iter()
        .any(|d| int(&j[*d], "total_ios") > 0 || int(&j[*d], "io_bytes") > 0)
        || int(&j["trim"], "io_bytes") > 0
        || int(&j["sync"], "total_ios") > 0
        || int(&j["sync"]["lat_ns"], "N") > 0
}

pub(super) fn no_figures(v: &Value, index: usize, source_name: &str) -> FioError {
    let j = &v["jobs"][index];
    FioError::NoFigures {
        source_name: source_name.into(),
        index,
        name: j
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        error: int(j, "error"),
    }
}

/// `import fio --jobs`: refuses fio's JSON `v` when none of its jobs has figures (each job fio
/// could not run beside others is kept, its error a warning), naming the first job's error.
pub fn check_any_figures(v: &Value, source_name: &str) -> Result<(), FioError> {
    let jobs = v.get("jobs").and_then(Value::as_array);
    if jobs.is_some_and(|j| !j.is_empty() && !j.iter().any(has_figures)) {
        return Err(no_figures(v, 0, source_name));
    }
    Ok(())
}
