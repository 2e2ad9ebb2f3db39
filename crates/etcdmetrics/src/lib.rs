//! The truth from a live etcd: scrape members' `/metrics` (plain HTTP or TLS), compute the WAL
//! fsync and backend commit p99 from etcd's own histograms as Prometheus' `histogram_quantile`
//! does, and judge them (and etcd's leader-change, heartbeat-failure and slow-apply counters) in
//! the same verdict form as `check etcd`.

pub mod error;
pub mod etcd;
pub mod expo;
pub mod fetch;
pub mod quantile;

pub use error::Error;
pub use etcd::{as_etcd_disk_histogram, judge, Judged, MemberReport, Scrape, DISK_BUCKETS_S};
pub use fetch::{Client, TlsFiles};
pub use quantile::{Histogram, Quantile};
