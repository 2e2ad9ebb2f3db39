//! The advice's two spellings, and every engine message pinned in the command line's: the
//! messages were `#[error]` strings until the advice became typed, and must read as they did.

use super::OptionName::{Direct, Nrfiles, RampTime, Size, TimeBased};
use super::*;
use crate::error::EngineError;

#[test]
fn each_word_is_spelled_as_the_caller_spells_options() {
    let a = crate::advice![
        Pass,
        " a smaller ",
        Size,
        " (e.g. ",
        Size.with("1G"),
        "), ",
        Direct.with(false),
        ", ",
        TimeBased.with(true),
        ", ",
        Nrfiles.with(5u64),
        " or drop ",
        RampTime,
    ];
    assert_eq!(
        a.render(Spelling::CommandLine),
        "pass a smaller --size (e.g. --size 1G), --direct=false, --time-based=true, --nrfiles 5 or drop --ramp-time"
    );
    assert_eq!(a.to_string(), a.render(Spelling::CommandLine));
    assert_eq!(
        a.render(Spelling::JobFile),
        "set a smaller size= (e.g. size=1G), direct=0, time_based=1, nrfiles=5 or drop ramp_time="
    );
    // Text is text: a `--NAME` in it (a path, the command's own --destructive) is kept.
    let t = Advice::from("pass --destructive, or rename /mnt/--size");
    assert_eq!(
        t.render(Spelling::JobFile),
        "pass --destructive, or rename /mnt/--size"
    );
}

/// Every variant's message as it read before the advice was typed (its `#[error]` string), and
/// in a job file's spelling.
#[test]
fn every_message_reads_as_before_on_the_command_line() {
    let p = || std::path::PathBuf::from("/p");
    let cases: Vec<(EngineError, &str, &str)> = vec![
        (
            EngineError::BadOption { option: "bs", value: "2300".into(), fix: "F".into() },
            "bs=2300 is not valid: F",
            "bs=2300 is not valid: F",
        ),
        (
            EngineError::MissingPath { path: p() },
            "/p does not exist: create it or pick an existing file, directory or block device",
            "/p does not exist: create it or pick an existing file, directory or block device",
        ),
        (
            EngineError::MissingDirectory { path: p(), wanted: "w" },
            "/p does not exist, but w: create it first (mkdir -p /p) on the filesystem to test",
            "/p does not exist, but w: create it first (mkdir -p /p) on the filesystem to test",
        ),
        (
            EngineError::NoPermission { path: p(), access: "write", root: false },
            "/p: no permission: run as a user that may write it (e.g. with sudo)",
            "/p: no permission: run as a user that may write it (e.g. with sudo)",
        ),
        (
            EngineError::ReadOnlyFs { path: p(), access: "write" },
            "/p is on a read-only filesystem: this job would write it; remount it read-write (mount -o remount,rw) or pick a directory on a writable filesystem",
            "/p is on a read-only filesystem: this job would write it; remount it read-write (mount -o remount,rw) or pick a directory on a writable filesystem",
        ),
        (
            EngineError::DeviceReadOnly { path: p() },
            "/p is a read-only block device (its sysfs ro flag is 1, e.g. losetup -r or a write-protected disk): a write job cannot run on it; run a read job, or make the device writable (a loop device: set it up again without losetup -r)",
            "/p is a read-only block device (its sysfs ro flag is 1, e.g. losetup -r or a write-protected disk): a write job cannot run on it; run a read job, or make the device writable (a loop device: set it up again without losetup -r)",
        ),
        (
            EngineError::DirectUnsupported { path: p(), fs: "tmpfs".into() },
            "/p is on tmpfs, which has no O_DIRECT: pass --direct=false",
            "/p is on tmpfs, which has no O_DIRECT: set direct=0",
        ),
        (
            EngineError::DirectAlignment { path: p(), option: "bs", value: 2300, align: 512 },
            "bs=2300 is not a multiple of 512 bytes, which O_DIRECT on /p needs: use a multiple of 512 or pass --direct=false",
            "bs=2300 is not a multiple of 512 bytes, which O_DIRECT on /p needs: use a multiple of 512 or set direct=0",
        ),
        (
            EngineError::DeviceHasSignature { path: p(), what: "xfs".into() },
            "/p holds xfs: a write job would destroy it; pick an empty device or pass --destructive",
            "/p holds xfs: a write job would destroy it; pick an empty device or pass --destructive",
        ),
        (
            EngineError::DeviceHasPartitions { path: p(), table: "a gpt" },
            "/p has a gpt partition table: a write job would destroy it; pick an empty device or pass --destructive",
            "/p has a gpt partition table: a write job would destroy it; pick an empty device or pass --destructive",
        ),
        (
            EngineError::DeviceMounted { path: p(), mountpoint: "/mnt".into() },
            "/p is mounted on /mnt: a write job would corrupt it; unmount it first (and pass --destructive) or bench the mounted directory instead",
            "/p is mounted on /mnt: a write job would corrupt it; unmount it first (and pass --destructive) or bench the mounted directory instead",
        ),
        (
            EngineError::DeviceHasHolders { path: p(), holders: "dm-0".into() },
            "/p is in use by dm-0: a write job would destroy their data; pick a free device or pass --destructive",
            "/p is in use by dm-0: a write job would destroy their data; pick a free device or pass --destructive",
        ),
        (
            EngineError::ExistingFile { path: "/d/j.0.0".into(), len: 7, why: "is a write job" },
            "/d/j.0.0 already exists (7 bytes) and this is a write job: pass --destructive to let disktier overwrite it, or pick a path that does not exist yet (disktier then creates and removes it); its name is the kind disktier gives the files it lays out (JOB.N.M): a disktier run killed before it removed them, or one with --keep-files, may have left it; if so, remove it",
            "/d/j.0.0 already exists (7 bytes) and this is a write job: pass --destructive to let disktier overwrite it, or pick a path that does not exist yet (disktier then creates and removes it); its name is the kind disktier gives the files it lays out (JOB.N.M): a disktier run killed before it removed them, or one with --keep-files, may have left it; if so, remove it",
        ),
        (
            EngineError::FileInUse { path: p(), by: "pid 1 (x)".into() },
            "/p is open in another process now (pid 1 (x)), most likely another disktier run on this directory: two runs at once would measure each other; wait for it to end, or measure another directory",
            "/p is open in another process now (pid 1 (x)), most likely another disktier run on this directory: two runs at once would measure each other; wait for it to end, or measure another directory",
        ),
        (
            EngineError::DiskFull { path: p(), op: "write", reason: std::io::Error::from_raw_os_error(28) },
            "/p: the filesystem is full (write failed with No space left on device (os error 28)); the files disktier created were removed: free some space or pass a smaller --size",
            "/p: the filesystem is full (write failed with No space left on device (os error 28)); the files disktier created were removed: free some space or set a smaller size=",
        ),
        (
            EngineError::DeviceBusy { path: p() },
            "/p is busy (opened exclusively by another program, e.g. mounted or in use by LVM/md): free it first",
            "/p is busy (opened exclusively by another program, e.g. mounted or in use by LVM/md): free it first",
        ),
        (
            EngineError::NoSpace { path: p(), need: 9, free: 3, fix: "F".into() },
            "/p needs 9 bytes but its filesystem has only 3 bytes free: F",
            "/p needs 9 bytes but its filesystem has only 3 bytes free: F",
        ),
        (
            EngineError::PseudoFs { path: p(), fs: "tmpfs".into() },
            "/p is on tmpfs, a kernel pseudo-filesystem that no disk is behind: measure a directory on the disk instead (where the data lives, e.g. /var/lib/etcd), a file there, or a block device",
            "/p is on tmpfs, a kernel pseudo-filesystem that no disk is behind: measure a directory on the disk instead (where the data lives, e.g. /var/lib/etcd), a file there, or a block device",
        ),
        (
            EngineError::SizeRequired { path: p() },
            "/p does not exist yet and no size was given: pass --size (e.g. --size 1G)",
            "/p does not exist yet and no size was given: set size= (e.g. size=1G)",
        ),
        (
            EngineError::DirectorySizeRequired { path: p() },
            "/p is a directory: disktier creates a file per job in it (<name>.<jobnum>.0), which needs a size: pass --size (e.g. --size 1G)",
            "/p is a directory: disktier creates a file per job in it (<name>.<jobnum>.0), which needs a size: set size= (e.g. size=1G)",
        ),
        (
            EngineError::WrongKind { path: p(), is: "file", wanted: "w".into(), fix: "F".into() },
            "/p is a file, but w: F",
            "/p is a file, but w: F",
        ),
        (
            EngineError::EmptyRegion { path: p(), len: 7, offset: 8, fix: "F".into() },
            "/p is 7 bytes, so offset 8 leaves nothing to do: F",
            "/p is 7 bytes, so offset 8 leaves nothing to do: F",
        ),
        (
            EngineError::Io { path: p(), op: "write", source: std::io::Error::from_raw_os_error(28) },
            "/p: write failed",
            "/p: write failed",
        ),
        (
            EngineError::UringUnavailable { reason: "r".into() },
            "io_uring is unavailable: r",
            "io_uring is unavailable: r",
        ),
        (
            EngineError::WorkerPanicked(3),
            "worker thread 3 panicked",
            "worker thread 3 panicked",
        ),
    ];
    for (e, command_line, job_file) in cases {
        assert_eq!(e.to_string(), command_line);
        assert_eq!(e.render(Spelling::CommandLine), command_line);
        assert_eq!(e.render(Spelling::JobFile), job_file);
    }
}

/// fio's time limit's advice: as it read on the command line, in a job file's words.
#[test]
fn fios_time_limit_is_spelled_as_the_caller_spells_options() {
    let e = crate::fio::FioError::Timeout {
        after: std::time::Duration::from_secs(70),
    };
    let head = "fio ran for more than 70s, its time limit for this job (runtime, ramp and layout plus a margin), and was killed: check that the target is not hung (dmesg), or ";
    assert_eq!(
        e.to_string(),
        format!("{head}pass a shorter --runtime or smaller --size")
    );
    assert_eq!(
        e.render(Spelling::JobFile),
        format!("{head}set a shorter runtime= or smaller size=")
    );
}
