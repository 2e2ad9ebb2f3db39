//! Facts about the machine a run happened on: hostname, kernel, CPUs, and the cloud and instance
//! type when DMI tells them (`/sys/class/dmi/id/sys_vendor`, `product_name`; EC2 Nitro puts the
//! instance type in `product_name`, GCE puts "Google Compute Engine", Azure "Virtual Machine").

use crate::result::HostInfo;
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
    }
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
