//! One thing setup does, as data: planned from the disks' state, printed by `--dry-run` as the
//! exact commands, executed through the command runner, recorded in the JSON report.

use super::config::FsType;
use super::SetupError;
use disktier_cmd::{shell_quote, Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// md RAID0 chunk: 256 KiB, as Bottlerocket (`--chunk=256`) and the xfs `-l su` advice for
/// RAID (references.md, "what goes wrong" 5).
pub const RAID_CHUNK_KIB: u64 = 256;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// RAID0 over blank disks. `--name` + `--homehost=any` keep `/dev/md/NAME` across reboots
    /// and hosts (references.md, "what goes wrong" 4). Never `--force` or `--run`.
    CreateRaid {
        device: String,
        name: String,
        members: Vec<String>,
    },
    /// Start an array whose members carry our superblocks (after a reboot or a crash).
    AssembleRaid {
        device: String,
        members: Vec<String>,
    },
    /// Make the filesystem; `-K`/`nodiscard` skips discarding fresh disks (a 1.9 TB discard is
    /// slow: seed 003 shows "Discarding blocks...Done"). Never `-f`: mkfs itself refuses a device
    /// that holds a filesystem, a second guard behind discovery.
    Mkfs {
        device: String,
        fs: FsType,
        label: String,
        uuid: String,
        /// Number of RAID0 members, for stripe-aware geometry.
        stripe_members: Option<usize>,
        /// ext4 with quota options: make the quota and project features.
        ext4_quota: bool,
    },
    Mkdir {
        path: PathBuf,
    },
    Mount {
        what: String,
        target: PathBuf,
        fstype: String,
        options: String,
    },
    Chown {
        path: PathBuf,
        owner: String,
    },
    Chmod {
        path: PathBuf,
        mode: String,
    },
    /// SELinux relabel (seed 000's restorecon unit), only where SELinux is enabled.
    Restorecon {
        path: PathBuf,
    },
    /// Copies what `src` holds into `dest` on the new filesystem (pre-pulled images must
    /// survive) through a staging directory renamed at the end, so a crash mid-copy is redone.
    /// Skipped when `dest` already exists: a remounted filesystem keeps its newer content.
    CopyIn {
        src: PathBuf,
        dest: PathBuf,
        staging: PathBuf,
        /// Whether `dest` may already exist (the filesystem was not made in this run).
        conditional: bool,
    },
    BindMount {
        src: PathBuf,
        target: PathBuf,
    },
    WriteFile {
        path: PathBuf,
        contents: String,
    },
    Systemctl {
        args: Vec<String>,
    },
}

fn p(p: &Path) -> String {
    p.display().to_string()
}

impl Step {
    /// The command(s) the step runs, in order. `CopyIn` and `WriteFile` are described by the
    /// shell lines that do the same (see [`Step::shell`]).
    pub fn commands(&self) -> Vec<Cmd> {
        match self {
            Step::CreateRaid {
                device,
                name,
                members,
            } => vec![Cmd::new("mdadm")
                .args(["--create", device.as_str()])
                .arg(format!("--name={name}"))
                .arg("--homehost=any")
                .arg("--level=0")
                .arg(format!("--chunk={RAID_CHUNK_KIB}"))
                .arg("--metadata=1.2")
                .arg(format!("--raid-devices={}", members.len()))
                .args(members.iter().cloned())],
            Step::AssembleRaid { device, members } => vec![Cmd::new("mdadm")
                .args(["--assemble", device.as_str()])
                .args(members.iter().cloned())],
            Step::Mkfs {
                device,
                fs,
                label,
                uuid,
                stripe_members,
                ext4_quota,
            } => match fs {
                FsType::Xfs => {
                    let mut c = Cmd::new("mkfs.xfs")
                        .args(["-K", "-L", label.as_str(), "-m"])
                        .arg(format!("uuid={uuid}"));
                    if let Some(n) = stripe_members {
                        // Stripe unit = md chunk, stripe width = members (mkfs.xfs(8) -d su,sw).
                        c = c.arg("-d").arg(format!("su={RAID_CHUNK_KIB}k,sw={n}"));
                    }
                    vec![c.arg(device.as_str())]
                }
                FsType::Ext4 => {
                    let mut ext = "nodiscard".to_string();
                    if let Some(n) = stripe_members {
                        // stride = chunk / 4 KiB block; stripe_width = stride * members
                        // (mke2fs(8) -E stride, stripe_width).
                        let stride = RAID_CHUNK_KIB / 4;
                        ext.push_str(&format!(
                            ",stride={stride},stripe_width={}",
                            stride * *n as u64
                        ));
                    }
                    let mut c = Cmd::new("mkfs.ext4")
                        .args(["-L", label.as_str(), "-U", uuid.as_str(), "-E"])
                        .arg(ext);
                    if *ext4_quota {
                        c = c.args(["-O", "quota,project"]);
                    }
                    vec![c.arg(device.as_str())]
                }
            },
            Step::Mkdir { path } => vec![Cmd::new("mkdir").arg("-p").arg(p(path))],
            Step::Mount {
                what,
                target,
                fstype,
                options,
            } => vec![Cmd::new("mount")
                .args(["-t", fstype.as_str(), "-o", options.as_str(), what.as_str()])
                .arg(p(target))],
            Step::Chown { path, owner } => {
                vec![Cmd::new("chown").arg(owner.as_str()).arg(p(path))]
            }
            Step::Chmod { path, mode } => vec![Cmd::new("chmod").arg(mode.as_str()).arg(p(path))],
            Step::Restorecon { path } => vec![Cmd::new("restorecon").arg("-R").arg(p(path))],
            Step::CopyIn {
                src, dest, staging, ..
            } => vec![
                Cmd::new("mkdir")
                    .arg("-p")
                    .arg(p(dest.parent().unwrap_or(Path::new("/")))),
                Cmd::new("rm").arg("-rf").arg(p(staging)),
                Cmd::new("cp")
                    .arg("-a")
                    .arg(format!("{}/.", p(src)))
                    .arg(p(staging)),
                Cmd::new("mv").arg("-T").arg(p(staging)).arg(p(dest)),
            ],
            Step::BindMount { src, target } => {
                vec![Cmd::new("mount").arg("--bind").arg(p(src)).arg(p(target))]
            }
            Step::WriteFile { .. } => vec![],
            Step::Systemctl { args } => vec![Cmd::new("systemctl").args(args.iter().cloned())],
        }
    }

    /// The exact shell lines `--dry-run` prints for this step.
    pub fn shell(&self) -> Vec<String> {
        match self {
            Step::CopyIn {
                conditional: true,
                dest,
                ..
            } => {
                let inner: Vec<String> = self.commands().iter().map(|c| c.to_string()).collect();
                vec![format!(
                    "[ -e {} ] || {{ {}; }}",
                    shell_quote(&p(dest)),
                    inner.join(" && ")
                )]
            }
            Step::WriteFile { path, contents } => vec![format!(
                "cat > {} <<'EOF'\n{}EOF",
                shell_quote(&p(path)),
                contents
            )],
            _ => self.commands().iter().map(|c| c.to_string()).collect(),
        }
    }

    /// After this step the disks' state is read again and the rest re-planned (an assembled
    /// array's filesystem can only be seen once it runs).
    pub fn replan_after(&self) -> bool {
        matches!(self, Step::AssembleRaid { .. })
    }

    /// Runs the step. Returns a note when it found nothing to do at execution time.
    pub fn execute(&self, runner: &dyn CommandRunner) -> Result<Option<String>, SetupError> {
        match self {
            Step::CopyIn { dest, .. } => {
                if dest.exists() {
                    return Ok(Some(format!(
                        "{} already exists on the filesystem: kept as is",
                        dest.display()
                    )));
                }
                let cmds = self.commands();
                runner.run(&cmds[0])?;
                runner.run(&cmds[1])?;
                runner.run(&cmds[2])?;
                runner.run(&cmds[3])?;
                Ok(None)
            }
            Step::WriteFile { path, contents } => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| SetupError::Io {
                        path: dir.to_path_buf(),
                        source: e,
                    })?;
                }
                std::fs::write(path, contents).map_err(|e| SetupError::Io {
                    path: path.clone(),
                    source: e,
                })?;
                Ok(None)
            }
            _ => {
                for c in self.commands() {
                    runner.run(&c)?;
                }
                Ok(None)
            }
        }
    }

    /// One line for the human summary.
    pub fn describe(&self) -> String {
        match self {
            Step::CreateRaid {
                device, members, ..
            } => {
                format!("create RAID0 {device} over {}", members.join(" "))
            }
            Step::AssembleRaid { device, .. } => format!("assemble {device}"),
            Step::Mkfs {
                device, fs, label, ..
            } => {
                format!("make {} labelled {label} on {device}", fs.as_str())
            }
            Step::Mkdir { path } => format!("create directory {}", path.display()),
            Step::Mount { what, target, .. } => format!("mount {what} on {}", target.display()),
            Step::Chown { path, owner } => format!("chown {owner} {}", path.display()),
            Step::Chmod { path, mode } => format!("chmod {mode} {}", path.display()),
            Step::Restorecon { path } => format!("restore SELinux labels under {}", path.display()),
            Step::CopyIn { src, dest, .. } => {
                format!("copy {} into {}", src.display(), dest.display())
            }
            Step::BindMount { src, target } => {
                format!("bind {} on {}", src.display(), target.display())
            }
            Step::WriteFile { path, .. } => format!("write {}", path.display()),
            Step::Systemctl { args } => format!("systemctl {}", args.join(" ")),
        }
    }
}
