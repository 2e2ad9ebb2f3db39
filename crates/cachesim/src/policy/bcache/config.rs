//! bcache's tunables as the model takes them: sysfs `cache_mode`, the bucket size and the
//! writeback knobs, with the kernel's defaults.

use crate::TraceError;
use serde::Serialize;

/// bcache's `cache_mode` values (sysfs `cache_mode`; default writethrough).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    Writethrough,
    Writeback,
    Writearound,
}

impl CacheMode {
    /// The mode as sysfs `cache_mode` and lvm's `cache_mode` spell it.
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Writethrough => "writethrough",
            CacheMode::Writeback => "writeback",
            CacheMode::Writearound => "writearound",
        }
    }

    pub fn from_name(s: &str) -> Result<CacheMode, TraceError> {
        match s {
            "writethrough" => Ok(CacheMode::Writethrough),
            "writeback" => Ok(CacheMode::Writeback),
            "writearound" => Ok(CacheMode::Writearound),
            _ => Err(TraceError::Invalid {
                what: "cache mode",
                why: format!("{s:?}: use writethrough, writeback or writearound"),
            }),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BcacheConfig {
    pub mode: CacheMode,
    /// make-bcache's default bucket size: 1024 sectors (512 KiB).
    pub bucket_size: u64,
    /// bcache.rst: "sequential_cutoff ... default 4 MB"; 0 disables.
    pub sequential_cutoff: u64,
    /// bcache.rst: `writeback_percent`, default 10.
    pub writeback_percent: u32,
    /// writeback.h CUTOFF_WRITEBACK.
    pub cutoff_writeback: u32,
    /// writeback.h CUTOFF_WRITEBACK_SYNC.
    pub cutoff_writeback_sync: u32,
    /// The backing device's write bandwidth available to writeback (bytes/s); `None` = no cap.
    pub drain_limit: Option<u64>,
}

impl Default for BcacheConfig {
    fn default() -> Self {
        BcacheConfig {
            mode: CacheMode::Writethrough,
            bucket_size: 512 << 10,
            sequential_cutoff: 4 << 20,
            writeback_percent: 10,
            cutoff_writeback: 40,
            cutoff_writeback_sync: 70,
            drain_limit: None,
        }
    }
}

impl BcacheConfig {
    /// The bucket the model uses with blocks of `block` bytes: `bucket_size`, or one block when
    /// that is larger (a bucket holds whole blocks).
    pub fn bucket_for(&self, block: u64) -> u64 {
        self.bucket_size.max(block)
    }

    pub fn check(&self) -> Result<(), TraceError> {
        if self.bucket_size < 4096 || !self.bucket_size.is_power_of_two() {
            return Err(TraceError::Invalid {
                what: "--bcache-bucket",
                why: format!(
                    "{} is not a power of two of at least 4 KiB; make-bcache's default is 512k",
                    self.bucket_size
                ),
            });
        }
        if self.writeback_percent > 100 {
            return Err(TraceError::Invalid {
                what: "--writeback-percent",
                why: format!(
                    "{} is over 100 (bcache's writeback_percent is a share of the cache, default 10)",
                    self.writeback_percent
                ),
            });
        }
        Ok(())
    }
}
