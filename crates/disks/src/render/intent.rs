//! The checked intent shared by the renderers that format and mount a disk (openshift, systemd,
//! cloud-init): mount point, options, filesystem, label, owner, mode, binds and disk selection.
//! [`IntentInput`] holds what the user typed; [`Intent::new`] checks it.

use super::RenderError;
use crate::setup::config::{kernel_fs_refusal, read_only_refusal};
use crate::valid::{
    check_bind_names, check_mount_names, check_unit_where, FsType, Label, Mode, MountOptions,
    MountPath, Owner,
};
use serde::Serialize;

/// Disk models of local ephemeral disks, as sysfs reports them (docs/sources.md
/// [eks-setup-local-disks], [bottlerocket-ephemeral], [gke-local-ssd]: EKS/Bottlerocket match `Amazon EC2 NVMe Instance Storage`, GKE matches
/// exactly `nvme_card` (`nvme_card-pd` is a persistent disk), Azure `Microsoft NVMe Direct Disk`
/// and its `v2`). Shell patterns, matched against the whole model.
pub const KNOWN_EPHEMERAL_MODELS: [&str; 3] = [
    "Amazon EC2 NVMe Instance Storage",
    "nvme_card",
    "Microsoft NVMe Direct Disk*",
];

/// Which disks the rendered machinery uses, decided on the node at boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "by", content = "value")]
pub enum DiskSelect {
    /// Disks whose sysfs model matches one of these shell patterns.
    Model(Vec<String>),
    /// Disks behind the links matching this `/dev/disk/by-id/` (or by-path) glob.
    ById(String),
}

impl DiskSelect {
    /// The default: the disks whose model is one of [`KNOWN_EPHEMERAL_MODELS`].
    pub(crate) fn known_ephemeral() -> DiskSelect {
        DiskSelect::Model(
            KNOWN_EPHEMERAL_MODELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        )
    }
}

/// What the user typed, before checks.
#[derive(Debug, Clone, Default)]
pub struct IntentInput {
    pub mount: String,
    /// Extra mount options (each entry may hold several, comma-separated).
    pub options: Vec<String>,
    pub fs: Option<FsType>,
    pub label: Option<String>,
    pub owner: Option<String>,
    pub mode: Option<String>,
    pub binds: Vec<String>,
    pub models: Vec<String>,
    pub by_id: Option<String>,
}

/// The checked intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Intent {
    pub mount: MountPath,
    /// All mount options, defaults first (`defaults,noatime`, as EKS and disktier setup use).
    pub options: MountOptions,
    pub fs: FsType,
    pub label: Label,
    pub owner: Option<Owner>,
    pub mode: Option<Mode>,
    /// Bind targets, parents before children.
    pub binds: Vec<MountPath>,
    pub select: DiskSelect,
}

/// Default label: what `disktier setup` uses, so either can find the other's filesystem.
pub const DEFAULT_LABEL: &str = "disktier";

impl Intent {
    pub fn new(input: IntentInput) -> Result<Intent, RenderError> {
        let mount = MountPath::parse("--mount", &input.mount)?;
        check_mount_names("--mount", &mount)?;
        check_unit_where("--mount", &mount)?;
        refuse_as_setup(kernel_fs_refusal("--mount", &mount))?;
        let fs = input.fs.unwrap_or(FsType::Xfs);
        let label = input.label.unwrap_or_else(|| DEFAULT_LABEL.to_string());
        let label = Label::parse("--label", &label, fs.as_str(), fs.max_label(), 0, "")?;
        let options = MountOptions::parse("--options", &input.options)?;
        let owner = input
            .owner
            .map(|o| Owner::parse("--owner", &o))
            .transpose()?;
        let mode = input.mode.map(|m| Mode::parse("--mode", &m)).transpose()?;

        let mut binds: Vec<MountPath> = Vec::new();
        // An empty entry (`/a,,/b`) is refused, not dropped ([`crate::valid::comma_items`]).
        for b in crate::valid::comma_items("--bind", &input.binds)? {
            let b = MountPath::parse("--bind", &b)?;
            check_bind_names("--bind", &b)?;
            check_unit_where("--bind", &b)?;
            refuse_as_setup(kernel_fs_refusal("--bind", &b))?;
            if b == mount || b.is_below(&mount) {
                return Err(RenderError::BindOverlap {
                    bind: b.to_string(),
                    mount: mount.to_string(),
                    relation: "inside or equal to",
                });
            }
            if mount.is_below(&b) {
                return Err(RenderError::BindOverlap {
                    bind: b.to_string(),
                    mount: mount.to_string(),
                    relation: "a parent of",
                });
            }
            if !binds.contains(&b) {
                binds.push(b);
            }
        }
        // Parents before children, so a child bind is not hidden by its parent's (issue 4).
        binds.sort_by_key(|b| (b.depth(), b.clone()));
        // The binds unit chowns, chmods and copies onto the mount: on a read-only one it would
        // fail at every boot (found by QA: setup refused this, render did not).
        refuse_as_setup(read_only_refusal(
            &options,
            &[
                ("--owner", owner.is_some()),
                ("--mode", mode.is_some()),
                ("--bind", !binds.is_empty()),
            ],
        ))?;

        let select = match (input.by_id, input.models.is_empty()) {
            (Some(_), false) => {
                return Err(RenderError::Conflict {
                    what: "--by-id",
                    other: "--model",
                    why: "select the disks one way",
                })
            }
            (Some(glob), true) => {
                let glob = check_stable_path(
                    "--by-id",
                    &glob,
                    ", or select the disks by model with --model",
                )?;
                check_no_network_link(&glob)?;
                DiskSelect::ById(glob)
            }
            (None, false) => {
                for m in &input.models {
                    check_model(m)?;
                    check_no_network_model(m)?;
                }
                DiskSelect::Model(input.models)
            }
            (None, true) => DiskSelect::known_ephemeral(),
        };

        Ok(Intent {
            mount,
            options,
            fs,
            label,
            owner,
            mode,
            binds,
            select,
        })
    }

    /// Whether the options ask for project quotas (`prjquota`/`pquota`), which kubelet's quota
    /// monitoring of ephemeral storage needs (docs/sources.md [ocp-container-storage-disk],
    /// [recipe-ocp-instance-disk]).
    pub fn wants_prjquota(&self) -> bool {
        self.options.contains("prjquota") || self.options.contains("pquota")
    }

    pub fn options_string(&self) -> String {
        self.options.joined()
    }
}

/// A refusal of `disktier setup`'s checks ([`crate::setup::config`]), as a render error.
pub(crate) fn refuse_as_setup(why: Option<String>) -> Result<(), RenderError> {
    match why {
        Some(why) => Err(RenderError::SetupRefuses { why }),
        None => Ok(()),
    }
}

fn check_model(model: &str) -> Result<(), RenderError> {
    if model.is_empty()
        || model
            .chars()
            .any(|c| c.is_control() || c == '\'' || c == '"' || c == '\\')
    {
        return Err(RenderError::BadValue {
            flag: "model",
            value: model.to_string(),
            why: "give the model as sysfs shows it (cat /sys/block/*/device/model), without quotes"
                .into(),
        });
    }
    if wildcards_only(model) {
        return Err(RenderError::MatchesEverything {
            flag: "--model",
            pattern: model.to_string(),
            fix: "give the model as sysfs shows it (cat /sys/block/*/device/model), e.g. 'Amazon EC2 NVMe Instance Storage'",
        });
    }
    Ok(())
}

/// Whether a shell pattern has no fixed character at all (`*`, `?*`, `**`): it matches any
/// name (found by QA: `--model '*'` and `--by-id '/dev/disk/by-id/*'` were accepted).
fn wildcards_only(pattern: &str) -> bool {
    pattern.chars().all(|c| c == '*' || c == '?')
}

/// The models of network volumes (EBS, GCP persistent disk, Azure managed disk), as
/// [`crate::discover::DiskClass::from_model`] names them.
const NETWORK_MODELS: &[&str] = &[
    "Amazon Elastic Block Store",
    "nvme_card-pd",
    "PersistentDisk",
    "MSFT NVMe Accelerator v1.0",
];

/// `/dev/disk/by-id/` names udev gives network volumes, as the fixture nodes show them
/// (`crates/disks/tests/fixtures/sysfs/`): an EBS volume by model and serial and by its NVMe
/// EUI (`nvme.1d0f-` then the serial in hex, as an instance store's), a GCP persistent disk by
/// Google's udev rule, an Azure managed disk on NVMe.
const NETWORK_LINKS: &[&str] = &[
    "nvme-Amazon_Elastic_Block_Store_vol0a1b2c3d4e5f60718",
    "nvme-nvme.1d0f-766f6c3061316232633364346535663630373138",
    "google-persistent-disk-0",
    "nvme-MSFT_NVMe_Accelerator_v1.0_SN-OS-0000000001",
];

/// A `--model` pattern that also matches a network volume's model: the boot-time script would
/// format every blank one of them attached to the node (found by QA: `--model '*e*'` matched
/// "Amazon Elastic Block Store" and was rendered, as was the model itself).
fn check_no_network_model(pattern: &str) -> Result<(), RenderError> {
    match NETWORK_MODELS.iter().find(|m| glob_matches(pattern, m)) {
        Some(m) => Err(RenderError::MatchesNetworkVolume {
            flag: "--model",
            pattern: pattern.to_string(),
            name: (*m).to_string(),
            fix: "give the local disks' model (cat /sys/block/*/device/model), e.g. 'Amazon EC2 NVMe Instance Storage'",
        }),
        None => Ok(()),
    }
}

/// A `--by-id` glob that also matches a network volume's link, as [`check_no_network_model`]
/// (found by QA: `--by-id '/dev/disk/by-id/nvme-*'` and `'/dev/disk/by-id/[a-z]*'` were
/// rendered, and on AWS both match every EBS volume). A path without a wildcard names one disk
/// and is taken as meant.
fn check_no_network_link(glob: &str) -> Result<(), RenderError> {
    let Some(name) = glob.strip_prefix("/dev/disk/by-id/") else {
        return Ok(());
    };
    if !name.contains(['*', '?', '[']) {
        return Ok(());
    }
    match NETWORK_LINKS.iter().find(|l| glob_matches(name, l)) {
        Some(l) => Err(RenderError::MatchesNetworkVolume {
            flag: "--by-id",
            pattern: glob.to_string(),
            name: format!("/dev/disk/by-id/{l}"),
            fix: "narrow it to the local disks' links (ls -l /dev/disk/by-id/), e.g. /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*",
        }),
        None => Ok(()),
    }
}

/// Whether shell pattern `pat` matches all of `name`, as bash's `[[ name == pat ]]` and a
/// pathname expansion within one directory do: `*`, `?`, and brackets (`[a-z]`, `[!0-9]`,
/// `[^x]`); anything else matches itself. A bracket left open matches a literal `[`.
fn glob_matches(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matching with one backtrack point for the last `*` (linear in practice).
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => {
                bracket(&p, pi, n[ni]).unwrap_or(if n[ni] == '[' { Some(pi + 1) } else { None })
            }
            Some(c) if *c == n[ni] => Some(pi + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                ni += 1;
            }
            (None, Some((sp, sn))) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The bracket expression opening at `p[at]` against `c`: `None` when it is not closed (then
/// `[` is literal), else `Some(Some(index after it))` on a match and `Some(None)` on none.
fn bracket(p: &[char], at: usize, c: char) -> Option<Option<usize>> {
    let mut i = at + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let first = i;
    let mut hit = false;
    while let Some(&x) = p.get(i) {
        if x == ']' && i > first {
            return Some((hit != negate).then_some(i + 1));
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            hit |= x <= c && c <= p[i + 2];
            i += 3;
        } else {
            hit |= x == c;
            i += 1;
        }
    }
    None
}

/// Whether a by-id/by-path link name (or glob) can only be a partition's: udev names those
/// `DISK-partN`, and the rendered script and the cache scripts skip or refuse them.
fn names_a_partition(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.match_indices("-part").any(|(i, _)| {
        name[i + 5..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || "*?[".contains(c))
    })
}

/// Is `path` a kernel name directly under /dev (`/dev/nvme1n1`, `/dev/sdb`, `/dev/xvdf`,
/// `/dev/md0`, ...)? Those move between boots; only /dev/disk/by-* links are stable.
pub(crate) fn is_kernel_name(path: &str) -> bool {
    match path.strip_prefix("/dev/") {
        Some(rest) => !rest.contains('/') && !rest.is_empty(),
        None => false,
    }
}

/// A disk path or glob that survives reboots: under /dev/disk/by-id/ or /dev/disk/by-path/.
/// `flag` names the option that held it and `alt` another way to select the disk ("" if none),
/// so the error suggests only options the command has.
pub(crate) fn check_stable_path(
    flag: &'static str,
    path: &str,
    alt: &'static str,
) -> Result<String, RenderError> {
    if is_kernel_name(path) {
        return Err(RenderError::KernelName {
            flag,
            path: path.to_string(),
            alt,
        });
    }
    let ok_prefix = ["/dev/disk/by-id/", "/dev/disk/by-path/"]
        .iter()
        .any(|p| path.starts_with(p) && path.len() > p.len());
    let ok_chars = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-_.:+@*?[]!".contains(c));
    if !ok_prefix || !ok_chars || path.contains("..") {
        return Err(RenderError::NotStablePath {
            path: path.to_string(),
        });
    }
    if wildcards_only(path.rsplit('/').next().unwrap_or(path)) {
        return Err(RenderError::MatchesEverything {
            flag,
            pattern: path.to_string(),
            fix: "give a glob with a fixed part, e.g. /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*",
        });
    }
    if names_a_partition(path) {
        return Err(RenderError::Partition {
            flag,
            path: path.to_string(),
        });
    }
    Ok(path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(mount: &str) -> IntentInput {
        IntentInput {
            mount: mount.into(),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_xfs_labelled_disktier_with_noatime_on_known_ephemeral_models() {
        let i = Intent::new(input("/var/lib/containers/")).unwrap();
        assert_eq!(i.mount, "/var/lib/containers");
        assert_eq!(i.fs, FsType::Xfs);
        assert_eq!(i.label.as_str(), "disktier");
        assert_eq!(i.options_string(), "defaults,noatime");
        assert_eq!(
            i.select,
            DiskSelect::Model(
                KNOWN_EPHEMERAL_MODELS
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            )
        );
    }

    #[test]
    fn what_setup_refuses_is_refused_in_its_words() {
        // Found by QA: `render systemd --options ro --owner ...` and `--mount /proc/x` rendered
        // units that failed at every boot (chown on a read-only mount; a mount in procfs),
        // where `disktier setup` refuses both before anything runs.
        let mut inp = input("/data");
        inp.options = vec!["ro".into()];
        inp.owner = Some("1000:1000".into());
        inp.binds = vec!["/var/lib/kubelet".into()];
        assert_eq!(
            Intent::new(inp).unwrap_err().to_string(),
            "--options ro mounts the filesystem read-only, but --owner, --bind must write to it: drop ro, or drop --owner and --bind"
        );
        let mut inp = input("/data");
        inp.options = vec!["ro".into()];
        assert!(Intent::new(inp).is_ok(), "ro alone is fine");
        assert_eq!(
            Intent::new(input("/proc/x")).unwrap_err().to_string(),
            "--mount /proc/x lies in /proc, a kernel filesystem that holds no data: choose a directory on a disk, e.g. /var/lib/containers"
        );
        let mut inp = input("/data");
        inp.binds = vec!["/var/lib/kubelet,/sys/fs/x".into()];
        assert!(Intent::new(inp)
            .unwrap_err()
            .to_string()
            .starts_with("--bind /sys/fs/x lies in /sys"));
    }

    #[test]
    fn options_are_added_once_and_prjquota_is_seen() {
        let mut inp = input("/data");
        inp.options = vec!["prjquota,noatime".into(), "discard".into()];
        let i = Intent::new(inp).unwrap();
        assert_eq!(i.options_string(), "defaults,noatime,prjquota,discard");
        assert!(i.wants_prjquota());
    }

    #[test]
    fn kernel_names_are_refused_with_the_by_id_fix() {
        for p in ["/dev/nvme1n1", "/dev/sdb", "/dev/xvdf", "/dev/md0"] {
            let mut inp = input("/data");
            inp.by_id = Some(p.into());
            let e = Intent::new(inp).unwrap_err();
            assert!(
                matches!(&e, RenderError::KernelName { path, .. } if path == p),
                "{e}"
            );
            assert!(e.to_string().contains("/dev/disk/by-id/"), "{e}");
        }
        let mut inp = input("/data");
        inp.by_id = Some("/tmp/disk".into());
        assert!(matches!(
            Intent::new(inp).unwrap_err(),
            RenderError::NotStablePath { .. }
        ));
    }

    #[test]
    fn globs_that_match_every_disk_or_only_partitions_are_refused() {
        // Found by QA: these were rendered, and would have formatted any blank disk.
        let mut inp = input("/data");
        inp.by_id = Some("/dev/disk/by-id/*".into());
        let e = Intent::new(inp).unwrap_err();
        assert!(matches!(e, RenderError::MatchesEverything { .. }), "{e}");
        let mut inp = input("/data");
        inp.models = vec!["*".into()];
        let e = Intent::new(inp).unwrap_err().to_string();
        assert!(e.starts_with("--model \"*\" matches every disk"), "{e}");
        for part in [
            "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1-part1",
            "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*-part*",
            "/dev/disk/by-path/pci-0000:00:1f.0-nvme-1-part[12]",
        ] {
            let mut inp = input("/data");
            inp.by_id = Some(part.into());
            let e = Intent::new(inp).unwrap_err();
            assert!(matches!(e, RenderError::Partition { .. }), "{part}: {e}");
        }
        // A fixed part is enough; "-part" in a model-like name that is not -partN is fine.
        for ok in [
            "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*",
            "/dev/disk/by-id/scsi-Vendor-partner_1",
        ] {
            let mut inp = input("/data");
            inp.by_id = Some(ok.into());
            assert!(Intent::new(inp).is_ok(), "{ok}");
        }
    }

    #[test]
    fn labels_too_long_for_the_filesystem_are_refused() {
        let mut inp = input("/data");
        inp.label = Some("thirteenchars".into());
        let e = Intent::new(inp.clone()).unwrap_err();
        assert!(e.to_string().contains("xfs holds at most 12"), "{e}");
        inp.fs = Some(FsType::Ext4);
        assert_eq!(Intent::new(inp).unwrap().label.as_str(), "thirteenchars");
    }

    #[test]
    fn binds_are_ordered_parent_first_and_may_not_overlap_the_mount() {
        let mut inp = input("/mnt/disks/ssd");
        inp.binds = vec![
            "/var/lib/kubelet/pods,/var/lib/containerd".into(),
            "/var/lib/kubelet".into(),
        ];
        let i = Intent::new(inp).unwrap();
        assert_eq!(
            i.binds.iter().map(|b| b.as_str()).collect::<Vec<_>>(),
            [
                "/var/lib/containerd",
                "/var/lib/kubelet",
                "/var/lib/kubelet/pods"
            ]
        );
        let mut inp = input("/mnt/disks/ssd");
        inp.binds = vec!["/mnt/disks/ssd/x".into()];
        assert!(matches!(
            Intent::new(inp).unwrap_err(),
            RenderError::BindOverlap { .. }
        ));
        let mut inp = input("/mnt/disks/ssd");
        inp.binds = vec!["/mnt".into()];
        assert!(matches!(
            Intent::new(inp).unwrap_err(),
            RenderError::BindOverlap { .. }
        ));
    }

    #[test]
    fn relative_or_odd_mounts_are_refused() {
        assert!(matches!(
            Intent::new(input("var/lib")).unwrap_err(),
            RenderError::Invalid(_)
        ));
        assert!(Intent::new(input("/var/../etc")).is_err());
        assert!(Intent::new(input("/var/lib/my\ndir")).is_err());
        assert!(Intent::new(input("/")).is_err());
    }

    #[test]
    fn owner_and_mode_are_checked() {
        let mut inp = input("/data");
        inp.owner = Some("ec2-user:ec2-user".into());
        inp.mode = Some("0750".into());
        assert!(Intent::new(inp.clone()).is_ok());
        inp.mode = Some("999".into());
        assert!(Intent::new(inp.clone()).is_err());
        inp.mode = None;
        inp.owner = Some("root;rm".into());
        assert!(Intent::new(inp).is_err());
    }
}
