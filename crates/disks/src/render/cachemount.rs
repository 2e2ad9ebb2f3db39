//! `render bcache|lvmcache --mount DIR`: the last step of a cache script, which makes the
//! filesystem on the cached device (`/dev/bcache/by-uuid/UUID`, `/dev/VG/LV`) when, and only
//! when, it holds none, and mounts it now and at every boot with a systemd mount unit (the
//! one `disktier setup` writes, [`crate::setup::persist::fs_unit`], `nofail`). Without it the
//! cached device was left blank and unmounted: `disktier setup --devices /dev/bcache0` by hand.
//!
//! Every value reaching the script is a checked type of [`crate::valid`] (the same as `setup`
//! and `render systemd` take), shell-quoted.

use super::script::mkfs_command;
use super::RenderError;
use crate::setup::persist::{fs_unit, mount_unit_name};
use crate::valid::{check_mount_names, check_unit_where, FsType, Label, MountOptions, MountPath};
use disktier_cmd::shell_quote;

/// What the user typed for the mount, before checks.
#[derive(Debug, Clone, Default)]
pub struct CacheMountInput {
    pub mount: String,
    pub fs: Option<FsType>,
    pub label: Option<String>,
    /// Extra mount options (each entry may hold several, comma-separated).
    pub options: Vec<String>,
}

/// The checked mount of a cached device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheMount {
    pub mount: MountPath,
    pub fs: FsType,
    pub label: Label,
    pub options: MountOptions,
}

/// Stands for the device in the rendered unit until the script puts the real path there; a
/// control character, which no checked value can hold.
const DEVICE: char = '\u{1}';

impl CacheMount {
    pub fn new(input: CacheMountInput) -> Result<CacheMount, RenderError> {
        let mount = MountPath::parse("--mount", &input.mount)?;
        check_mount_names("--mount", &mount)?;
        check_unit_where("--mount", &mount)?;
        super::intent::refuse_as_setup(crate::setup::config::kernel_fs_refusal("--mount", &mount))?;
        let fs = input.fs.unwrap_or(FsType::Xfs);
        let label = input
            .label
            .unwrap_or_else(|| super::intent::DEFAULT_LABEL.to_string());
        let label = Label::parse("--label", &label, fs.as_str(), fs.max_label(), 0, "")?;
        let options = MountOptions::parse("--options", &input.options)?;
        Ok(CacheMount {
            mount,
            fs,
            label,
            options,
        })
    }

    fn wants_prjquota(&self) -> bool {
        self.options.contains("prjquota") || self.options.contains("pquota")
    }

    /// The mount unit's text around the device path: (before, after).
    fn unit_parts(&self) -> (String, String) {
        let unit = fs_unit(
            &DEVICE.to_string(),
            &self.mount,
            self.fs.as_str(),
            &self.options.joined(),
        );
        // fs_unit's first line speaks for `disktier setup`; this one is the script's.
        let body = unit.split_once('\n').map_or(unit.as_str(), |(_, b)| b);
        let unit = format!(
            "# Written by the disktier cache script: the cached device at {}.\n{body}",
            self.mount
        );
        let (head, tail) = unit.split_once(DEVICE).expect("fs_unit names the device");
        // Without its last newline: the script compares it with `$(cat unit)`, which drops it.
        (head.to_string(), tail.trim_end_matches('\n').to_string())
    }

    /// The script's last step. `device` is a shell word naming the cached device's stable
    /// path, `made_by` what creates that path (for the error when it does not appear).
    pub(crate) fn section(&self, device: &str, made_by: &str) -> String {
        let (head, tail) = self.unit_parts();
        let unit_name = mount_unit_name(&self.mount);
        fill(
            SECTION,
            &[
                ("MOUNT", &shell_quote(&self.mount)),
                ("FS", self.fs.as_str()),
                ("LABEL", &shell_quote(&self.label)),
                ("UNIT", &shell_quote(&unit_name)),
                ("UNIT_HEAD", &shell_quote(&head)),
                ("UNIT_TAIL", &shell_quote(&tail)),
                ("DEVICE", device),
                ("MADE_BY", made_by),
                ("MKFS", mkfs_command(self.fs, self.wants_prjquota())),
            ],
        )
    }
}

/// `template` with each `@NAME@` of `values` replaced by its value, in one pass: what a value
/// holds is never read for placeholders again. (Found by QA: the placeholders were replaced one
/// after another, so a `--mount /mnt/@FS@`, a path the checks allow, became `MOUNT=/mnt/xfs`
/// while the unit mounted `/mnt/@FS@`, and `/mnt/@UNIT_HEAD@` took in the quoted unit text and
/// broke the script's quoting.) An `@` that starts no placeholder stays as it is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 1024);
    let mut rest = template;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let hit = values
            .iter()
            .find(|(name, _)| after.strip_prefix(name).is_some_and(|r| r.starts_with('@')));
        match hit {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len() + 1..];
            }
            None => {
                out.push('@');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The mount step. Placeholders: @MOUNT@ @FS@ @LABEL@ @UNIT@ @UNIT_HEAD@ @UNIT_TAIL@ (shell-quoted
/// above), @DEVICE@, @MADE_BY@, @MKFS@ (fixed text of the renderer).
const SECTION: &str = r#"
# 7. The filesystem on the cached device, mounted at MOUNT now and, by a systemd mount unit
#    (nofail), at every boot. Made only when the device holds no signature at all: a device
#    holding anything is never written to (a re-run, or a reboot, mounts what is there).
MOUNT=@MOUNT@
FS=@FS@
LABEL=@LABEL@
UNIT=@UNIT@
UNIT_DIR=/etc/systemd/system
device=@DEVICE@

if [ -n "${DRY_RUN:-}" ] && [ ! -e "$device" ]; then
    log "dry run: $device does not exist yet; a real run makes $FS labelled $LABEL on it and mounts it at $MOUNT"
    exit 0
fi
# Up to 30 s (150 x 0.2 s) for udev to create the stable path.
udevadm settle >/dev/null 2>&1 || true
for _ in $(seq 1 150); do
    [ ! -e "$device" ] || break
    sleep 0.2
done
[ -e "$device" ] || die "$device did not appear (@MADE_BY@)"
target=$(readlink -f "$device")
[ -b "$target" ] || die "$device ($target) is not a block device"

# MOUNT, before anything is written: a mount of this device (a re-run), or an empty directory
# (mounting over files would hide them).
mounted=""
if src=$(findmnt -rn -o SOURCE --mountpoint "$MOUNT" 2>/dev/null); then
    [ "$(readlink -f "$src")" = "$target" ] || die "$MOUNT is a mount of $src already, not of $device"
    mounted=1
else
    [ -z "$(ls -A "$MOUNT" 2>/dev/null)" ] || die "$MOUNT is not empty: move what it holds away, then run this again"
fi

# blkid -p probes the device itself: exit 0 = a signature, 2 = nothing found.
if out=$(blkid -p -o export "$target" 2>&1); then
    have=$(echo "$out" | sed -n 's/^TYPE=//p')
    [ "$have" = "$FS" ] || die "$device ($target) holds $(echo "$out" | grep -E '^(TYPE|PTTYPE)=' | tr '\n' ' '), not $FS: refusing to format it (wipefs it yourself if that is intended)"
    log "$device holds $FS already: not formatting it"
else
    rc=$?
    # Exit 2 with a message means blkid could not read the device: not blank.
    [ "$rc" = 2 ] && [ -z "$out" ] || die "blkid -p $target failed ($rc): $out"
    log "making $FS labelled $LABEL on $device"
    run @MKFS@
fi

# The mount unit, by the stable path (not /dev/bcacheN or /dev/dm-N, which can change).
unit=@UNIT_HEAD@"$device"@UNIT_TAIL@
if [ "$(cat "$UNIT_DIR/$UNIT" 2>/dev/null || true)" != "$unit" ]; then
    if [ -n "${DRY_RUN:-}" ]; then
        echo "+ write $UNIT_DIR/$UNIT"
    else
        printf '%s\n' "$unit" > "$UNIT_DIR/$UNIT"
    fi
    run systemctl daemon-reload
fi
run systemctl enable "$UNIT"
if [ -n "$mounted" ]; then
    log "$MOUNT is mounted already"
else
    run mkdir -p "$MOUNT"
    run systemctl start "$UNIT"
fi
log "$device is mounted at $MOUNT ($UNIT)"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn input(mount: &str) -> CacheMountInput {
        CacheMountInput {
            mount: mount.into(),
            ..Default::default()
        }
    }

    #[test]
    fn unit_mounts_the_stable_path_with_nofail() {
        let m = CacheMount::new(input("/data")).unwrap();
        let (head, tail) = m.unit_parts();
        assert!(head.ends_with("What="), "{head}");
        assert!(tail.starts_with("\nWhere=/data\nType=xfs\nOptions=defaults,noatime,nofail\n"));
        assert!(tail.ends_with("WantedBy=local-fs.target"), "{tail}");
    }

    #[test]
    fn a_mount_path_holding_a_placeholder_is_written_as_given() {
        // Found by QA: `render bcache --mount /mnt/@FS@` wrote MOUNT=/mnt/xfs beside the unit's
        // Where=/mnt/@FS@, and /mnt/@UNIT_HEAD@ took in the quoted unit text.
        let mount = "/mnt/@FS@ @LABEL@ @MKFS@ @UNIT_HEAD@ @DEVICE@ @";
        let m = CacheMount::new(input(mount)).unwrap();
        let text = m.section("\"/dev/bcache/by-uuid/$uuid\"", "made by udev");
        let lines = |key: &str| -> Vec<&str> {
            text.lines()
                .filter_map(|l| l.strip_prefix(key))
                .collect::<Vec<_>>()
        };
        assert_eq!(lines("MOUNT="), [format!("'{mount}'").as_str()]);
        assert_eq!(lines("Where="), [mount]);
        assert_eq!(lines("LABEL="), ["disktier"]);
        assert_eq!(lines("FS="), ["xfs"]);
        assert!(!text.contains("@UNIT_TAIL@") && !text.contains("@MADE_BY@"));
        assert_eq!(
            fill("a @X@ @Y@ @XY@ @ @X", &[("X", "@Y@"), ("Y", "y")]),
            "a @Y@ y @XY@ @ @X"
        );
    }

    #[test]
    fn bad_mounts_and_labels_are_refused() {
        for bad in ["data", "/data/../etc", "/da\nta", "/data$x", "/a/`b`"] {
            assert!(CacheMount::new(input(bad)).is_err(), "{bad:?}");
        }
        // As setup refuses them (QA: accepted here).
        for kernel in ["/proc/x", "/sys", "/dev/shm/d"] {
            let e = CacheMount::new(input(kernel)).unwrap_err().to_string();
            assert!(e.contains("a kernel filesystem that holds no data"), "{e}");
        }
        let mut i = input("/data");
        i.label = Some("thirteen-char".into());
        let e = CacheMount::new(i.clone()).unwrap_err().to_string();
        assert!(e.contains("xfs holds at most 12"), "{e}");
        i.fs = Some(FsType::Ext4);
        assert!(CacheMount::new(i).is_ok());
    }
}
