//! The report's error.

use super::charts::ChartError;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("nothing to report: no runs were selected (run `disktier assess` or `disktier bench` first, or list runs with `disktier history`)")]
    Empty,
    #[error(transparent)]
    Chart(#[from] ChartError),
}
