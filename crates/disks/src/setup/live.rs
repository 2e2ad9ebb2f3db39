//! The options of a filesystem already mounted, against the ones asked for. A re-run of setup
//! with other `--options` must not say "nothing to change" while the live mount lacks them
//! (found by QA: `--options nodev,nosuid` on an existing mount changed nothing, while the
//! persisted fstab line had them).
//!
//! What the kernel can change on a mounted filesystem (`mount -o remount`, mount(8) "FILESYSTEM-
//! INDEPENDENT MOUNT OPTIONS"): the per-mount flags (`ro`/`rw`, `nosuid`, `nodev`, `noexec`, the
//! atime flags) and the superblock flags `sync` and `lazytime`; a bind mount takes the per-mount
//! ones only (`mount -o remount,bind,...`). Those are planned as a remount. A filesystem option
//! (`prjquota`, `discard`, `logbsize=...`) that the live mount lacks cannot be added that way
//! (xfs and ext4 refuse quota changes on remount), so setup refuses, naming the option and the
//! fix (unmount, re-run). The kernel lists quota options and `discard` whenever they are in
//! force (xfs_showargs, ext4's show_options), so their absence is certain; another option the
//! live mount does not list may be one the kernel applies without listing it (a default), so
//! that one gets a warning note instead of a refusal.

use crate::discover::MountEntry;
use crate::valid::MountOptions;

/// How access times are kept (mount(8): `noatime`, `relatime`, `strictatime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atime {
    No,
    Rel,
    Strict,
}

impl Atime {
    fn word(self) -> &'static str {
        match self {
            Atime::No => "noatime",
            Atime::Rel => "relatime",
            Atime::Strict => "strictatime",
        }
    }

    /// What a remount is given: `atime` first, which clears `noatime` (mount(8) merges the
    /// mount's current options with the new ones, and `remount,relatime` alone leaves a
    /// `noatime` mount as it was: seen with util-linux 2.38).
    fn remount_words(self) -> &'static str {
        match self {
            Atime::No => "noatime",
            Atime::Rel => "atime,relatime",
            Atime::Strict => "atime,strictatime",
        }
    }
}

/// The flags a remount can change, as mount(8) sets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    ro: bool,
    nosuid: bool,
    nodev: bool,
    noexec: bool,
    /// MS_NOATIME and MS_STRICTATIME as mount(8) leaves them after the options, each set and
    /// cleared in order (`noatime`/`atime`, `strictatime`/`nostrictatime`); [`Flags::atime`]
    /// reads them as the kernel does.
    noatime: bool,
    strictatime: bool,
    nodiratime: bool,
    /// Superblock flags: not changed by a bind remount.
    sync: bool,
    lazytime: bool,
}

/// What an option is to the kernel.
enum Kind {
    /// A flag a remount changes (its effect already applied to the flags).
    Flag,
    /// Read by mount(8), systemd or fstab only (`nofail`, `x-systemd.*`, `_netdev`).
    Userspace,
    /// The filesystem's own option.
    Filesystem,
}

impl Flags {
    /// The kernel's defaults for a new mount: rw, suid, dev, exec, relatime, async.
    fn kernel_default() -> Flags {
        Flags {
            ro: false,
            nosuid: false,
            nodev: false,
            noexec: false,
            noatime: false,
            strictatime: false,
            nodiratime: false,
            sync: false,
            lazytime: false,
        }
    }

    /// How the kernel keeps access times under these flags (path_mount in fs/namespace.c):
    /// strictatime wins, then noatime, else relatime. Not the last atime option given: with
    /// `noatime,relatime` the mount is noatime (found by QA: a re-run then remounted it).
    fn atime(&self) -> Atime {
        if self.strictatime {
            Atime::Strict
        } else if self.noatime {
            Atime::No
        } else {
            Atime::Rel
        }
    }

    /// Applies one option the way mount(8) does (a later option overrides an earlier one).
    fn apply(&mut self, opt: &str) -> Kind {
        match opt {
            // defaults: rw, suid, dev, exec, auto, nouser, async.
            "defaults" => {
                (self.ro, self.nosuid, self.nodev, self.noexec, self.sync) =
                    (false, false, false, false, false)
            }
            "ro" => self.ro = true,
            "rw" => self.ro = false,
            "suid" => self.nosuid = false,
            "nosuid" => self.nosuid = true,
            "dev" => self.nodev = false,
            "nodev" => self.nodev = true,
            "exec" => self.noexec = false,
            "noexec" => self.noexec = true,
            "noatime" => self.noatime = true,
            "atime" => self.noatime = false,
            "strictatime" => self.strictatime = true,
            "nostrictatime" => self.strictatime = false,
            // MS_RELATIME, which the kernel no longer reads (relatime is its default): neither
            // clears noatime, and `norelatime` alone mounts relatime (util-linux 2.38, 6.x).
            "relatime" | "norelatime" => {}
            "diratime" => self.nodiratime = false,
            "nodiratime" => self.nodiratime = true,
            "sync" => self.sync = true,
            "async" => self.sync = false,
            "lazytime" => self.lazytime = true,
            "nolazytime" => self.lazytime = false,
            // mount(8): user and users imply noexec, nosuid and nodev; owner and group imply
            // nosuid and nodev.
            "user" | "users" => {
                (self.noexec, self.nosuid, self.nodev) = (true, true, true);
                return Kind::Userspace;
            }
            "owner" | "group" => {
                (self.nosuid, self.nodev) = (true, true);
                return Kind::Userspace;
            }
            "auto" | "noauto" | "nofail" | "nouser" | "_netdev" => return Kind::Userspace,
            o if o.starts_with("x-") || o.starts_with("X-") || o.starts_with("comment=") => {
                return Kind::Userspace
            }
            _ => return Kind::Filesystem,
        }
        Kind::Flag
    }

    /// What the requested options make of a new mount.
    pub fn requested(opts: &MountOptions) -> Flags {
        let mut f = Flags::kernel_default();
        for o in opts.iter() {
            f.apply(o);
        }
        f
    }

    /// What a mount has now (mountinfo's per-mount and superblock options, proc(5)).
    pub fn live(m: &MountEntry) -> Flags {
        let per: Vec<&str> = m.options.split(',').collect();
        let sup: Vec<&str> = m.super_options.split(',').collect();
        Flags {
            ro: per.contains(&"ro"),
            nosuid: per.contains(&"nosuid"),
            nodev: per.contains(&"nodev"),
            noexec: per.contains(&"noexec"),
            // The kernel lists noatime or relatime; neither is strictatime (proc(5)).
            noatime: per.contains(&"noatime"),
            strictatime: !per.contains(&"noatime") && !per.contains(&"relatime"),
            nodiratime: per.contains(&"nodiratime"),
            sync: sup.contains(&"sync"),
            lazytime: sup.contains(&"lazytime"),
        }
    }

    pub fn read_only(&self) -> bool {
        self.ro
    }

    /// The per-mount flags, each spelt out (so a remount sets all of them, whatever mount(8)
    /// would otherwise keep or reset); `remount` gives the atime flag as a remount needs it.
    fn per_mount_words(&self, remount: bool) -> Vec<&'static str> {
        vec![
            if self.ro { "ro" } else { "rw" },
            if self.nosuid { "nosuid" } else { "suid" },
            if self.nodev { "nodev" } else { "dev" },
            if self.noexec { "noexec" } else { "exec" },
            if remount {
                self.atime().remount_words()
            } else {
                self.atime().word()
            },
            if self.nodiratime {
                "nodiratime"
            } else {
                "diratime"
            },
        ]
    }

    fn words(&self, remount: bool) -> Vec<&'static str> {
        let mut w = self.per_mount_words(remount);
        w.push(if self.sync { "sync" } else { "async" });
        w.push(if self.lazytime {
            "lazytime"
        } else {
            "nolazytime"
        });
        w
    }
}

/// A remount that brings a mount's flags to the requested ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remount {
    /// The flags for `mount -o remount,...` (every one spelt out).
    pub options: String,
    /// What differs, `wanted (now: live)`, for the note.
    pub differs: Vec<String>,
}

fn diff(want: &[&'static str], have: &[&'static str]) -> Vec<String> {
    want.iter()
        .zip(have)
        .filter(|(w, h)| w != h)
        .map(|(w, h)| format!("{w} (now {h})"))
        .collect()
}

/// Quota options by what the kernel lists for them (xfs_showargs lists `usrquota`, `grpquota`,
/// `prjquota` or the `*qnoenforce` forms; ext4 lists `usrquota`/`quota`, `grpquota`,
/// `prjquota`): each group is one thing, whichever spelling was used.
const QUOTA_GROUPS: &[&[&str]] = &[
    &["usrquota", "uquota", "quota"],
    &["grpquota", "gquota"],
    &["prjquota", "pquota"],
    &["uqnoenforce", "qnoenforce"],
    &["gqnoenforce"],
    &["pqnoenforce"],
];

/// Options the kernel lists whenever they are in force, so that their absence is certain.
fn always_listed(name: &str) -> bool {
    name == "discard" || QUOTA_GROUPS.iter().any(|g| g.contains(&name))
}

/// The spellings that mean `name` in the kernel's list.
fn spellings(name: &str) -> Vec<&str> {
    QUOTA_GROUPS
        .iter()
        .find(|g| g.contains(&name))
        .map(|g| g.to_vec())
        .unwrap_or_else(|| vec![name])
}

/// `name=value` without quotes around the value (the kernel quotes an SELinux context).
fn unquoted(o: &str) -> String {
    match o.split_once('=') {
        Some((n, v)) => format!("{n}={}", v.trim_matches('"')),
        None => o.to_string(),
    }
}

/// The outcome of comparing a live mount with the request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// The remount to plan, if any flag differs.
    pub remount: Option<Remount>,
    /// Why the mount cannot be brought to the request without unmounting it.
    pub refuse: Option<String>,
    /// Options the kernel does not list for the mount (it may apply them silently).
    pub unconfirmed: Vec<String>,
}

/// Compares the filesystem mounted at `target` (`live`) with the requested options.
pub fn compare(requested: &MountOptions, live: &MountEntry, target: &str) -> Comparison {
    let want = Flags::requested(requested);
    let have = Flags::live(live);
    let mut out = Comparison::default();
    let differs = diff(&want.words(false), &have.words(false));
    if !differs.is_empty() {
        out.remount = Some(Remount {
            options: want.words(true).join(","),
            differs,
        });
    }
    let listed: Vec<String> = live
        .options
        .split(',')
        .chain(live.super_options.split(','))
        .filter(|o| !o.is_empty())
        .map(unquoted)
        .collect();
    let shown = format!("{} {}", live.options, live.super_options);
    let fix = format!(
        "the kernel cannot change it on a mounted filesystem: unmount {target} (and the binds on it) and re-run setup, which mounts it with the options asked for"
    );
    let mut absent = Vec::new();
    for o in requested.iter() {
        if !matches!(Flags::kernel_default().apply(o), Kind::Filesystem) {
            continue;
        }
        let o = unquoted(o);
        let name = o.split('=').next().unwrap_or(&o).to_ascii_lowercase();
        if spellings(&name).iter().any(|s| {
            listed
                .iter()
                .any(|l| l == s || (o.contains('=') && *l == o))
        }) {
            continue;
        }
        if let Some(other) = listed
            .iter()
            .find(|l| o.contains('=') && l.split_once('=').is_some_and(|(n, _)| n == name))
        {
            out.refuse.get_or_insert(format!(
                "{target} is mounted with {other}, not {o} (its options: {shown}): {fix}"
            ));
        } else if always_listed(&name) {
            absent.push(o);
        } else {
            out.unconfirmed.push(o);
        }
    }
    if !absent.is_empty() {
        out.refuse.get_or_insert(format!(
            "{target} is mounted without {} (its options: {shown}): {fix}",
            absent.join(",")
        ));
    }
    // A quota the live mount enforces that the request does not ask for.
    let asked = |g: &[&str]| {
        requested
            .iter()
            .any(|o| g.contains(&o.to_ascii_lowercase().as_str()))
    };
    if let Some(extra) = QUOTA_GROUPS
        .iter()
        .find(|g| !asked(g) && listed.iter().any(|l| g.contains(&l.as_str())))
    {
        let now = listed
            .iter()
            .find(|l| extra.contains(&l.as_str()))
            .cloned()
            .unwrap_or_default();
        out.refuse.get_or_insert(format!(
            "{target} is mounted with {now}, which --options does not ask for (its options: {shown}): add it to --options, or {fix}"
        ));
    }
    out
}

/// For a bind mount already in place: the remount (`mount -o remount,bind,...`) that brings its
/// per-mount flags to the requested ones, if any differs.
pub fn compare_bind(requested: &MountOptions, live: &MountEntry) -> Option<Remount> {
    let want = Flags::requested(requested);
    let differs = diff(
        &want.per_mount_words(false),
        &Flags::live(live).per_mount_words(false),
    );
    (!differs.is_empty()).then(|| Remount {
        options: want.per_mount_words(true).join(","),
        differs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(per: &str, sup: &str) -> MountEntry {
        MountEntry {
            maj_min: "7:2".into(),
            root: "/".into(),
            mount_point: "/data".into(),
            fstype: "xfs".into(),
            source: "/dev/loop2".into(),
            options: per.into(),
            super_options: sup.into(),
        }
    }

    fn opts(extra: &[&str]) -> MountOptions {
        let raw: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        MountOptions::parse("--options", &raw).unwrap()
    }

    const XFS: &str = "rw,attr2,inode64,logbufs=8,logbsize=32k,noquota";

    #[test]
    fn the_same_options_plan_nothing() {
        let c = compare(&opts(&[]), &entry("rw,noatime", XFS), "/data");
        assert_eq!(c, Comparison::default());
        let c = compare(
            &opts(&["nodev", "nosuid", "inode64"]),
            &entry("rw,nosuid,nodev,noatime", XFS),
            "/data",
        );
        assert_eq!(c, Comparison::default());
    }

    #[test]
    fn a_flag_the_live_mount_lacks_is_a_remount_of_every_flag() {
        // Found by QA: `--options nodev,nosuid` on an existing mount said "nothing to change".
        let c = compare(&opts(&["nodev,nosuid"]), &entry("rw,noatime", XFS), "/data");
        let r = c.remount.unwrap();
        assert_eq!(
            r.options,
            "rw,nosuid,nodev,exec,noatime,diratime,async,nolazytime"
        );
        assert_eq!(r.differs, ["nosuid (now suid)", "nodev (now dev)"]);
        assert!(c.refuse.is_none());
        // And back: the request without them drops them again (the fstab line does too).
        let c = compare(&opts(&[]), &entry("rw,nosuid,nodev,noatime", XFS), "/data");
        assert!(c.remount.unwrap().options.starts_with("rw,suid,dev,exec,"));
        // user implies noexec, nosuid, nodev (mount(8)).
        let f = Flags::requested(&opts(&["user"]));
        assert!(f.noexec && f.nosuid && f.nodev);
    }

    #[test]
    fn a_filesystem_option_the_live_mount_lacks_is_refused_with_the_fix() {
        let c = compare(&opts(&["prjquota"]), &entry("rw,noatime", XFS), "/data");
        let why = c.refuse.unwrap();
        assert!(
            why.starts_with("/data is mounted without prjquota"),
            "{why}"
        );
        assert!(why.contains("unmount /data"), "{why}");
        // Listed under another spelling: pquota is prjquota.
        let c = compare(
            &opts(&["pquota"]),
            &entry("rw,noatime", "rw,attr2,inode64,prjquota"),
            "/data",
        );
        assert_eq!(c, Comparison::default());
        // A quota the request does not ask for.
        let c = compare(
            &opts(&[]),
            &entry("rw,noatime", "rw,attr2,inode64,prjquota"),
            "/data",
        );
        assert!(c
            .refuse
            .unwrap()
            .contains("mounted with prjquota, which --options does not ask for"));
        // Another value of the same option.
        let c = compare(&opts(&["logbsize=64k"]), &entry("rw,noatime", XFS), "/data");
        assert!(c
            .refuse
            .unwrap()
            .contains("mounted with logbsize=32k, not logbsize=64k"));
        // An option the kernel may apply without listing it: a note, not a refusal.
        let c = compare(&opts(&["barrier"]), &entry("rw,noatime", "rw"), "/data");
        assert_eq!(
            (c.refuse, c.unconfirmed),
            (None, vec!["barrier".to_string()])
        );
    }

    #[test]
    fn a_quoted_selinux_context_matches_the_unquoted_option() {
        let ctx = "context=system_u:object_r:container_file_t:s0";
        let c = compare(
            &opts(&[ctx]),
            &entry(
                "rw,noatime",
                "rw,context=\"system_u:object_r:container_file_t:s0\",attr2",
            ),
            "/data",
        );
        assert_eq!(c, Comparison::default());
    }

    #[test]
    fn atime_options_are_read_as_the_kernel_mounts_them() {
        // What `mount -o OPTIONS` gives on Linux 6.x with util-linux 2.38 (mountinfo's atime
        // word; none is strictatime): noatime wins over relatime wherever it stands, and
        // strictatime over noatime.
        for (given, mounted) in [
            ("", "noatime"),
            ("relatime", "relatime"),
            ("relatime,noatime", "noatime"),
            ("noatime,relatime", "noatime"),
            ("norelatime", "relatime"),
            ("noatime,norelatime", "noatime"),
            ("noatime,atime", "relatime"),
            ("atime", "relatime"),
            ("strictatime", "strictatime"),
            ("noatime,strictatime", "strictatime"),
            ("strictatime,noatime", "strictatime"),
            ("strictatime,relatime", "strictatime"),
            ("strictatime,nostrictatime", "relatime"),
            ("noatime,nostrictatime", "noatime"),
        ] {
            let want = Flags::requested(&opts(&[given]));
            assert_eq!(want.atime().word(), mounted, "{given}");
            let per = match mounted {
                "strictatime" => "rw".to_string(),
                w => format!("rw,{w}"),
            };
            let c = compare(&opts(&[given]), &entry(&per, XFS), "/data");
            assert_eq!(c, Comparison::default(), "{given}: a re-run plans nothing");
        }
    }

    #[test]
    fn binds_compare_per_mount_flags_only() {
        assert_eq!(
            compare_bind(&opts(&[]), &entry("rw,noatime", "rw,sync")),
            None
        );
        let r = compare_bind(&opts(&["noexec"]), &entry("rw,noatime", "rw")).unwrap();
        assert_eq!(r.options, "rw,suid,dev,noexec,noatime,diratime");
    }
}
