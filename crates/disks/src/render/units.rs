//! The systemd units that carry an [`Intent`] out at boot, shared by the openshift, systemd and
//! cloud-init renderers: a oneshot that makes the filesystem only when it is missing, the mount
//! unit (by LABEL, named as systemd requires, e.g. `var-lib-containers.mount`), a oneshot for
//! owner/mode/bind copy-in, one bind mount unit per `--bind`, and the SELinux relabel; all ordered
//! before the container runtime and kubelet (docs/sources.md [ocp-container-storage-disk],
//! [eks-setup-local-disks]).

use super::intent::Intent;
use super::script::{script_path, slug};
pub use crate::setup::persist::mount_unit_name;
use crate::setup::persist::{boot_unit_needs, exec_arg, oneshot_service};
use crate::valid::{unit_escape_path, MountPath};

/// One unit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub name: String,
    pub contents: String,
    /// Has an `[Install]` section, so it is enabled (Ignition `enabled: true`,
    /// `systemctl enable`). Units without one are pulled in by a unit that is.
    pub enable: bool,
}

/// systemd's path escaping (`systemd-escape --path`), see [`crate::valid::unit_escape_path`].
pub fn escape_path(path: &str) -> String {
    unit_escape_path(path)
}

/// The parent directory of an absolute path (`/` for a top-level one), quoted for a unit's
/// space-separated path lists (`RequiresMountsFor=` unquotes like `ExecStart=`).
fn parent(path: &MountPath) -> String {
    exec_arg(path.parent_str())
}

/// The units for `intent`; `runtimes` are the services that must start after the mounts
/// (crio and kubelet on OpenShift).
pub(crate) fn units(intent: &Intent, runtimes: &[&str]) -> Vec<Unit> {
    // Unit names: systemd's own escaping, unique per path.
    let s = unit_escape_path(&intent.mount);
    let script = exec_arg(&script_path(intent));
    let mount_unit = mount_unit_name(&intent.mount);
    let mkfs_unit = format!("disktier-mkfs-{s}.service");
    let binds_unit = format!("disktier-binds-{s}.service");
    let relabel_unit = format!("disktier-relabel-{s}.service");
    let bind_units: Vec<String> = intent.binds.iter().map(|b| mount_unit_name(b)).collect();
    let need_binds_unit =
        !intent.binds.is_empty() || intent.owner.is_some() || intent.mode.is_some();
    let before_runtimes = runtimes.join(" ");
    let mut out = Vec::new();

    // DefaultDependencies=no: the mount is ordered before local-fs.target, which the default
    // dependencies of a service (After=sysinit.target) would turn into an ordering cycle.
    out.push(Unit {
        name: mkfs_unit.clone(),
        contents: format!(
            "[Unit]\n\
Description=disktier: make the {fs} filesystem labelled {label} for {mount} when it is missing\n\
Documentation=man:systemd.mount(5)\n\
DefaultDependencies=no\n\
After=systemd-udev-trigger.service\n\
Before={mount_unit}\n\
RequiresMountsFor={parent} /etc/disktier\n\
\n\
[Service]\n\
Type=oneshot\n\
RemainAfterExit=yes\n\
ExecStart=/bin/bash {script} mkfs\n\
TimeoutSec=0\n",
            fs = intent.fs.as_str(),
            label = intent.label,
            mount = intent.mount,
            parent = parent(&intent.mount),
        ),
        enable: false,
    });

    out.push(Unit {
        name: mount_unit.clone(),
        contents: format!(
            "[Unit]\n\
Description=disktier: LABEL={label} at {mount}\n\
Requires={mkfs_unit}\n\
After={mkfs_unit}\n\
Before=local-fs.target {before_runtimes}\n\
\n\
[Mount]\n\
What=/dev/disk/by-label/{label}\n\
Where={mount}\n\
Type={fs}\n\
Options={options}\n\
\n\
[Install]\n\
WantedBy=local-fs.target\n",
            label = intent.label,
            mount = intent.mount,
            fs = intent.fs.as_str(),
            options = intent.options_string(),
        ),
        enable: true,
    });

    if need_binds_unit {
        out.push(Unit {
            name: binds_unit.clone(),
            contents: format!(
                "[Unit]\n\
Description=disktier: owner, mode and bind directories on {mount}\n\
DefaultDependencies=no\n\
Requires={mount_unit}\n\
After={mount_unit}\n\
Before=local-fs.target {before_binds}{before_runtimes}\n\
\n\
{service}",
                service = oneshot_service(&format!("/bin/bash {script} binds"), "local-fs.target"),
                mount = intent.mount,
                before_binds = bind_units
                    .iter()
                    .map(|u| format!("{u} "))
                    .collect::<String>(),
            ),
            enable: true,
        });
    }

    for (bind, unit) in intent.binds.iter().zip(&bind_units) {
        out.push(Unit {
            name: unit.clone(),
            contents: format!(
                "[Unit]\n\
Description=disktier: bind {source} at {bind}\n\
Requires={binds_unit}\n\
After={binds_unit}\n\
Before=local-fs.target {before_runtimes}\n\
\n\
[Mount]\n\
What={source}\n\
Where={bind}\n\
Type=none\n\
Options=bind\n\
\n\
[Install]\n\
WantedBy=local-fs.target\n",
                source = intent.mount.join_name(&slug(bind)),
            ),
            enable: true,
        });
    }

    let after_mounts = std::iter::once(mount_unit.as_str())
        .chain(bind_units.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    out.push(Unit {
        name: relabel_unit,
        contents: format!(
            "[Unit]\n\
Description=disktier: restore SELinux contexts on {mount}\n\
ConditionSecurity=selinux\n\
Requires={mount_unit}\n\
After={after_mounts}\n\
Before={before_runtimes}\n\
\n\
{service}",
            service = oneshot_service(&format!("/bin/bash {script} relabel"), "multi-user.target"),
            mount = intent.mount,
        ),
        enable: true,
    });
    out
}

/// `--use-binary`: one oneshot that runs `disktier setup`, which does the same steps (and
/// decides from the same real state) itself.
pub(crate) fn setup_unit(intent: &Intent, binary: &str, runtimes: &[&str]) -> Unit {
    let mut args = vec![
        binary.to_string(),
        "setup".into(),
        "--mount".into(),
        intent.mount.to_string(),
        "--fs".into(),
        intent.fs.as_str().into(),
        "--label".into(),
        intent.label.to_string(),
    ];
    // `disktier setup` adds its own defaults,noatime; pass only the extra options.
    let extra: Vec<&str> = intent.options.extra();
    if !extra.is_empty() {
        args.push("--options".into());
        args.push(extra.join(","));
    }
    if let Some(o) = &intent.owner {
        args.push("--owner".into());
        args.push(o.to_string());
    }
    if let Some(m) = &intent.mode {
        args.push("--mode".into());
        args.push(m.to_string());
    }
    if !intent.binds.is_empty() {
        args.push("--bind".into());
        args.push(
            intent
                .binds
                .iter()
                .map(MountPath::as_str)
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    args.push("--persist".into());
    args.push("none".into());
    // At boot the directory may already hold what the image put there before the unit ran
    // (/var/lib/containers on a fresh node): mount over it, as before setup refused a non-empty
    // mount point, rather than fail the unit and leave the runtime on the root disk.
    args.push("--allow-nonempty".into());
    let exec = args
        .iter()
        .map(|a| exec_arg(a))
        .collect::<Vec<_>>()
        .join(" ");
    Unit {
        name: format!("disktier-setup-{}.service", unit_escape_path(&intent.mount)),
        contents: format!(
            "[Unit]\n\
Description=disktier setup: local ephemeral disks at {mount}\n\
DefaultDependencies=no\n\
After=systemd-udev-trigger.service\n\
Before=local-fs.target {runtimes}\n\
RequiresMountsFor={needs}\n\
\n\
{service}",
            service = oneshot_service(&exec, "local-fs.target"),
            mount = intent.mount,
            runtimes = runtimes.join(" "),
            needs = boot_unit_needs(binary, &intent.mount, &intent.binds),
        ),
        enable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_path_matches_systemd_rules() {
        assert_eq!(escape_path("/var/lib/containers"), "var-lib-containers");
        assert_eq!(escape_path("/mnt/k8s-disks/0"), "mnt-k8s\\x2ddisks-0");
        assert_eq!(escape_path("/var/log/.hidden"), "var-log-.hidden");
        assert_eq!(escape_path("/.x"), "\\x2ex");
        assert_eq!(escape_path("/"), "-");
        assert_eq!(
            mount_unit_name("/var/lib/containers"),
            "var-lib-containers.mount"
        );
    }

    #[test]
    fn escape_path_agrees_with_systemd_escape() {
        let runner = disktier_cmd::RealRunner;
        use disktier_cmd::CommandRunner;
        if !runner.has_program("systemd-escape") {
            eprintln!("skipped: systemd-escape is not installed");
            return;
        }
        for p in [
            "/var/lib/containers",
            "/mnt/k8s-disks/0",
            "/mnt/a_b:c/d.e",
            "/data/x+y@z",
        ] {
            let out = runner
                .output(&disktier_cmd::Cmd::new("systemd-escape").args(["--path", p]))
                .unwrap();
            assert_eq!(escape_path(p), out.stdout.trim(), "{p}");
        }
    }

    #[test]
    fn parent_of_paths() {
        let mp = |s: &str| MountPath::parse("--mount", s).unwrap();
        assert_eq!(parent(&mp("/var/lib/containers")), "/var/lib");
        assert_eq!(parent(&mp("/data")), "/");
        assert_eq!(parent(&mp("/mnt/my dir/x")), "\"/mnt/my dir\"");
    }
}
