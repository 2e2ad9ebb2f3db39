//! Facts about the machine a run happened on: hostname, kernel, CPUs, and the cloud and instance
//! type when DMI tells them (`/sys/class/dmi/id/sys_vendor`, `product_name`; EC2 Nitro puts the
//! instance type in `product_name`, GCE puts "Google Compute Engine", Azure "Virtual Machine"),
//! and how idle CPUs wait (cpuidle; a KVM guest's halt-polling window).

use crate::result::{CpuIdle, HostInfo};
use std::path::Path;

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Reads host facts, with DMI from `sysfs_root` (normally `/sys`).
pub fn detect_with_root(sysfs_root: &Path) -> HostInfo {
    let hostname = read_trim(Path::new("/proc/sys/kernel/hostname")).unwrap_or_default();
    let kernel = read_trim(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let dmi = sysfs_root.join("class/dmi/id");
    let sys_vendor = read_trim(&dmi.join("sys_vendor"));
    let product_name = read_trim(&dmi.join("product_name"));
    let (cloud, instance_type) = classify_dmi(sys_vendor.as_deref(), product_name.as_deref());
    HostInfo {
        hostname,
        kernel,
        cpus,
        cloud,
        instance_type,
        sys_vendor,
        product_name,
        cpuidle: cpuidle(sysfs_root),
    }
}

/// The cpuidle driver and governor, and the haltpoll driver's `guest_halt_poll_ns` when it is
/// loaded; `None` without a cpuidle driver. A value that is not what sysfs writes (too long, not
/// a number) is left out rather than trusted.
pub fn cpuidle(sysfs_root: &Path) -> Option<CpuIdle> {
    let name = |p: &Path| {
        read_trim(p).filter(|s| {
            s.len() <= 64
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    };
    let dir = sysfs_root.join("devices/system/cpu/cpuidle");
    let driver = name(&dir.join("current_driver")).filter(|d| d != "none")?;
    Some(CpuIdle {
        driver,
        governor: name(&dir.join("current_governor")),
        guest_halt_poll_ns: read_trim(
            &sysfs_root.join("module/haltpoll/parameters/guest_halt_poll_ns"),
        )
        .and_then(|s| s.parse().ok()),
    })
}

/// Reads host facts from the real `/sys`.
pub fn detect() -> HostInfo {
    detect_with_root(Path::new("/sys"))
}

/// Maps DMI vendor/product to (cloud, instance type).
pub fn classify_dmi(
    vendor: Option<&str>,
    product: Option<&str>,
) -> (Option<String>, Option<String>) {
    let v = vendor.unwrap_or("").to_ascii_lowercase();
    let p = product.unwrap_or("");
    if v.contains("amazon") {
        // Nitro instances report the instance type (e.g. "m6id.xlarge") as product_name.
        let it = (p.contains('.') && !p.contains(' ')).then(|| p.to_string());
        (Some("aws".into()), it)
    } else if v.contains("google") {
        (Some("gcp".into()), None)
    } else if v.contains("microsoft") && p.contains("Virtual Machine") {
        (Some("azure".into()), None)
    } else {
        (None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn cpuidle_of_a_guest_with_halt_polling_off() {
        let t = tempfile::tempdir().unwrap();
        write(
            t.path(),
            "devices/system/cpu/cpuidle/current_driver",
            "haltpoll\n",
        );
        write(
            t.path(),
            "devices/system/cpu/cpuidle/current_governor",
            "haltpoll\n",
        );
        write(
            t.path(),
            "module/haltpoll/parameters/guest_halt_poll_ns",
            "0\n",
        );
        assert_eq!(
            cpuidle(t.path()),
            Some(CpuIdle {
                driver: "haltpoll".into(),
                governor: Some("haltpoll".into()),
                guest_halt_poll_ns: Some(0),
            })
        );
    }

    #[test]
    fn cpuidle_of_bare_metal_and_of_odd_values() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(cpuidle(t.path()), None, "no cpuidle directory");
        write(
            t.path(),
            "devices/system/cpu/cpuidle/current_driver",
            "none\n",
        );
        assert_eq!(cpuidle(t.path()), None, "the driver \"none\"");
        write(
            t.path(),
            "devices/system/cpu/cpuidle/current_driver",
            "intel_idle\n",
        );
        write(
            t.path(),
            "devices/system/cpu/cpuidle/current_governor",
            "menu; rm -rf /\n",
        );
        write(
            t.path(),
            "module/haltpoll/parameters/guest_halt_poll_ns",
            "lots\n",
        );
        assert_eq!(
            cpuidle(t.path()),
            Some(CpuIdle {
                driver: "intel_idle".into(),
                governor: None,
                guest_halt_poll_ns: None,
            })
        );
    }

    #[test]
    fn dmi_classification() {
        assert_eq!(
            classify_dmi(Some("Amazon EC2"), Some("m6id.xlarge")),
            (Some("aws".into()), Some("m6id.xlarge".into()))
        );
        assert_eq!(
            classify_dmi(Some("Google"), Some("Google Compute Engine")),
            (Some("gcp".into()), None)
        );
        assert_eq!(
            classify_dmi(Some("Microsoft Corporation"), Some("Virtual Machine")),
            (Some("azure".into()), None)
        );
        assert_eq!(
            classify_dmi(Some("QEMU"), Some("Standard PC")),
            (None, None)
        );
    }

    #[test]
    fn reads_a_fixture_root() {
        let d = tempfile::tempdir().unwrap();
        let dmi = d.path().join("class/dmi/id");
        std::fs::create_dir_all(&dmi).unwrap();
        std::fs::write(dmi.join("sys_vendor"), "Amazon EC2\n").unwrap();
        std::fs::write(dmi.join("product_name"), "i3.8xlarge\n").unwrap();
        let h = detect_with_root(d.path());
        assert_eq!(h.cloud.as_deref(), Some("aws"));
        assert_eq!(h.instance_type.as_deref(), Some("i3.8xlarge"));
        assert!(h.cpus >= 1);
    }
}
