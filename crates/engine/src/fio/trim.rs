//! fio's trim figures (`rw=trim`, `randtrim`, `trimwrite`): disktier's result has reads,
//! writes and syncs but no trim direction, so both imports (`import fio` of the JSON's `trim`
//! object, `import fio-text` of its `trim:` block) leave them out of the figures, count their
//! run time as fio does, and say so in the same words.

/// The warning for a job that trimmed `trims` times; `None` when it trimmed nothing.
pub(crate) fn warning(trims: u64) -> Option<String> {
    (trims > 0).then(|| {
        format!(
            "fio trimmed {trims} time(s) in this job: disktier's result has no trim direction, so the trims are not in its counts, rates or latencies (its run time includes them); fio's rw is kept in the job's fio_options"
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_job_that_trimmed_is_told() {
        assert_eq!(super::warning(0), None);
        let w = super::warning(27715).unwrap();
        assert!(w.starts_with("fio trimmed 27715 time(s)"), "{w}");
    }
}
