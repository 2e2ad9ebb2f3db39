//! The few raw system calls the engine makes without a safe wrapper in std or rustix:
//! getrusage(2) for the process CPU time. Kept here, beside the io_uring backend, so that every
//! `unsafe` block of the engine lives under `src/uring/`.

use std::mem::MaybeUninit;

/// User and system CPU seconds of the whole process (all threads) so far.
pub fn cpu_times() -> (f64, f64) {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // Safety: getrusage writes a complete `struct rusage` into the pointer it is given, which
    // points to memory of that type owned by this frame; RUSAGE_SELF is always valid.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if r != 0 {
        return (0.0, 0.0);
    }
    // Safety: the call succeeded, so the struct is initialised (it was zeroed before, too).
    let ru = unsafe { ru.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let (u0, s0) = super::cpu_times();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (u1, s1) = super::cpu_times();
        assert!(u1 + s1 > u0 + s0);
    }
}
