//! lvmcache (dm-cache): the slow disk as an LV, cached by a cachevol on the fast disk
//! (`lvconvert --type cache --cachevol fast --cachemode writeback vg/main`), as a reviewed script
//! with checks before each destructive step and a converging re-run. Unlike bcache, the cached LV
//! grows online with `lvextend` (docs/sources.md [lvmcache]).

use super::bcache::{check_pair, CacheRecipe};
use super::cachemount::CacheMount;
use super::script::CACHE_FUNCTIONS;
use super::{Platform, RenderError};
use disktier_cmd::shell_quote;

/// dm-cache's modes (lvmcache(7)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LvmcacheMode {
    Writeback,
    Writethrough,
    Passthrough,
}

impl LvmcacheMode {
    pub fn name(self) -> &'static str {
        match self {
            LvmcacheMode::Writeback => "writeback",
            LvmcacheMode::Writethrough => "writethrough",
            LvmcacheMode::Passthrough => "passthrough",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LvmcacheConfig {
    pub fast: String,
    pub slow: String,
    pub mode: LvmcacheMode,
    pub vg: String,
    pub lv: String,
}

/// A checked lvmcache render.
#[derive(Debug, Clone)]
pub struct Lvmcache {
    cfg: LvmcacheConfig,
    mount: Option<CacheMount>,
}

fn check_lvm_name(flag: &'static str, v: &str) -> Result<(), RenderError> {
    // lvm(8), VALID NAMES: letters, digits, + _ . -; not starting with '-'.
    let ok = !v.is_empty()
        && v.len() <= 64
        && !v.starts_with('-')
        && v != "."
        && v != ".."
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+_.-".contains(c));
    RenderError::unless(
        ok,
        flag,
        v.to_string(),
        "an LVM name holds letters, digits and + _ . - (lvm(8), VALID NAMES)",
    )
}

/// LV names lvm reserves: lvm(8) "VALID NAMES" says an LV cannot be called `snapshot` or
/// `pvmove` and lists the strings an LV name may not contain (the suffixes of its internal
/// sub-LVs); lvm2 itself (lib/misc/lvm-string.c, apply_lvname_restrictions) refuses every name
/// *starting* with `snapshot` or `pvmove`, and `_pmspare`, `_vorigin` (and in newer releases
/// `_wcorig`) anywhere.
const RESERVED_LV_PREFIXES: [&str; 2] = ["snapshot", "pvmove"];
const RESERVED_LV_STRINGS: [&str; 13] = [
    "_cdata", "_cmeta", "_corig", "_mlog", "_mimage", "_pmspare", "_rimage", "_rmeta", "_tdata",
    "_tmeta", "_vorigin", "_wcorig", "_vdata",
];

/// Refuses an LV name lvm reserves (found by QA: `--lv snapshot`, `pvmove`, `main_cdata` were
/// rendered, and lvcreate would refuse them half-way through the script).
fn check_lv_reserved(lv: &str) -> Result<(), RenderError> {
    let why = if let Some(p) = RESERVED_LV_PREFIXES.iter().find(|p| lv.starts_with(*p)) {
        Some(format!(
            "lvm reserves LV names starting with {p} (lvm(8), VALID NAMES): pick another name"
        ))
    } else {
        RESERVED_LV_STRINGS
            .iter()
            .find(|r| lv.contains(*r))
            .map(|r| format!("lvm reserves {r} in LV names for its internal volumes (lvm(8), VALID NAMES): pick a name without it"))
    };
    match why {
        None => Ok(()),
        Some(why) => Err(RenderError::BadValue {
            flag: "lv",
            value: lv.to_string(),
            why,
        }),
    }
}

/// Entries of /dev that a Linux node usually has: the kernel's (Documentation/admin-guide/
/// devices.rst: `mem`, `null`, `zero`, `tty`, the compulsory links `fd`, `stdin`, `core`, ...),
/// udev's `block`, `char`, `disk`, device-mapper's `mapper`, systemd's `hugepages`, `mqueue`,
/// `log`. lvm(8), VALID NAMES: "A VG cannot be called anything that exists in /dev/ at the time
/// of creation": vgcreate refuses such a name, after the script's pvcreate. Names only some
/// nodes have (a kernel disk name) are checked by the rendered script on the node itself.
const DEV_ENTRIES: [&str; 32] = [
    "block",
    "bsg",
    "bus",
    "char",
    "console",
    "core",
    "cpu",
    "disk",
    "dri",
    "fd",
    "full",
    "fuse",
    "hugepages",
    "input",
    "kmsg",
    "log",
    "loop-control",
    "mapper",
    "mem",
    "mqueue",
    "net",
    "null",
    "ptmx",
    "pts",
    "random",
    "shm",
    "stderr",
    "stdin",
    "stdout",
    "tty",
    "urandom",
    "zero",
];

/// Refuses a VG name that collides with an entry of /dev (found by QA: `--vg mapper` and
/// `--vg null` were rendered, and vgcreate would refuse them half-way through the script).
fn check_vg_reserved(vg: &str) -> Result<(), RenderError> {
    RenderError::unless(
        !DEV_ENTRIES.contains(&vg),
        "vg",
        vg.to_string(),
        &format!("/dev/{vg} exists on Linux nodes, and a VG cannot be called anything that exists in /dev/ (lvm(8), VALID NAMES): pick another name, e.g. cachevg"),
    )
}

impl Lvmcache {
    pub fn new(cfg: LvmcacheConfig) -> Result<Lvmcache, RenderError> {
        check_pair(&cfg.fast, &cfg.slow)?;
        check_lvm_name("vg", &cfg.vg)?;
        check_vg_reserved(&cfg.vg)?;
        check_lvm_name("lv", &cfg.lv)?;
        check_lv_reserved(&cfg.lv)?;
        if cfg.lv.ends_with("_cache") {
            return Err(RenderError::BadValue {
                flag: "lv",
                value: cfg.lv.clone(),
                why: "the cache volume is named LV_cache; pick a name that does not end in _cache"
                    .into(),
            });
        }
        Ok(Lvmcache { cfg, mount: None })
    }

    /// Also makes the filesystem on the cached LV and mounts it (`--mount`).
    pub fn with_mount(self, mount: CacheMount) -> Lvmcache {
        Lvmcache {
            mount: Some(mount),
            ..self
        }
    }
}

impl CacheRecipe for Lvmcache {
    const PLATFORM: Platform = Platform::Lvmcache;
    const NOTE: &'static str =
        "lvmcache grows online (pvresize, lvextend); dm-cache has no sequential bypass";

    fn writeback(&self) -> bool {
        self.cfg.mode == LvmcacheMode::Writeback
    }

    fn script(&self) -> String {
        let c = &self.cfg;
        format!(
            r#"#!/bin/bash
# Rendered by `disktier render lvmcache`: FAST caches SLOW with lvmcache (dm-cache), {mode}:
# SLOW becomes the logical volume {vg}/{lv}, FAST a cachevol {vg}/{lv}_cache attached to it.
#
# Review before running. It refuses to touch a disk that holds anything; a re-run converges
# (each step checks whether it is done) without creating anything twice. DRY_RUN=1 prints what
# it would change.
#
# Know before you choose:
# - lvmcache grows online: add space to SLOW, then pvresize and lvextend {vg}/{lv}
#   (bcache cannot: it needs a detach/attach or a reboot).
# - dm-cache has no sequential bypass (bcache's sequential_cutoff): streaming I/O goes through
#   the cache too.
# - writeback keeps dirty data on FAST only: losing FAST loses writes.
set -euo pipefail

PROG=disktier-lvmcache
FAST={fast}
SLOW={slow}
MODE={mode}
VG={vg}
LV={lv}
CACHE_LV="${{LV}}_cache"

{functions}
# 1. Kernel support, then tools, before anything is written (no tool helps a kernel without
#    the module).
if ! dmsetup targets 2>/dev/null | grep -q '^cache '; then
    command -v modprobe >/dev/null || die "modprobe not found (package kmod): cannot tell whether this kernel has the dm-cache module"
    modprobe -n dm-cache 2>/dev/null || die "this kernel has no dm-cache module (modprobe -n dm-cache): bcache uses its own module instead, if this kernel has it (disktier render bcache checks)"
fi
for tool in pvcreate vgcreate lvcreate lvconvert lvs pvs vgs; do
    command -v "$tool" >/dev/null || die "$tool not found: install lvm2"
done

# 2. The two disks, by stable path.
fast=$(resolve "$FAST")
slow=$(resolve "$SLOW")
[ "$fast" != "$slow" ] || die "$FAST and $SLOW are the same disk ($fast)"

# lvm(8), VALID NAMES: a VG cannot be called anything that exists in /dev/ (vgcreate would
# refuse it after pvcreate); /dev/$VG of the VG itself is there on a re-run.
if ! vgs "$VG" >/dev/null 2>&1 && [ -e "/dev/$VG" ]; then
    die "/dev/$VG exists, so lvm cannot name a volume group $VG (lvm(8), VALID NAMES): render again with another --vg"
fi

# 3. Physical volumes: an existing PV must already belong to $VG (a re-run) or to no VG.
for pair in "$SLOW:$slow" "$FAST:$fast"; do
    link=${{pair%%:*}}
    dev=${{pair#*:}}
    if pvs "$dev" >/dev/null 2>&1; then
        vg_of=$(pvs --noheadings -o vg_name "$dev" | tr -d ' ')
        [ -z "$vg_of" ] || [ "$vg_of" = "$VG" ] || die "$link ($dev) belongs to volume group $vg_of: refusing to take it"
        log "$link is a physical volume already"
    else
        refuse_unless_blank "$link" "$dev"
        run pvcreate "$dev"
    fi
done

# 4. The volume group, on exactly these two disks.
if vgs "$VG" >/dev/null 2>&1; then
    log "volume group $VG exists"
else
    run vgcreate "$VG" "$slow" "$fast"
fi

# 5. The main LV on SLOW, the cache LV on FAST (all of each disk).
if lvs "$VG/$LV" >/dev/null 2>&1; then
    log "$VG/$LV exists"
else
    run lvcreate -n "$LV" -l 100%PVS "$VG" "$slow"
fi
segtype=$(lvs --noheadings -o segtype "$VG/$LV" 2>/dev/null | tr -d ' ' || true)
if [ "$segtype" = cache ]; then
    log "$VG/$LV is cached already"
else
    if ! lvs "$VG/$CACHE_LV" >/dev/null 2>&1; then
        run lvcreate -n "$CACHE_LV" -l 100%PVS "$VG" "$fast"
    fi
    # 6. Attach: the cachevol holds data and metadata; cachemode as chosen.
    run lvconvert -y --type cache --cachevol "$CACHE_LV" --cachemode "$MODE" "$VG/$LV"
fi

log "/dev/$VG/$LV caches $SLOW on $FAST ($MODE)"
{mount}"#,
            fast = shell_quote(&c.fast),
            slow = shell_quote(&c.slow),
            mode = c.mode.name(),
            vg = c.vg,
            lv = c.lv,
            functions = CACHE_FUNCTIONS,
            // lvm(8): the LV's device is /dev/VG/LV, a link udev makes.
            mount = self.mount.as_ref().map_or(String::new(), |m| m.section(
                "\"/dev/$VG/$LV\"",
                "lvm's udev rules make it: is the LV active? lvchange -ay $VG/$LV",
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vg_names_of_dev_entries_are_refused_citing_lvm() {
        for bad in ["mapper", "disk", "null", "block", "pts", "zero"] {
            let e = check_vg_reserved(bad).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("--vg \"{bad}\" is not valid: /dev/{bad} exists on Linux nodes, and a VG cannot be called anything that exists in /dev/ (lvm(8), VALID NAMES): pick another name, e.g. cachevg")
            );
        }
        for ok in ["vg", "cachevg", "mapper2", "disks", "nullvg"] {
            assert!(check_vg_reserved(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn reserved_lv_names_are_refused() {
        for bad in [
            "snapshot",
            "pvmove",
            "snapshots",
            "pvmove2",
            "main_cdata",
            "x_tmeta_y",
            "a_wcorig",
        ] {
            let e = check_lv_reserved(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--lv \"{bad}\" is not valid: lvm reserves")),
                "{e}"
            );
        }
        for ok in ["main", "my_snapshot", "data_cache1", "cdata"] {
            assert!(check_lv_reserved(ok).is_ok(), "{ok}");
        }
    }
}
