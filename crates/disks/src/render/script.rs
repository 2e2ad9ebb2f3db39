//! The boot-time script behind the rendered units (openshift, systemd, cloud-init). It is what the
//! OpenShift instance-disk recipe's three units meant to do, made safe: it finds the disks by model
//! or by-id glob on every boot, decides from their real state (never from a marker file), formats
//! only blank disks, copies what the directories already hold instead of `rm -rf`, and relabels
//! SELinux.
//!
//! Verbs: `mkfs` (before the mount unit), `binds` (after it: owner, mode, copy-in for binds),
//! `relabel` (restorecon, only where SELinux is enabled).

use super::intent::{DiskSelect, Intent};
use crate::valid::{file_slug, FsType, MountPath};
use disktier_cmd::shell_quote;

/// Where the script is installed on the node. /etc is writable on every distribution, including
/// RHCOS, whose /usr is read-only.
pub(crate) fn script_path(intent: &Intent) -> String {
    format!("/etc/disktier/{}.sh", slug(&intent.mount))
}

/// A file-name form of a path, unique per path ([`crate::valid::file_slug`]):
/// `/var/lib/containers` -> `var-lib-containers`.
pub(crate) fn slug(path: &MountPath) -> String {
    file_slug(path)
}

fn bash_array<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items
        .into_iter()
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The mkfs command line for `$target`, labelled `$LABEL` (shell variables of the script).
/// ext4 needs the quota and project features at mkfs time for `prjquota` to mount
/// (ext4(5), "project" and "quota" features); xfs only needs the mount option.
pub(crate) fn mkfs_command(fs: FsType, prjquota: bool) -> &'static str {
    match fs {
        FsType::Xfs => "mkfs.xfs -K -L \"$LABEL\" \"$target\"",
        FsType::Ext4 if prjquota => {
            "mkfs.ext4 -q -E nodiscard -O quota,project -L \"$LABEL\" \"$target\""
        }
        FsType::Ext4 => "mkfs.ext4 -q -E nodiscard -L \"$LABEL\" \"$target\"",
    }
}

/// The script's text. `platform` only appears in the header.
pub(crate) fn prepare_script(intent: &Intent, platform: &str) -> String {
    let (models, glob) = match &intent.select {
        DiskSelect::Model(m) => (bash_array(m.iter().map(String::as_str)), String::new()),
        DiskSelect::ById(g) => (String::new(), g.clone()),
    };
    let mkfs = mkfs_command(intent.fs, intent.wants_prjquota());
    let binds: Vec<&str> = intent.binds.iter().map(MountPath::as_str).collect();
    let bind_sources: Vec<String> = intent.binds.iter().map(slug).collect();
    let header = format!(
        "#!/bin/bash\n\
# Rendered by `disktier render {platform}`: prepares the {fs} filesystem labelled {label}\n\
# for {mount}. Installed as {path}; the units run it with a verb:\n\
#   mkfs     before the mount unit: make the filesystem when, and only when, it is missing\n\
#   binds    after the mount: owner, mode, and copy-in plus directories for the bind mounts\n\
#   relabel  after the mounts, where SELinux is enabled: restorecon -R\n\
#\n\
# Every boot it decides from the disks' real state, never from a marker file:\n\
#   - a filesystem labelled {label} exists: nothing to do (a reboot keeps the data);\n\
#   - otherwise the matching disks that are blank get a new filesystem (first boot, or\n\
#     after a stop/start, which hands back blank disks);\n\
#   - a disk with any signature (filesystem, partition table, RAID member), partitions,\n\
#     holders, a mount or a user (a process, a loop device) is left alone: nothing here uses\n\
#     --force.\n",
        fs = intent.fs.as_str(),
        label = intent.label,
        mount = intent.mount,
        path = script_path(intent),
    );
    let vars = format!(
        "set -euo pipefail\n\
\n\
LABEL={label}\n\
FS={fs}\n\
MOUNT={mount}\n\
# Disks whose sysfs model matches one of these shell patterns...\n\
MODELS=({models})\n\
# ...or, when set, the disks behind the links matching this glob.\n\
BY_ID_GLOB={glob}\n\
OWNER={owner}\n\
MODE={mode}\n\
# Bind targets (parents first) and their directories on the new filesystem.\n\
BINDS=({binds})\n\
BIND_SOURCES=({sources})\n\
SYS=/sys\n",
        label = shell_quote(&intent.label),
        fs = intent.fs.as_str(),
        mount = shell_quote(&intent.mount),
        models = models,
        glob = if glob.is_empty() {
            "''".to_string()
        } else {
            shell_quote(&glob)
        },
        owner = shell_quote(
            &intent
                .owner
                .as_ref()
                .map(|o| o.to_string())
                .unwrap_or_default()
        ),
        mode = shell_quote(&intent.mode.map(|m| m.to_string()).unwrap_or_default()),
        binds = bash_array(binds.iter().copied()),
        sources = bash_array(bind_sources.iter().map(String::as_str)),
    );
    let body = BODY.replace("@MKFS@", mkfs);
    format!("{header}{vars}{body}")
}

/// The part of the script that does not depend on the intent.
const BODY: &str = r#"
log() { echo "disktier: $*" >&2; }

# The device holding the filesystem labelled $LABEL, if any. -c /dev/null: probe the devices,
# do not trust blkid's cache, which can remember a disk that came back blank.
labelled() { blkid -c /dev/null -o device -t "LABEL=$LABEL" 2>/dev/null | head -n 1 || true; }

# The whole disks that match the selection, one per line.
candidates() {
    local dev name model pat link
    if [ -n "$BY_ID_GLOB" ]; then
        # The glob is left unquoted on purpose: it is expanded here, on the node.
        for link in $BY_ID_GLOB; do
            [ -e "$link" ] || continue
            case "$link" in *-part[0-9]*) continue ;; esac
            readlink -f "$link"
        done
    else
        for dev in "$SYS"/block/*; do
            name=${dev##*/}
            [ -r "$dev/device/model" ] || continue
            # sysfs pads the model with spaces.
            model=$(sed -e 's/[[:space:]]*$//' "$dev/device/model")
            for pat in "${MODELS[@]}"; do
                # shellcheck disable=SC2053 # the model is a pattern on purpose
                if [[ $model == $pat ]]; then
                    echo "/dev/$name"
                    break
                fi
            done
        done
    fi | sort -u
}

# Why a disk must not be touched; prints nothing when it is blank and free.
why_not() {
    local dev=$1 name=${1##*/} out rc p
    if [ "$(cat "$SYS/block/$name/ro" 2>/dev/null || echo 0)" != 0 ]; then
        echo "read-only"; return
    fi
    if [ -n "$(ls -A "$SYS/block/$name/holders" 2>/dev/null)" ]; then
        echo "in use by $(ls "$SYS/block/$name/holders" | tr '\n' ' ')"; return
    fi
    for p in "$SYS/block/$name/$name"*; do
        if [ -e "$p" ]; then echo "partitioned"; return; fi
    done
    if findmnt -rn -S "$dev" >/dev/null 2>&1; then
        echo "mounted"; return
    fi
    # In use without a claim the checks above see (as disktier setup looks for it): open in a
    # process (find reads each fd's link without following it), or a loop device's backing. A
    # udev worker probes a disk for a moment after it changes: looked for again for a second.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        p=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "$dev" -print -quit 2>/dev/null || true)
        [ -n "$p" ] || break
        sleep 0.1
    done
    if [ -n "$p" ]; then
        p=${p#/proc/}; echo "in use: open in process ${p%%/*}"; return
    fi
    for p in "$SYS"/block/loop*/loop/backing_file; do
        if [ -e "$p" ] && [ "$(readlink -f "$(cat "$p")")" = "$dev" ]; then
            p=${p%/loop/backing_file}; echo "in use: backs loop device /dev/${p##*/}"; return
        fi
    done
    # blkid -p probes the device itself: exit 0 = a signature, 2 = nothing found.
    if out=$(blkid -p -o export "$dev" 2>&1); then
        echo "has a signature: $(echo "$out" | grep -E '^(TYPE|PTTYPE)=' | tr '\n' ' ')"; return
    else
        rc=$?
    fi
    # Exit 2 with a message means blkid could not read the disk: not blank.
    if [ "$rc" != 2 ] || [ -n "$out" ]; then
        echo "blkid -p failed ($rc): $out"
    fi
}

# Several blank disks become one RAID0 array, named so the name survives reboots
# (--name, --homehost=any; 256K chunk: as Bottlerocket's ephemeral storage).
make_raid0() {
    if ! command -v mdadm >/dev/null; then
        log "$# blank disks but no mdadm: install mdadm, or select one disk with --by-id"
        return 1
    fi
    if ! grep -qw raid0 /proc/mdstat 2>/dev/null && ! modprobe raid0 2>/dev/null; then
        log "$# blank disks but this kernel has no md raid0 support: select one disk with --by-id"
        return 1
    fi
    # The last look right before writing: --run (no terminal to answer mdadm's questions at
    # boot) is only ever given disks that are blank this very moment.
    local d reason
    for d in "$@"; do
        reason=$(why_not "$d")
        if [ -n "$reason" ]; then
            log "leaving $d alone: $reason (changed since it was checked)"
            return 1
        fi
    done
    mdadm --create "/dev/md/$LABEL" --name="$LABEL" --homehost=any --level=0 --chunk=256 \
        --raid-devices="$#" --run "$@" >&2
    udevadm settle >/dev/null 2>&1 || true
    echo "/dev/md/$LABEL"
}

# What $MOUNT already holds (pre-pulled images, the pause image) is copied onto the new
# filesystem before it is mounted over, instead of being deleted (the OpenShift instance-disk recipe ran rm -rf).
copy_existing() {
    local target=$1 tmp
    [ -d "$MOUNT" ] && [ -n "$(ls -A "$MOUNT" 2>/dev/null)" ] || return 0
    tmp=$(mktemp -d /run/disktier.XXXXXX)
    mount "$target" "$tmp"
    if ! cp -a "$MOUNT"/. "$tmp"/; then
        umount "$tmp"; rmdir "$tmp"
        log "copying $MOUNT onto the new filesystem failed"
        return 1
    fi
    umount "$tmp"
    rmdir "$tmp"
    log "copied what $MOUNT held onto the new filesystem"
}

do_mkfs() {
    local existing dev reason target
    local -a disks=()
    udevadm settle >/dev/null 2>&1 || true
    existing=$(labelled)
    if [ -n "$existing" ]; then
        log "$existing holds the filesystem labelled $LABEL: nothing to do"
        return 0
    fi
    while read -r dev; do
        [ -n "$dev" ] || continue
        reason=$(why_not "$dev")
        if [ -n "$reason" ]; then
            log "leaving $dev alone: $reason"
        else
            disks+=("$dev")
        fi
    done < <(candidates)
    case ${#disks[@]} in
        0)
            log "no filesystem labelled $LABEL and no blank disk matches (${MODELS[*]:-$BY_ID_GLOB}): $MOUNT stays on the root disk"
            return 1
            ;;
        1)
            target=${disks[0]}
            # The last look right before mkfs.
            reason=$(why_not "$target")
            if [ -n "$reason" ]; then
                log "leaving $target alone: $reason (changed since it was checked)"
                return 1
            fi
            ;;
        *) target=$(make_raid0 "${disks[@]}") ;;
    esac
    log "making $FS labelled $LABEL on $target"
    @MKFS@
    udevadm settle >/dev/null 2>&1 || true
    if [ -z "$(labelled)" ]; then
        log "the new filesystem on $target is not visible as LABEL=$LABEL"
        return 1
    fi
    copy_existing "$target"
}

do_binds() {
    local i target source
    if ! findmnt -rn --mountpoint "$MOUNT" >/dev/null; then
        log "$MOUNT is not mounted"
        return 1
    fi
    if [ -n "$OWNER" ]; then chown "$OWNER" "$MOUNT"; fi
    if [ -n "$MODE" ]; then chmod "$MODE" "$MOUNT"; fi
    for i in "${!BINDS[@]}"; do
        target=${BINDS[$i]}
        source="$MOUNT/${BIND_SOURCES[$i]}"
        if findmnt -rn --mountpoint "$target" >/dev/null; then
            continue
        fi
        # The directory on the disk is the state: when it is missing the filesystem is new, so
        # what the target holds is copied in first.
        if [ ! -d "$source" ]; then
            mkdir -p "$source.tmp"
            if [ -d "$target" ]; then cp -a "$target"/. "$source.tmp"/; fi
            mv "$source.tmp" "$source"
            log "copied $target onto $source"
        fi
        mkdir -p "$target"
    done
}

do_relabel() {
    if ! command -v restorecon >/dev/null; then
        log "restorecon not found: skipping the SELinux relabel"
        return 0
    fi
    restorecon -R "$MOUNT" "${BINDS[@]}"
}

case "${1:-}" in
    mkfs) do_mkfs ;;
    binds) do_binds ;;
    relabel) do_relabel ;;
    *) echo "usage: $0 mkfs|binds|relabel" >&2; exit 2 ;;
esac
"#;

/// Shell functions shared by the bcache and lvmcache scripts: `die`, `run` (prints instead of
/// running with DRY_RUN=1), `resolve` (a by-id link to its device) and `refuse_unless_blank`
/// (the checks before each destructive step).
pub(crate) const CACHE_FUNCTIONS: &str = r#"die() { echo "$PROG: $*" >&2; exit 1; }
log() { echo "$PROG: $*" >&2; }

# DRY_RUN=1 prints each command that changes something instead of running it; the checks still
# run, so a dry run shows exactly what a real run would do on this machine.
run() {
    if [ -n "${DRY_RUN:-}" ]; then echo "+ $*"; else "$@"; fi
}
# Writes a value into a sysfs file (through run, so DRY_RUN shows it).
write_sys() {
    if [ -n "${DRY_RUN:-}" ]; then echo "+ echo $1 > $2"; else echo "$1" > "$2"; fi
}

# The block device behind a /dev/disk/by-id/ link.
resolve() {
    local dev
    [ -e "$1" ] || die "$1 does not exist: check ls -l /dev/disk/by-id/"
    dev=$(readlink -f "$1")
    [ -b "$dev" ] || die "$1 ($dev) is not a block device"
    echo "$dev"
}

# Refuses, before anything is written, a disk that is read-only, partitioned, a partition, in
# use by another device, mounted, swap, open in a process, a loop device's backing, or that holds
# any signature (filesystem, partition table, RAID/LVM/bcache member). Nothing in this script
# uses --force or wipes a signature.
refuse_unless_blank() {
    local link=$1 dev=$2 name=${2##*/} out rc p
    [ "$(cat "/sys/class/block/$name/ro")" = 0 ] || die "$link ($dev) is read-only"
    [ ! -e "/sys/class/block/$name/partition" ] || die "$link ($dev) is a partition: give a whole disk"
    for p in /sys/class/block/"$name"/"$name"*; do
        [ ! -e "$p" ] || die "$link ($dev) has partitions: it holds data"
    done
    [ -z "$(ls -A "/sys/class/block/$name/holders")" ] || die "$link ($dev) is in use by $(ls "/sys/class/block/$name/holders" | tr '\n' ' ')"
    ! findmnt -rn -S "$dev" >/dev/null 2>&1 || die "$link ($dev) is mounted"
    ! grep -q "^$dev " /proc/swaps || die "$link ($dev) is swap"
    # In use without a claim any check above sees (as disktier setup looks for it): open in a
    # process (find reads each fd's link without following it), or the backing of a loop device.
    # A udev worker probes a disk for a moment after it changes: looked for again for a second.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        p=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "$dev" -print -quit 2>/dev/null || true)
        [ -n "$p" ] || break
        sleep 0.1
    done
    [ -z "$p" ] || die "$link ($dev) is open in process $(echo "$p" | cut -d/ -f3): stop what uses it first"
    for p in /sys/block/loop*/loop/backing_file; do
        [ -e "$p" ] || continue
        [ "$(readlink -f "$(cat "$p")")" != "$dev" ] || die "$link ($dev) backs loop device /dev/$(echo "$p" | cut -d/ -f4): detach it first"
    done
    # blkid -p probes the device itself: exit 0 = a signature, 2 = nothing found.
    if out=$(blkid -p -o export "$dev" 2>&1); then
        die "$link ($dev) holds $(echo "$out" | grep -E '^(TYPE|PTTYPE)=' | tr '\n' ' '): refusing to overwrite it (wipefs it yourself if that is intended)"
    else
        rc=$?
    fi
    # Exit 2 with a message means blkid could not read the disk: not blank.
    [ "$rc" = 2 ] && [ -z "$out" ] || die "blkid -p $dev failed ($rc): $out"
}
"#;
