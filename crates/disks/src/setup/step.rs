//! One thing setup does, as data: planned from the disks' state, printed by `--dry-run` as the
//! exact commands, executed through the command runner, recorded in the JSON report.

use super::config::FsType;
use super::SetupError;
use crate::valid::{Mode, MountPath, Owner};
use disktier_cmd::{shell_quote, Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// md RAID0 chunk: 256 KiB, as Bottlerocket (`--chunk=256`) and the xfs `-l su` advice for
/// RAID (docs/sources.md [eks-setup-local-disks], [bottlerocket-ephemeral]).
pub const RAID_CHUNK_KIB: u64 = 256;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// RAID0 over blank disks. `--name` + `--homehost=any` keep `/dev/md/NAME` across reboots
    /// and hosts (docs/sources.md [bottlerocket-ephemeral]). Never `--force` or `--run`.
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
    /// slow: the instance-store performance recipe [recipe-instance-store-perf] shows "Discarding
    /// blocks...Done"). Never `-f`: mkfs.xfs itself refuses a device that holds a filesystem, a
    /// second guard behind discovery. mkfs.ext4 is no such guard: it asks before overwriting
    /// only when its stdin and stdout are a terminal, and setup runs it without one (QA: it
    /// replaced an xfs without a word), so for ext4 the last look ([`super::recheck`]) is the
    /// only one.
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
        path: MountPath,
    },
    Mount {
        what: String,
        target: MountPath,
        fstype: String,
        options: String,
    },
    /// Sets the flags a mounted filesystem (or, with `bind`, a bind mount) can change without
    /// being unmounted ([`super::live`]); `options` spells out every one of them.
    Remount {
        target: MountPath,
        options: String,
        bind: bool,
    },
    Chown {
        path: MountPath,
        owner: Owner,
    },
    Chmod {
        path: MountPath,
        mode: Mode,
    },
    /// SELinux relabel (the OpenShift instance-disk recipe's restorecon unit), only where SELinux
    /// is enabled.
    Restorecon {
        path: MountPath,
    },
    /// Copies what `src` holds into `dest` on the new filesystem (pre-pulled images must
    /// survive) through a staging directory renamed at the end, so a crash mid-copy is redone.
    /// Skipped when `dest` already exists: a remounted filesystem keeps its newer content.
    CopyIn {
        src: MountPath,
        dest: MountPath,
        staging: MountPath,
        /// Whether `dest` may already exist (the filesystem was not made in this run).
        conditional: bool,
    },
    BindMount {
        src: MountPath,
        target: MountPath,
    },
    /// Replaces a file atomically ([`super::persist::write_atomic`]), unless it changed
    /// since it was read for planning.
    WriteFile {
        path: PathBuf,
        contents: String,
        /// A hash of what the file held when planned (empty when absent): a file changed by
        /// someone else between plan and write is not overwritten.
        #[serde(skip)]
        was: u64,
    },
    Systemctl {
        args: Vec<String>,
    },
}

/// `cat > PATH <<'DELIM'` with a delimiter that occurs in no line of `contents` (a quoted
/// heredoc expands nothing; a unique delimiter cannot be ended early by the contents).
pub fn heredoc(path: &Path, contents: &str) -> String {
    let mut delim = "EOF".to_string();
    let mut n = 0;
    while contents.lines().any(|l| l == delim) {
        n += 1;
        delim = format!("EOF_DISKTIER_{n}");
    }
    let nl = if contents.is_empty() || contents.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!(
        "cat > {} <<'{delim}'\n{contents}{nl}{delim}",
        shell_quote(&path.display().to_string())
    )
}

fn p(p: &MountPath) -> String {
    p.to_string()
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
            Step::Remount {
                target,
                options,
                bind,
            } => {
                let how = if *bind { "remount,bind" } else { "remount" };
                vec![Cmd::new("mount")
                    .arg("-o")
                    .arg(format!("{how},{options}"))
                    .arg(p(target))]
            }
            Step::Chown { path, owner } => {
                vec![Cmd::new("chown").arg(owner.to_string()).arg(p(path))]
            }
            Step::Chmod { path, mode } => {
                vec![Cmd::new("chmod").arg(mode.to_string()).arg(p(path))]
            }
            Step::Restorecon { path } => vec![Cmd::new("restorecon").arg("-R").arg(p(path))],
            Step::CopyIn {
                src, dest, staging, ..
            } => vec![
                Cmd::new("mkdir").arg("-p").arg(dest.parent_str()),
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
            Step::WriteFile { path, contents, .. } => vec![heredoc(path, contents)],
            _ => self.commands().iter().map(|c| c.to_string()).collect(),
        }
    }

    /// The devices this step overwrites (mkfs, mdadm --create): each is checked again right
    /// before the step runs ([`super::recheck`]).
    pub fn destructive_devices(&self) -> Vec<&str> {
        match self {
            Step::CreateRaid { members, .. } => members.iter().map(String::as_str).collect(),
            Step::Mkfs { device, .. } => vec![device.as_str()],
            _ => Vec::new(),
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
                if dest.as_path().exists() {
                    return Ok(Some(format!(
                        "{} already exists on the filesystem: kept as is",
                        dest
                    )));
                }
                let cmds = self.commands();
                runner.run(&cmds[0])?;
                runner.run(&cmds[1])?;
                runner.run(&cmds[2])?;
                runner.run(&cmds[3])?;
                Ok(None)
            }
            Step::WriteFile {
                path,
                contents,
                was,
            } => {
                if super::persist::content_hash(path) != *was {
                    return Err(SetupError::Config(format!(
                        "{} changed since setup read it (another program wrote it): re-run setup, which plans from its new content",
                        path.display()
                    )));
                }
                super::persist::write_atomic(path, contents)?;
                Ok(None)
            }
            Step::Mount { what, fstype, .. } => {
                let cmds = self.commands();
                match runner.run(&cmds[0]) {
                    Ok(_) => Ok(None),
                    Err(e) if e.is_stop() => Err(e.into()),
                    Err(e) => Err(unfinished_xfs(what, fstype, runner).unwrap_or(e.into())),
                }
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
            Step::Mkdir { path } => format!("create directory {path}"),
            Step::Mount { what, target, .. } => format!("mount {what} on {target}"),
            Step::Remount {
                target, options, ..
            } => format!("remount {target} with {options}"),
            Step::Chown { path, owner } => format!("chown {owner} {path}"),
            Step::Chmod { path, mode } => format!("chmod {mode} {path}"),
            Step::Restorecon { path } => format!("restore SELinux labels under {path}"),
            Step::CopyIn { src, dest, .. } => format!("copy {src} into {dest}"),
            Step::BindMount { src, target } => format!("bind {src} on {target}"),
            Step::WriteFile { path, .. } => format!("write {}", path.display()),
            Step::Systemctl { args } => format!("systemctl {}", args.join(" ")),
        }
    }
}

/// Why a mount of `what` (`UUID=...`) failed when the xfs there was never finished: mkfs.xfs
/// writes its superblock marked "in progress" first (`sb_inprogress`, byte 126 of the primary
/// superblock, xfs_format.h) and clears the mark last, so a mkfs killed with setup (SIGKILL, an
/// OOM kill, a power cut) leaves an xfs with setup's label and UUID that the kernel will not
/// mount ("Structure needs cleaning"), and every re-run failed the same way (QA). It holds no
/// data: the message says to erase it. (A stop by a catchable signal erases it at once:
/// [`super::stop`].)
fn unfinished_xfs(what: &str, fstype: &str, runner: &dyn CommandRunner) -> Option<SetupError> {
    use std::io::Read;
    let uuid = what.strip_prefix("UUID=")?;
    if fstype != "xfs" {
        return None;
    }
    let out = runner.output(&Cmd::new("blkid").args(["-U", uuid])).ok()?;
    let device = out.stdout.trim().to_string();
    let mut head = [0u8; 127];
    std::fs::File::open(&device)
        .ok()?
        .read_exact(&mut head)
        .ok()?;
    (&head[..4] == b"XFSB" && head[126] != 0).then(|| {
        SetupError::Config(format!(
            "{device} holds an xfs (UUID {uuid}) that was never finished: its superblock is still marked in progress, as mkfs.xfs leaves it when it is killed (setup killed with SIGKILL, or a power cut, during mkfs), and no kernel mounts it; it holds no data: erase it (wipefs -a {device}) and run setup again, which makes it anew"
        ))
    })
}
