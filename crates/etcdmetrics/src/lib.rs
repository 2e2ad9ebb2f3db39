//! The truth from a live etcd: scrape members' `/metrics` (plain HTTP or TLS), compute the WAL
//! fsync and backend commit p99 from etcd's own histograms as Prometheus' `histogram_quantile`
//! does, and judge them (and etcd's leader-change, heartbeat-failure and slow-apply counters) in
//! the same verdict form as `check etcd`.

pub mod buckets;
pub mod error;
pub mod etcd;
pub mod expo;
pub mod fetch;
pub mod quantile;

pub use buckets::{as_etcd_disk_histogram, DISK_BUCKETS_S};
pub use error::Error;
pub use etcd::{judge, Judged, MemberReport, Scrape};
pub use fetch::{member_urls, redacted, Client, TlsFiles};
pub use quantile::{Histogram, Quantile};
