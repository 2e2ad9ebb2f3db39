//! What the user recipes measured on a machine type's local SSDs, so that `plan` can say where a
//! recipe saw less than the catalog's per-disk figures (which the performance page reaches only
//! with enough vCPUs, [gcp-disk-performance]).

/// A recipe's fio runs on `count` local SSDs of `machine`.
#[derive(Debug, Clone, Copy)]
pub struct MeasuredLocalSsd {
    pub machine: &'static str,
    pub count: u32,
    /// Google's IOPS jobs: fio randwrite / randread, 4 KiB, iodepth 256, 60 s.
    pub write_iops: u64,
    pub read_iops: u64,
    /// Google's throughput jobs: fio write / read, 1 MiB, 16 jobs, iodepth 64, 60 s: MiB/s.
    pub write_mibs: u64,
    pub read_mibs: u64,
    /// The recipe and what it ran, in words.
    pub source: &'static str,
}

/// The runs checked.
pub const MEASURED_LOCAL_SSD: &[MeasuredLocalSsd] = &[MeasuredLocalSsd {
    machine: "n1-standard-2",
    count: 1,
    // "write: IOPS=45.2k, BW=177MiB/s" and "read: IOPS=180k, BW=702MiB/s".
    write_iops: 45_200,
    read_iops: 180_000,
    // "write: IOPS=382, BW=398MiB/s" and "read: IOPS=686, BW=703MiB/s".
    write_mibs: 398,
    read_mibs: 703,
    source: "the GKE local-SSD recipe [recipe-gke-local-ssd] (asia-east1-a, 2023-09-14: fio on the local SSD's emptyDir, 60 s each: 4 KiB randwrite / randread at iodepth 256, 1 MiB write / read in 16 jobs at iodepth 64)",
}];

/// The recipe run on `count` local SSDs of `machine`, if there is one.
pub fn local_ssd(machine: &str, count: u32) -> Option<&'static MeasuredLocalSsd> {
    MEASURED_LOCAL_SSD
        .iter()
        .find(|m| m.machine == machine && m.count == count)
}
