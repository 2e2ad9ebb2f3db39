//! A plain VM with systemd: the units of [`super::units`], the boot-time script, and an
//! `install.sh` that puts them in place and enables them. The same units a MachineConfig carries,
//! as files.

use super::intent::Intent;
use super::script::{prepare_script, script_path, slug};
use super::units::{units, Unit};
use super::{FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer};
use disktier_cmd::shell_quote;

/// What must start after the mounts on a plain VM: whichever runtime and kubelet it has.
pub(crate) const VM_RUNTIMES: [&str; 4] = [
    "containerd.service",
    "crio.service",
    "docker.service",
    "kubelet.service",
];

/// A checked systemd render.
#[derive(Debug, Clone)]
pub struct Systemd {
    intent: Intent,
}

impl Systemd {
    pub fn new(intent: Intent) -> Systemd {
        Systemd { intent }
    }
}

/// Notes shared by the VM renderers.
pub(crate) fn vm_notes(intent: &Intent) -> Vec<String> {
    let mut notes = Vec::new();
    if intent.wants_prjquota() {
        notes.push("prjquota needs a kernel with quota support: the mount fails where it is missing (disktier setup checks this on the node)".into());
    }
    if intent.wants_prjquota() && intent.fs == super::FsType::Ext4 {
        notes.push("ext4 with prjquota is made with the quota and project features, and such a filesystem does not mount at all on a kernel without quota support".into());
    }
    notes
}

/// `install.sh`: copies the files into place, enables the units, and starts them only when no
/// container runtime is running on the directory yet.
fn install_script(intent: &Intent, units: &[Unit], platform: &str) -> String {
    let quoted = |it: &mut dyn Iterator<Item = &Unit>| {
        it.map(|u| shell_quote(&u.name))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let all = quoted(&mut units.iter());
    let enabled = quoted(&mut units.iter().filter(|u| u.enable));
    format!(
        r#"#!/bin/bash
# Rendered by `disktier render {platform}`: installs the units and {script}, enables them, and
# starts them now unless a container runtime or kubelet already runs (then: reboot).
set -euo pipefail
cd "$(dirname "$0")"

# A unit of the same name that this render did not write (an admin's, disktier setup's) is not
# replaced: refused before anything is installed.
for unit in {all}; do
    dest=/etc/systemd/system/$unit
    if [ -e "$dest" ] && ! cmp -s "$unit" "$dest" && ! head -n 1 "$dest" | grep -q '^# Rendered by .disktier render'; then
        echo "$dest exists and was not written by disktier render: disable it and move it away (systemctl disable $unit), then run $0 again" >&2
        exit 1
    fi
done
install -D -m 0755 {local} {script}
for unit in {all}; do
    install -m 0644 "$unit" /etc/systemd/system/
done
systemctl daemon-reload
systemctl enable {enabled}
for svc in {runtimes}; do
    if systemctl is-active --quiet "$svc"; then
        echo "$svc is running: reboot to mount {mount} before it starts" >&2
        exit 0
    fi
done
systemctl start {enabled}
"#,
        local = shell_quote(&format!("{}.sh", slug(&intent.mount))),
        script = shell_quote(&script_path(intent)),
        runtimes = VM_RUNTIMES.join(" "),
        mount = intent.mount,
    )
}

impl Renderer for Systemd {
    fn platform(&self) -> Platform {
        Platform::Systemd
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let units = units(&self.intent, &VM_RUNTIMES);
        let mut files: Vec<RenderedFile> = units
            .iter()
            .map(|u| {
                let content = format!(
                    "# Rendered by `disktier render systemd`; see {}.\n{}",
                    script_path(&self.intent),
                    u.contents
                );
                RenderedFile::new(u.name.clone(), FileKind::Unit, content)
            })
            .collect();
        files.push(RenderedFile::new(
            format!("{}.sh", slug(&self.intent.mount)),
            FileKind::Shell,
            prepare_script(&self.intent, "systemd"),
        ));
        files.push(RenderedFile::new(
            "install.sh",
            FileKind::Shell,
            install_script(&self.intent, &units, "systemd"),
        ));
        Ok(Rendered {
            platform: Platform::Systemd,
            files,
            notes: vm_notes(&self.intent),
        })
    }
}
