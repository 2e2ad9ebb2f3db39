//! I/O priorities (`ioprio_set(2)` / `ioprio_get(2)`), what `ionice` sets: the aggressor gets the
//! idle class or best-effort level 7, and we read it back from every thread of the process.
//!
//! Constants from `include/uapi/linux/ioprio.h` (and the ioprio_set(2) man page): the class sits
//! above bit 13, `IOPRIO_WHO_PROCESS` = 1 addresses one thread (a tid; a pid is its main thread),
//! and new threads inherit the priority of the thread that creates them.

use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};

const IOPRIO_CLASS_SHIFT: i32 = 13;
const IOPRIO_WHO_PROCESS: i32 = 1;

/// An I/O scheduling class with its level (0 highest .. 7 lowest; only RT and BE have levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoPrio {
    /// No priority set: the kernel derives best-effort from the CPU nice value.
    None,
    Realtime(u8),
    BestEffort(u8),
    Idle,
}

impl IoPrio {
    /// The raw value the syscalls take: `class << 13 | level`.
    pub fn raw(self) -> i32 {
        match self {
            IoPrio::None => 0,
            IoPrio::Realtime(l) => (1 << IOPRIO_CLASS_SHIFT) | l as i32,
            IoPrio::BestEffort(l) => (2 << IOPRIO_CLASS_SHIFT) | l as i32,
            IoPrio::Idle => 3 << IOPRIO_CLASS_SHIFT,
        }
    }

    pub fn from_raw(v: i32) -> IoPrio {
        let level = (v & ((1 << IOPRIO_CLASS_SHIFT) - 1)) as u8;
        match v >> IOPRIO_CLASS_SHIFT {
            1 => IoPrio::Realtime(level),
            2 => IoPrio::BestEffort(level),
            3 => IoPrio::Idle,
            _ => IoPrio::None,
        }
    }
}

impl std::fmt::Display for IoPrio {
    /// As `ionice -p` prints it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoPrio::None => write!(f, "none"),
            IoPrio::Realtime(l) => write!(f, "realtime: prio {l}"),
            IoPrio::BestEffort(l) => write!(f, "best-effort: prio {l}"),
            IoPrio::Idle => write!(f, "idle"),
        }
    }
}

/// Sets the I/O priority of one thread (`tid`; a pid addresses the main thread).
pub fn set(tid: i32, prio: IoPrio) -> Result<()> {
    let r = crate::sys::int_syscall3(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid, prio.raw());
    if r < 0 {
        return Err(InterfereError::Syscall {
            what: "ioprio_set",
            pid: tid,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Reads the I/O priority of one thread.
pub fn get(tid: i32) -> Result<IoPrio> {
    let r = crate::sys::int_syscall3(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid, 0);
    if r < 0 {
        return Err(InterfereError::Syscall {
            what: "ioprio_get",
            pid: tid,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(IoPrio::from_raw(r as i32))
}

/// Sets the priority on every thread of process `pid` (threads created later inherit it).
pub fn set_process(pid: i32, prio: IoPrio) -> Result<()> {
    for tid in threads(pid) {
        set(tid, prio)?;
    }
    Ok(())
}

/// Reads back every thread of `pid`; returns the priority when they all agree, else the first
/// thread that differs as an error.
pub fn get_process(pid: i32) -> Result<Vec<(i32, IoPrio)>> {
    threads(pid)
        .into_iter()
        .map(|tid| get(tid).map(|p| (tid, p)))
        .collect()
}

/// The thread ids of a process, from `/proc/<pid>/task`; just the pid when that is unreadable.
pub fn threads(pid: i32) -> Vec<i32> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if tids.is_empty() {
        tids.push(pid);
    }
    tids.sort_unstable();
    tids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trips() {
        for p in [
            IoPrio::Idle,
            IoPrio::BestEffort(7),
            IoPrio::BestEffort(0),
            IoPrio::Realtime(3),
        ] {
            assert_eq!(IoPrio::from_raw(p.raw()), p);
        }
        assert_eq!(IoPrio::Idle.raw(), 0x6000);
        assert_eq!(IoPrio::BestEffort(7).raw(), 0x4007);
    }

    #[test]
    fn set_and_read_back_on_a_child() {
        // Lowering one's own class needs no privilege, so this runs as any user.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        set_process(pid, IoPrio::BestEffort(7)).unwrap();
        let got = get_process(pid).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            got.iter().all(|(_, p)| *p == IoPrio::BestEffort(7)),
            "{got:?}"
        );
    }
}
