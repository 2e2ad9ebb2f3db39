//! bcache: the bcache-on-EBS recipe's cache (a fast gp3 volume in front of a slow st1 one) as a
//! reviewed script: `make-bcache -B slow -C fast`, register, attach by cset uuid, `cache_mode`, and
//! `sequential_cutoff` (made persistent with a udev rule), with checks before each destructive step
//! and a converging re-run. bcache cannot be resized online (docs/sources.md
//! [kernel-bcache]); lvmcache can [lvmcache].

use super::cachemount::CacheMount;
use super::intent::check_stable_path;
use super::script::CACHE_FUNCTIONS;
use super::{FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer};
use disktier_cmd::shell_quote;

/// bcache's cache modes (kernel Documentation/admin-guide/bcache.rst).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BcacheMode {
    Writethrough,
    Writeback,
    Writearound,
    None,
}

impl BcacheMode {
    pub fn name(self) -> &'static str {
        match self {
            BcacheMode::Writethrough => "writethrough",
            BcacheMode::Writeback => "writeback",
            BcacheMode::Writearound => "writearound",
            BcacheMode::None => "none",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BcacheConfig {
    pub fast: String,
    pub slow: String,
    pub mode: BcacheMode,
    /// Bytes; 0 caches sequential I/O too (the bcache-on-EBS recipe [recipe-bcache-ebs]). bcache's
    /// default is 4 MB.
    pub sequential_cutoff: u64,
}

/// A checked bcache render.
#[derive(Debug, Clone)]
pub struct Bcache {
    cfg: BcacheConfig,
    mount: Option<CacheMount>,
}

/// Checks the fast/slow pair shared by bcache and lvmcache.
pub(crate) fn check_pair(fast: &str, slow: &str) -> Result<(), RenderError> {
    check_stable_path("--fast", fast, "")?;
    check_stable_path("--slow", slow, "")?;
    if fast.contains(['*', '?', '[']) || slow.contains(['*', '?', '[']) {
        return Err(RenderError::BadValue {
            flag: "fast/--slow",
            value: format!("{fast} {slow}"),
            why: "name one disk each, not a glob".into(),
        });
    }
    if fast == slow {
        return Err(RenderError::SameDevice {
            path: fast.to_string(),
        });
    }
    Ok(())
}

impl Bcache {
    pub fn new(cfg: BcacheConfig) -> Result<Bcache, RenderError> {
        check_pair(&cfg.fast, &cfg.slow)?;
        // The kernel keeps sequential_cutoff in an unsigned int (drivers/md/bcache/bcache.h,
        // `unsigned int sequential_cutoff`) and clamps what sysfs is given to 0..UINT_MAX
        // (sysfs.c, `sysfs_strtoul_clamp(sequential_cutoff, ..., 0, UINT_MAX)`; older kernels
        // refused it with ERANGE), so a larger cutoff was not what the device got while the
        // script logged it as set (found by QA: --sequential-cutoff 8GiB was rendered).
        if cfg.sequential_cutoff > u64::from(u32::MAX) {
            return Err(RenderError::BadValue {
                flag: "sequential-cutoff",
                value: cfg.sequential_cutoff.to_string(),
                why: format!(
                    "bcache keeps it in an unsigned int: at most {} bytes (4 GiB less a byte), which the kernel would silently use instead; give at most that (0 caches sequential I/O too)",
                    u32::MAX
                ),
            });
        }
        Ok(Bcache { cfg, mount: None })
    }

    /// Also makes the filesystem on the bcache device and mounts it (`--mount`).
    pub fn with_mount(self, mount: CacheMount) -> Bcache {
        Bcache {
            mount: Some(mount),
            ..self
        }
    }
}

impl CacheRecipe for Bcache {
    const PLATFORM: Platform = Platform::Bcache;
    const NOTE: &'static str = "bcache cannot be resized online: growing the slow disk needs a detach/attach or a reboot (lvmcache grows online)";

    fn writeback(&self) -> bool {
        self.cfg.mode == BcacheMode::Writeback
    }

    fn script(&self) -> String {
        let c = &self.cfg;
        format!(
            r#"#!/bin/bash
# Rendered by `disktier render bcache`: FAST caches SLOW with bcache, {mode} (the bcache-on-EBS recipe: a gp3
# volume at 16,000 IOPS in front of st1, writeback, sequential_cutoff 0).
#
# Review before running. It refuses to touch a disk that holds anything; a re-run converges
# (registers, attaches and sets the modes again) without formatting twice. DRY_RUN=1 prints what
# it would change.
#
# Know before you choose bcache:
# - bcache cannot be resized online: growing SLOW needs a detach/attach or a reboot before the
#   bcache device sees the new size (the bcache-on-EBS recipe). lvmcache (disktier render lvmcache) grows online
#   with lvextend.
# - writeback keeps dirty data on FAST only: losing FAST loses writes. A writeback cache full of
#   dirty data drains at SLOW's speed (st1: 40 MiB/s per TiB baseline, AWS EBS volume types docs).
set -euo pipefail

PROG=disktier-bcache
FAST={fast}
SLOW={slow}
MODE={mode}
SEQUENTIAL_CUTOFF={cutoff}

{functions}
# 1. Kernel support, then tools, before anything is written (no tool helps a kernel without
#    the module).
if [ ! -d /sys/fs/bcache ]; then
    command -v modprobe >/dev/null || die "modprobe not found (package kmod): cannot tell whether this kernel has the bcache module"
    modprobe -n bcache 2>/dev/null || die "this kernel has no bcache module (modprobe -n bcache): lvmcache uses dm-cache instead, if this kernel has it (disktier render lvmcache checks)"
fi
command -v make-bcache >/dev/null || die "make-bcache not found: install bcache-tools"
command -v bcache-super-show >/dev/null || die "bcache-super-show not found: install bcache-tools"

# 2. The two disks, by stable path.
fast=$(resolve "$FAST")
slow=$(resolve "$SLOW")
[ "$fast" != "$slow" ] || die "$FAST and $SLOW are the same disk ($fast)"

# 3. Format both, only when both are blank. Already bcache on both: a re-run, go on. One of
#    them bcache, or any other signature, partition, holder or mount: refused.
fast_type=$(blkid -p -o value -s TYPE "$fast" 2>/dev/null || true)
slow_type=$(blkid -p -o value -s TYPE "$slow" 2>/dev/null || true)
if [ "$fast_type" = bcache ] && [ "$slow_type" = bcache ]; then
    log "$FAST and $SLOW already hold bcache superblocks: not formatting them again"
elif [ "$fast_type" = bcache ] || [ "$slow_type" = bcache ]; then
    die "$FAST holds '${{fast_type:-nothing}}' and $SLOW holds '${{slow_type:-nothing}}': refusing to format a half-made cache (inspect with bcache-super-show)"
else
    refuse_unless_blank "$FAST" "$fast"
    refuse_unless_blank "$SLOW" "$slow"
    # -B backing (slow), -C cache (fast); no --wipe-bcache: an old superblock is not overwritten.
    run make-bcache -B "$slow" -C "$fast"
fi
[ -d /sys/fs/bcache ] || run modprobe bcache
[ -z "${{DRY_RUN:-}}" ] || {{ log "dry run: stopping before register/attach"; exit 0; }}

# 4. Register both (udev usually has; a second registration is refused by the kernel, harmless).
for dev in "$slow" "$fast"; do
    echo "$dev" > /sys/fs/bcache/register 2>/dev/null || true
done
bdev=""
# Up to 10 s (50 x 0.2 s) for the kernel to create the bcache device after registration.
for _ in $(seq 1 50); do
    if [ -e "/sys/class/block/${{slow##*/}}/bcache/dev" ]; then
        bdev=$(basename "$(readlink -f "/sys/class/block/${{slow##*/}}/bcache/dev")")
        break
    fi
    sleep 0.2
done
[ -n "$bdev" ] || die "no bcache device appeared for $SLOW after registering it"

# 5. Attach the backing device to the cache set, by the cache set's uuid.
cset=$(bcache-super-show "$fast" | awk '$1 == "cset.uuid" {{print $2}}')
[ -n "$cset" ] || die "no cset.uuid in $FAST's superblock"
if [ -e "/sys/block/$bdev/bcache/cache" ]; then
    current=$(basename "$(readlink -f "/sys/block/$bdev/bcache/cache")")
    [ "$current" = "$cset" ] || die "$bdev is attached to cache set $current, not $FAST's $cset: detach it first (echo 1 > /sys/block/$bdev/bcache/detach)"
    log "$bdev is attached to $cset already"
else
    write_sys "$cset" "/sys/block/$bdev/bcache/attach"
fi

# 6. Modes. cache_mode is kept in the backing device's superblock; sequential_cutoff is not,
#    so a udev rule sets it again at every boot.
write_sys "$MODE" "/sys/block/$bdev/bcache/cache_mode"
write_sys "$SEQUENTIAL_CUTOFF" "/sys/block/$bdev/bcache/sequential_cutoff"
uuid=$(bcache-super-show "$slow" | awk '$1 == "dev.uuid" {{print $2}}')
[ -n "$uuid" ] || die "no dev.uuid in $SLOW's superblock"
rule="ACTION==\"add|change\", KERNEL==\"bcache*\", ENV{{CACHED_UUID}}==\"$uuid\", ATTR{{bcache/sequential_cutoff}}=\"$SEQUENTIAL_CUTOFF\""
if [ "$(cat /etc/udev/rules.d/69-disktier-bcache.rules 2>/dev/null || true)" != "$rule" ]; then
    echo "$rule" > /etc/udev/rules.d/69-disktier-bcache.rules
fi

log "/dev/$bdev caches $SLOW on $FAST ($MODE, sequential_cutoff $SEQUENTIAL_CUTOFF)"
log "its stable path: /dev/bcache/by-uuid/$uuid"
{mount}"#,
            fast = shell_quote(&c.fast),
            slow = shell_quote(&c.slow),
            mode = c.mode.name(),
            cutoff = c.sequential_cutoff,
            functions = CACHE_FUNCTIONS,
            // The kernel's bcache.rst: with udev, the device shows up as
            // /dev/bcache/by-uuid/<uuid> (the backing device's dev.uuid) as well as /dev/bcacheN.
            mount = self.mount.as_ref().map_or(String::new(), |m| m.section(
                "\"/dev/bcache/by-uuid/$uuid\"",
                "bcache-tools' udev rule makes it: is bcache-tools installed?",
            )),
        )
    }
}

/// A cache recipe (bcache, lvmcache): it renders as its one script, `<platform>-setup.sh`, with
/// the recipe's `NOTE` and, in writeback mode, the warning that dirty data lives only on the fast
/// disk.
pub(super) trait CacheRecipe {
    const PLATFORM: Platform;
    /// What to know of the recipe before choosing it.
    const NOTE: &'static str;
    fn writeback(&self) -> bool;
    fn script(&self) -> String;
}

impl<R: CacheRecipe> Renderer for R {
    fn platform(&self) -> Platform {
        R::PLATFORM
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let mut notes = vec![R::NOTE.to_string()];
        if self.writeback() {
            notes.push("writeback: dirty data lives only on the fast disk until it drains; losing it loses writes".into());
        }
        Ok(Rendered {
            platform: R::PLATFORM,
            files: vec![RenderedFile::new(
                format!("{}-setup.sh", R::PLATFORM.name()),
                FileKind::Shell,
                self.script(),
            )],
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(sequential_cutoff: u64) -> BcacheConfig {
        BcacheConfig {
            fast: "/dev/disk/by-id/nvme-fast".into(),
            slow: "/dev/disk/by-id/nvme-slow".into(),
            mode: BcacheMode::Writeback,
            sequential_cutoff,
        }
    }

    #[test]
    fn a_sequential_cutoff_past_an_unsigned_int_is_refused() {
        // Found by QA: --sequential-cutoff 8GiB was rendered, and the kernel clamps it.
        let e = Bcache::new(cfg(8 << 30)).unwrap_err().to_string();
        assert_eq!(
            e,
            "--sequential-cutoff \"8589934592\" is not valid: bcache keeps it in an unsigned int: at most 4294967295 bytes (4 GiB less a byte), which the kernel would silently use instead; give at most that (0 caches sequential I/O too)"
        );
        assert!(Bcache::new(cfg(u64::from(u32::MAX) + 1)).is_err());
        for ok in [0, 4 << 20, u64::from(u32::MAX)] {
            let b = Bcache::new(cfg(ok)).unwrap();
            assert!(b.script().contains(&format!("\nSEQUENTIAL_CUTOFF={ok}\n")));
        }
    }
}
