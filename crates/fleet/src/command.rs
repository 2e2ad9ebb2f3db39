//! The node-side command: the disktier command line each node's pod runs, checked once. Fleet
//! reads it to learn which host paths to mount (exactly the absolute paths it names, at the same
//! path) and whether the pod must be privileged (a device, `interfere`), and adds the
//! options that make the result come back as one JSON document on stdout. `setup` is refused: a
//! pod cannot set up its node (`FleetError::SetupInPod`).

use crate::error::{FleetError, Result};

/// The subcommands fleet runs on nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Check,
    Bench,
    Assess,
    Interfere,
}

impl Verb {
    fn parse(s: &str) -> Result<Verb> {
        Ok(match s {
            "check" => Verb::Check,
            "bench" => Verb::Bench,
            "assess" => Verb::Assess,
            "interfere" => Verb::Interfere,
            "setup" => return Err(FleetError::SetupInPod),
            other => return Err(FleetError::UnknownCommand(other.to_string())),
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Verb::Check => "check",
            Verb::Bench => "bench",
            Verb::Assess => "assess",
            Verb::Interfere => "interfere",
        }
    }
    /// Whether the command's paths are directories (so the hostPath can insist on one and a
    /// missing path fails the mount instead of being created empty on the node's root disk).
    fn takes_directories(self) -> bool {
        matches!(self, Verb::Check | Verb::Assess | Verb::Interfere)
    }
}

/// What kind of host path a volume is: the hostPath `type` the kubelet checks before mounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// Must exist and be a directory.
    Directory,
    /// Must exist and be a block device.
    BlockDevice,
    /// Must exist and be a file (`check etcd --cacert/--cert/--key`).
    File,
    /// Not checked (bench's file targets, which the engine may create).
    Unchecked,
}

impl PathKind {
    pub fn host_path_type(self) -> Option<&'static str> {
        match self {
            PathKind::Directory => Some("Directory"),
            PathKind::BlockDevice => Some("BlockDevice"),
            PathKind::File => Some("File"),
            PathKind::Unchecked => None,
        }
    }
}

/// A path on the node the command names, mounted at the same path in the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPath {
    pub path: String,
    pub kind: PathKind,
}

/// The checked node command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCommand {
    pub verb: Verb,
    /// What the user typed after `--`.
    pub user_args: Vec<String>,
    pub host_paths: Vec<HostPath>,
    /// Why the pod must be privileged, or `None` when it runs with narrow capabilities.
    pub privileged: Option<&'static str>,
    /// Why the pod must share the node's network, or `None`: `check etcd --metrics` reads the
    /// etcd member on the node's own addresses (etcd listens on 127.0.0.1 and the node's IP).
    pub host_network: Option<&'static str>,
}

/// Options of `check etcd --metrics` whose value is a file on the node (etcdctl's names).
const FILE_OPTIONS: [&str; 3] = ["--cacert", "--cert", "--key"];

/// Options fleet sets itself; the user may not give them.
const RESERVED: [&str; 5] = ["--format", "--db", "--no-save", "--report", "--quiet"];

/// The kernel's pseudo filesystems: neither they nor anything under them is mounted. A
/// measurement there means nothing, and a mount hands the pod the node (`/proc/1/root` is the
/// node's root filesystem, `/sys` its devices and cgroups).
const KERNEL_TREES: [&str; 2] = ["/proc", "/sys"];

/// Under `/dev` fleet mounts only block devices, and the client cannot look at the node, so it
/// knows them by name: a kernel block device name (`/dev/` + one of these + letters and
/// digits: `sdb`, `nvme1n1p2`, `dm-0`, `loop3`; not `loop-control`), or a link in a directory
/// that holds only block devices (`/dev/mapper/NAME` but `control`, `/dev/md/NAME`,
/// `/dev/disk/by-*/NAME`). Everything else under `/dev` (`shm`, `pts`, `mqueue`, `hugepages`,
/// character devices) is refused: none is a disk, and `BlockDevice` would fail the mount.
/// LVM's `/dev/VG/LV` is not recognised (its name says nothing): `/dev/mapper/VG-LV` is.
const BLOCK_DEVICE_PREFIXES: [&str; 14] = [
    "sd", "vd", "xvd", "hd", "nvme", "loop", "md", "dm-", "nbd", "rbd", "mmcblk", "pmem", "zd",
    "bcache",
];

/// Whether `parts` (a normalised path's components after `dev`) names a block device by the
/// rule of [`BLOCK_DEVICE_PREFIXES`].
fn is_block_device_name(parts: &[&str]) -> bool {
    let simple = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:+@\\".contains(&b))
    };
    match parts {
        [name] => BLOCK_DEVICE_PREFIXES.iter().any(|p| {
            name.strip_prefix(p).is_some_and(|rest| {
                !rest.is_empty()
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
        }),
        ["mapper", name] => *name != "control" && simple(name),
        ["md", name] => simple(name),
        ["disk", dir, name] => {
            dir.strip_prefix("by-").is_some_and(|d| {
                !d.is_empty() && d.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
            }) && simple(name)
        }
        _ => false,
    }
}

impl NodeCommand {
    pub fn parse(args: &[String]) -> Result<NodeCommand> {
        let first = args.first().ok_or(FleetError::NoCommand)?;
        let verb = Verb::parse(first)?;
        let mut host_paths: Vec<HostPath> = Vec::new();
        let mut host_network = None;
        let mut prev: Option<&str> = None;
        for a in args {
            if a.contains('\0') || a.len() > 4096 {
                return Err(FleetError::Invalid {
                    what: "node command argument",
                    value: a.chars().take(64).collect(),
                    why: "holds a NUL byte or is longer than 4096 bytes".into(),
                });
            }
            // QA: `fleet run -- check etcd $'/x\ny'` wrote the path into the Job as a two-line
            // block scalar (`path: |-`), an option `$'--bogus\nx'` likewise into the container's
            // arguments, and a U+202E shows either reordered in `--dry-run`. No disktier option
            // or node path needs such a character ([`crate::shown::unshown`]).
            if let Some((c, what)) = a
                .chars()
                .find_map(|c| crate::shown::unshown(c).map(|w| (c, w)))
            {
                return Err(FleetError::Invalid {
                    what: "node command argument",
                    value: a.chars().take(64).collect(),
                    why: format!("it holds U+{:04X}, {what}, which the Job's YAML would carry as is (a newline across lines, a bidirectional character showing it reordered): give the argument without it", c as u32),
                });
            }
            if let Some(opt) = RESERVED
                .iter()
                .find(|r| a == *r || a.starts_with(&format!("{r}=")))
            {
                return Err(FleetError::ReservedOption(opt.to_string()));
            }
            // QA: its command line was mounted as a hostPath directory. It could not run anyway:
            // the node command runs in disktier's image, which holds no other program.
            if verb == Verb::Interfere
                && (a == "--aggressor-cmd" || a.starts_with("--aggressor-cmd="))
            {
                return Err(FleetError::Invalid {
                    what: "node command option",
                    value: "--aggressor-cmd".into(),
                    why: "fleet runs the command in disktier's image, which holds no other program to run: use a built-in --aggressor (ostree, bulk-seq, rand-write), or run disktier interfere with --aggressor-cmd on the node itself".into(),
                });
            }
            if verb == Verb::Check && (a == "--metrics" || a.starts_with("--metrics=")) {
                host_network = Some("check etcd --metrics reads etcd on the node's own addresses");
            }
            let metrics_value = match a.strip_prefix("--metrics=") {
                Some(v) => Some(v),
                None if prev == Some("--metrics") => Some(a.as_str()),
                None => None,
            };
            if let Some(urls) = metrics_value.filter(|_| verb == Verb::Check) {
                refuse_credentials(urls)?;
            }
            // `--dir=/x` names a path as much as `/x` does.
            let (option, candidate) = match a.split_once('=') {
                Some((k, v)) if k.starts_with("--") => (Some(k), v),
                _ => (prev, a.as_str()),
            };
            let names_file = option.is_some_and(|o| FILE_OPTIONS.contains(&o));
            prev = Some(a.as_str());
            if candidate.starts_with('/') {
                let path = check_path(candidate)?;
                if !host_paths.iter().any(|h| h.path == path) {
                    let kind = if names_file {
                        PathKind::File
                    } else if path.starts_with("/dev/") {
                        PathKind::BlockDevice
                    } else if verb.takes_directories() {
                        PathKind::Directory
                    } else {
                        PathKind::Unchecked
                    };
                    host_paths.push(HostPath { path, kind });
                }
            }
        }
        if host_paths.is_empty() && host_network.is_none() {
            return Err(FleetError::NoHostPath);
        }
        let privileged = if host_paths.iter().any(|h| h.kind == PathKind::BlockDevice) {
            Some("the command opens a device")
        } else {
            match verb {
                Verb::Interfere => Some("interfere changes I/O schedulers and cgroups on the node"),
                _ => None,
            }
        };
        Ok(NodeCommand {
            verb,
            user_args: args.to_vec(),
            host_paths,
            privileged,
            host_network,
        })
    }

    /// The container's arguments: the user's command plus what makes the result come back as
    /// one JSON document on stdout and leaves nothing on the node (the client stores it).
    ///
    /// Every `$` is written `$$`: the kubelet expands `$(NAME)` in a container's args from its
    /// environment (NODE_NAME, DISKTIER_TERMINATION_LOG) and turns `$$` into `$` (Kubernetes API
    /// reference, core/v1 `Container.args`: "Double $$ are reduced to a single $, which allows
    /// for escaping the $(VAR_NAME) syntax"), so `$$` is how args reach the command as typed. QA: `check etcd '/data/$(NODE_NAME)'`
    /// mounted the hostPath `/data/$(NODE_NAME)` but measured `/data/NODE`, and `/data/a$$b`
    /// measured `/data/a$b`, neither of them the path mounted.
    pub fn container_args(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .user_args
            .iter()
            .map(|a| a.replace('$', "$$"))
            .collect();
        v.extend(["--format", "json", "--no-save", "--quiet"].map(String::from));
        if self.verb == Verb::Assess && !self.user_args.iter().any(|a| a == "--no-report") {
            v.push("--no-report".into());
        }
        v
    }
}

/// Refuses a `--metrics` URL list in which a URL carries user information
/// (`http://user:PASSWORD@host/metrics`, `http://TOKEN@host`): the node command is the Job's
/// container args, which anyone who may read Jobs or Pods in the namespace sees (`kubectl get
/// job -o yaml`), which `--dry-run` prints, and which is the container's command line on the
/// node. The refusal shows the URL with its user information cut out, never the password.
fn refuse_credentials(urls: &str) -> Result<()> {
    for url in urls.split(',').map(str::trim) {
        let Some((scheme, rest)) = url.split_once("://") else {
            continue;
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let Some((_, host)) = authority.rsplit_once('@') else {
            continue;
        };
        return Err(FleetError::Invalid {
            what: "check etcd --metrics URL",
            value: format!("{scheme}://xxxxx@{host}{tail}"),
            why: "it holds a user name or password, and fleet would write it into each node's Job (the container's arguments), where anyone who may read Jobs or Pods in the namespace, `--dry-run` and the node's process list show it: judge etcd through client certificates instead (--cacert, --cert and --key name files on the node, which are mounted, never copied), or through etcd's plain-HTTP metrics listener on the node's loopback (--listen-metrics-urls, http://127.0.0.1:2381/metrics on kubeadm), or run `disktier check etcd --metrics URL` on the node itself".into(),
        });
    }
    Ok(())
}

/// An absolute, normalised path: no `.`/`..` components, no doubled or trailing slashes; not
/// `/`, not `/proc` or `/sys` or anything under them, and under `/dev` only a block device
/// ([`BLOCK_DEVICE_PREFIXES`]). The rule is on names: a symlink on the node is not seen here.
fn check_path(p: &str) -> Result<String> {
    let bad = |why| FleetError::BadHostPath {
        path: p.to_string(),
        why,
    };
    let mut parts = Vec::new();
    for comp in p.split('/').skip(1) {
        match comp {
            "" => {}
            "." | ".." => {
                return Err(bad(
                    "`.` and `..` are not allowed in a node path: give it in full",
                ))
            }
            c => parts.push(c),
        }
    }
    let norm = format!("/{}", parts.join("/"));
    if parts.is_empty() {
        return Err(bad("fleet does not mount the node's root or its /proc, /sys or /dev: name the directory or device to measure"));
    }
    if KERNEL_TREES.iter().any(|t| t[1..] == *parts[0]) {
        return Err(bad("fleet mounts nothing under /proc or /sys: they are the node's kernel, not a disk, and a mount of them hands the pod the node (/proc/1/root is its root filesystem): name the directory or device to measure"));
    }
    if parts[0] == "dev" && !is_block_device_name(&parts[1..]) {
        return Err(bad("under /dev fleet mounts only block devices, known by name: /dev/sd*, /dev/vd*, /dev/xvd*, /dev/hd*, /dev/nvme*, /dev/loop*, /dev/md*, /dev/dm-*, /dev/nbd*, /dev/rbd*, /dev/mmcblk*, /dev/pmem*, /dev/zd*, /dev/bcache*, /dev/mapper/NAME, /dev/md/NAME or /dev/disk/by-*/NAME; to measure a filesystem, name the directory it is mounted on"));
    }
    Ok(norm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Result<NodeCommand> {
        NodeCommand::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn check_etcd_mounts_its_directory_without_privilege() {
        let c = cmd("check etcd /var/lib/etcd/").unwrap();
        assert_eq!(
            c.host_paths,
            vec![HostPath {
                path: "/var/lib/etcd".into(),
                kind: PathKind::Directory
            }]
        );
        assert_eq!(c.privileged, None);
        assert_eq!(
            c.container_args(),
            "check etcd /var/lib/etcd/ --format json --no-save --quiet"
                .split(' ')
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_device_or_interfere_needs_privilege() {
        let c = cmd("bench /dev/nvme1n1 --rw randread").unwrap();
        assert_eq!(c.host_paths[0].kind, PathKind::BlockDevice);
        assert!(c.privileged.is_some());
        assert!(cmd("interfere /var/lib/etcd").unwrap().privileged.is_some());
    }

    /// QA: `fleet run -- setup` made a privileged pod whose image has no blkid, mkfs or mount
    /// ("blkid was not found: install it"), and whose mounts and fstab would have stayed in the
    /// pod's own mount namespace and root: the node was never set up.
    #[test]
    fn setup_is_refused_naming_render() {
        let err = cmd("setup --mount=/var/lib/containers").unwrap_err();
        assert!(matches!(err, FleetError::SetupInPod), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("disktier render"), "{msg}");
        let err = cmd("frobnicate /x").unwrap_err().to_string();
        assert!(!err.contains("setup"), "{err}");
    }

    #[test]
    fn assess_gets_no_report_and_paths_in_options_are_mounted() {
        let c = cmd("assess /a /b --only etcd").unwrap();
        assert!(c.container_args().contains(&"--no-report".to_string()));
        assert_eq!(c.host_paths.len(), 2);
        let c = cmd("bench --target-dir=/mnt/x /mnt/x").unwrap();
        assert_eq!(c.host_paths.len(), 1, "the same path is mounted once");
        assert_eq!(c.host_paths[0].kind, PathKind::Unchecked);
    }

    #[test]
    fn etcd_metrics_shares_the_node_network_and_mounts_certificates_as_files() {
        let c = cmd("check etcd --metrics https://127.0.0.1:2379 --cacert /etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/peer.crt --key /etc/kubernetes/pki/etcd/peer.key").unwrap();
        assert!(c.host_network.is_some());
        assert_eq!(c.privileged, None);
        assert_eq!(c.host_paths.len(), 3);
        assert!(c.host_paths.iter().all(|h| h.kind == PathKind::File));
        // Plain HTTP: nothing to mount, still a valid node command.
        let c = cmd("check etcd --metrics http://127.0.0.1:2381").unwrap();
        assert!(c.host_paths.is_empty() && c.host_network.is_some());
        // A data directory beside the metrics stays a directory.
        let c = cmd("check etcd /var/lib/etcd --metrics http://127.0.0.1:2381").unwrap();
        assert_eq!(c.host_paths[0].kind, PathKind::Directory);
        // Only check reads metrics: bench --metrics is not host-networked.
        assert!(cmd("check etcd /var/lib/etcd")
            .unwrap()
            .host_network
            .is_none());
    }

    #[test]
    fn refuses_what_it_cannot_run_safely() {
        assert!(matches!(cmd(""), Err(FleetError::NoCommand)));
        assert!(matches!(
            cmd("rm -rf /"),
            Err(FleetError::UnknownCommand(_))
        ));
        assert!(matches!(cmd("check etcd rel"), Err(FleetError::NoHostPath)));
        assert!(matches!(
            cmd("check etcd /var/../etc"),
            Err(FleetError::BadHostPath { .. })
        ));
        // QA: a newline went into the Job as a two-line block scalar, in a path or an option.
        for (p, why) in [
            ("/x\ny", "control character"),
            ("/var/lib/etcd\t", "control character"),
            ("/var/lib/\u{202e}dcte", "bidirectional"),
            ("/var/lib/e\u{200b}tcd", "invisible"),
            ("/x\u{2028}y", "line or paragraph separator"),
        ] {
            let words = ["check".to_string(), "etcd".into(), p.into()];
            let e = NodeCommand::parse(&words).unwrap_err().to_string();
            assert!(
                e.starts_with("node command argument `") && e.contains(why),
                "{p:?}: {e}"
            );
            // An option's value is checked alike.
            let words = ["check".to_string(), "etcd".into(), "/x".into(), p.into()];
            let e = NodeCommand::parse(&words).unwrap_err().to_string();
            assert!(e.contains(why), "{p:?}: {e}");
        }
        for p in [
            "/",
            "//",
            "/proc/",
            "/sys",
            "/dev",
            // QA: these were accepted; /proc/1/root is the node's root filesystem.
            "/proc/1/root",
            "/proc/self/root/etc",
            "/sys/kernel",
            "/sys/fs/cgroup",
            "/dev/shm",
            "/dev/pts",
            "/dev/mqueue",
            "/dev/hugepages",
            "/dev/loop-control",
            "/dev/mapper/control",
            "/dev/null",
            "/dev/disk",
            "/dev/disk/by-id",
            "/dev/sd",
            "/dev/sdb/x",
        ] {
            assert!(
                matches!(
                    cmd(&format!("check etcd {p}")),
                    Err(FleetError::BadHostPath { .. })
                ),
                "{p}"
            );
        }
        assert!(matches!(
            cmd("check etcd /x --format text"),
            Err(FleetError::ReservedOption(_))
        ));
        assert!(matches!(
            cmd("check etcd /x --db=/tmp/a"),
            Err(FleetError::ReservedOption(_))
        ));
    }

    #[test]
    fn block_devices_are_known_by_name() {
        for p in [
            "/dev/sdb",
            "/dev/sdb1",
            "/dev/vdc",
            "/dev/xvdf",
            "/dev/nvme1n1",
            "/dev/nvme0n1p2",
            "/dev/loop3",
            "/dev/md0",
            "/dev/md/data",
            "/dev/dm-0",
            "/dev/mapper/vg0-etcd",
            "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1",
            "/dev/disk/by-uuid/0b6a2c1e-7d3f-4f59-9f0a-5c2b8e1d4a77",
            "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1",
        ] {
            let c = cmd(&format!("bench {p} --rw randread")).unwrap();
            assert_eq!(c.host_paths[0].kind, PathKind::BlockDevice, "{p}");
            assert!(c.privileged.is_some(), "{p}");
        }
        // Names that only start like a kernel tree are ordinary directories.
        let c = cmd("check etcd /system/etcd /procedures /devices").unwrap();
        assert_eq!(c.host_paths.len(), 3);
        assert!(c.host_paths.iter().all(|h| h.kind == PathKind::Directory));
    }

    /// QA: `check etcd --metrics http://user:PASSWORD@host/metrics` put the password into the
    /// Job's container args, readable by anyone who may read Jobs, and printed by `--dry-run`.
    #[test]
    fn a_metrics_url_with_credentials_is_refused_without_showing_them() {
        for args in [
            "check etcd --metrics http://u:s3cret@127.0.0.1:2381/metrics",
            "check etcd --metrics=https://u:s3cret@10.0.0.5:2379",
            "check etcd --metrics http://127.0.0.1:2381,http://u:s3cret@10.0.0.6:2381/metrics",
            "check etcd --metrics http://s3cret@127.0.0.1:2381/metrics",
            "check etcd --metrics http://u:s3c@ret@127.0.0.1:2381/metrics?x=1",
        ] {
            let e = cmd(args).unwrap_err();
            assert!(matches!(e, FleetError::Invalid { .. }), "{args}: {e}");
            let msg = e.to_string();
            assert!(!msg.contains("s3c"), "{args}: {msg}");
            assert!(msg.contains("--cacert") && msg.contains("xxxxx@"), "{msg}");
        }
        // An @ in the path or query is no user information; a password-less URL runs.
        assert!(cmd("check etcd --metrics http://127.0.0.1:2381/metrics?a=b@c").is_ok());
        assert!(cmd("check etcd --metrics http://127.0.0.1:2381/metrics").is_ok());
        // Only the --metrics value is read as URLs.
        assert!(cmd("check etcd /var/lib/etcd --profile etcd").is_ok());
    }

    /// QA: the kubelet expands `$(VAR)` in container args and turns `$$` into `$`, so
    /// `/data/$(NODE_NAME)` was mounted as written and measured as `/data/NODE`.
    #[test]
    fn a_dollar_reaches_the_node_command_as_typed() {
        let c = NodeCommand::parse(&[
            "check".into(),
            "etcd".into(),
            "/data/$(NODE_NAME)/a$$b$".into(),
        ])
        .unwrap();
        assert_eq!(c.host_paths[0].path, "/data/$(NODE_NAME)/a$$b$");
        assert_eq!(c.container_args()[2], "/data/$$(NODE_NAME)/a$$$$b$$");
    }

    /// QA: `interfere DIR --aggressor-cmd '/usr/bin/dd if=...'` mounted the whole command line
    /// as a hostPath directory; the command could not run in disktier's image anyway.
    #[test]
    fn an_aggressor_command_is_refused_not_mounted() {
        for args in [
            vec![
                "interfere",
                "/var/lib/etcd",
                "--aggressor-cmd",
                "/usr/bin/dd if=/dev/zero of=x",
            ],
            vec![
                "interfere",
                "/var/lib/etcd",
                "--aggressor-cmd=tar xf /srv/u.tar",
            ],
        ] {
            let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let e = NodeCommand::parse(&a).err().unwrap().to_string();
            assert!(
                e.contains("--aggressor-cmd") && e.contains("--aggressor ("),
                "{e}"
            );
        }
        assert!(cmd("interfere /var/lib/etcd --aggressor bulk-seq").is_ok());
    }
}
