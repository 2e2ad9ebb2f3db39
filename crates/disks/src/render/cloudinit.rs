//! cloud-init user-data for a plain VM: `write_files` installs the boot-time script and the
//! systemd units, `runcmd` enables them and starts them once, unless a container runtime or
//! kubelet already runs (as `install.sh` does). From then on systemd runs them on every boot.
//!
//! Why not `disk_setup`/`fs_setup`/`mounts`: they take kernel device names, and they run once per
//! instance; a stop/start keeps the instance id but hands back blank disks, so they would not
//! make the filesystem again (instance store is lost on stop:
//! docs/sources.md [aws-instance-types]). The units decide from the disks' state on
//! every boot instead.

use super::intent::Intent;
use super::script::{prepare_script, script_path};
use super::systemd::{vm_notes, VM_RUNTIMES};
use super::units::units;
use super::{yaml, FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer};
use disktier_cmd::shell_quote;
use serde_json::json;

/// A checked cloud-init render.
#[derive(Debug, Clone)]
pub struct CloudInit {
    intent: Intent,
}

impl CloudInit {
    pub fn new(intent: Intent) -> CloudInit {
        CloudInit { intent }
    }
}

impl Renderer for CloudInit {
    fn platform(&self) -> Platform {
        Platform::CloudInit
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let intent = &self.intent;
        let units = units(intent, &VM_RUNTIMES);
        let mut write_files = vec![json!({
            "path": script_path(intent),
            "permissions": "0755",
            "owner": "root:root",
            "content": prepare_script(intent, "cloud-init"),
        })];
        for u in &units {
            write_files.push(json!({
                "path": format!("/etc/systemd/system/{}", u.name),
                "permissions": "0644",
                "owner": "root:root",
                "content": u.contents,
            }));
        }
        let enabled: Vec<&str> = units
            .iter()
            .filter(|u| u.enable)
            .map(|u| u.name.as_str())
            .collect();
        let mut enable = vec!["systemctl", "enable"];
        enable.extend(&enabled);
        // runcmd runs late in the first boot, when a container runtime or kubelet may already
        // run on the directories: starting the mounts then would hide their state (found by QA).
        // As install.sh does, the units start now only when none of them runs; otherwise they
        // run at the next boot, ordered before the runtime.
        let start = format!(
            "for svc in {runtimes}; do if systemctl is-active --quiet \"$svc\"; then echo \"disktier: $svc is running: reboot to mount {mount} before it starts\" >&2; exit 0; fi; done; systemctl start {units}",
            runtimes = VM_RUNTIMES.join(" "),
            mount = intent.mount,
            units = enabled
                .iter()
                .map(|u| shell_quote(u))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let doc = json!({
            "write_files": write_files,
            "runcmd": [["systemctl", "daemon-reload"], enable, ["sh", "-c", start]],
        });
        let comments = vec![
            format!(
                "Rendered by `disktier render cloud-init`: {} on the VM's local ephemeral disks.",
                intent.mount
            ),
            "Not disk_setup/fs_setup/mounts: those take kernel device names and run once per instance,".into(),
            "so after a stop/start (same instance, blank disks) nothing would make the filesystem again.".into(),
            "The units written here run on every boot and decide from the disks' state; runcmd only".into(),
            "enables them and starts them on the first boot, unless a container runtime or kubelet".into(),
            "already runs (then they run at the next boot, before it: reboot).".into(),
        ];
        let body = yaml::document("cloud-config", &comments, &doc)?;
        Ok(Rendered {
            platform: Platform::CloudInit,
            files: vec![RenderedFile::new(
                "user-data.yaml",
                FileKind::CloudConfig,
                format!("#cloud-config\n{body}"),
            )],
            notes: vm_notes(intent),
        })
    }
}
