//! The mount step that `render bcache|lvmcache --mount` adds, run against stub commands: bcache
//! and dm-cache do not exist on these machines, so the step is cut out of the rendered script
//! (with the script's variables and functions) and run with a PATH of fake `blkid`, `mkfs.*`,
//! `findmnt`, `udevadm` and `systemctl` that record their arguments. The device is a link to a
//! block device node of this machine, which only the stubs ever see. Asserts: a blank device is
//! formatted once and its mount unit written, enabled and started; a device holding the
//! filesystem is mounted without mkfs (a re-run, a reboot); one holding anything else, a blkid
//! that cannot read it, a non-empty mount point or a mount of another device are refused before
//! anything is written. Plus the refusals at render time.

use disktier_disks::render::{
    Bcache, BcacheConfig, BcacheMode, CacheMount, CacheMountInput, FsType, Lvmcache,
    LvmcacheConfig, LvmcacheMode, Renderer,
};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

fn cache_mount(mount: &str, fs: FsType, label: &str) -> CacheMount {
    CacheMount::new(CacheMountInput {
        mount: mount.into(),
        fs: Some(fs),
        label: Some(label.into()),
        options: vec![],
    })
    .unwrap()
}

fn pair() -> (String, String) {
    (
        "/dev/disk/by-id/test-fast".into(),
        "/dev/disk/by-id/test-slow".into(),
    )
}

fn bcache(m: CacheMount) -> String {
    let (fast, slow) = pair();
    let b = Bcache::new(BcacheConfig {
        fast,
        slow,
        mode: BcacheMode::Writeback,
        sequential_cutoff: 0,
    })
    .unwrap()
    .with_mount(m);
    b.render().unwrap().files[0].content.clone()
}

fn lvmcache(m: CacheMount) -> String {
    let (fast, slow) = pair();
    let l = Lvmcache::new(LvmcacheConfig {
        fast,
        slow,
        mode: LvmcacheMode::Writeback,
        vg: "dtvg".into(),
        lv: "main".into(),
    })
    .unwrap()
    .with_mount(m);
    l.render().unwrap().files[0].content.clone()
}

/// Any block device node in /dev: only the stubs are given it.
fn some_block_device() -> Option<PathBuf> {
    std::fs::read_dir("/dev")
        .ok()?
        .flatten()
        .find(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path())
}

struct Run {
    dir: tempfile::TempDir,
    mount: PathBuf,
    script: PathBuf,
}

const STUBS: [&str; 7] = [
    "blkid",
    "mkfs.xfs",
    "mkfs.ext4",
    "findmnt",
    "udevadm",
    "systemctl",
    "mount",
];

impl Run {
    /// The mount step of `render(mount)`, with its device replaced by a link to `dev` and the
    /// unit directory by a temporary one.
    fn new(render: fn(CacheMount) -> String, device_line: &str, dev: &Path) -> Run {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mount = dir.path().join("data");
        std::fs::create_dir(&mount).unwrap();
        let text = render(cache_mount(
            &mount.display().to_string(),
            FsType::Xfs,
            "cached",
        ));
        let cut = text.find("\n# 1. ").unwrap();
        let step = text.find("\n# 7. ").expect("the mount step");
        let link = dir.path().join("by-uuid-link");
        std::os::unix::fs::symlink(dev, &link).unwrap();
        let units = dir.path().join("units");
        std::fs::create_dir(&units).unwrap();
        let mut script = format!("{}{}", &text[..cut], &text[step..]);
        for (from, to) in [
            (
                device_line.to_string(),
                format!("device={}", link.display()),
            ),
            (
                "UNIT_DIR=/etc/systemd/system".into(),
                format!("UNIT_DIR={}", units.display()),
            ),
        ] {
            assert!(script.contains(&from), "{from}");
            script = script.replace(&from, &to);
        }
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for s in STUBS {
            // Each records its arguments; blkid and findmnt answer what $BLKID_OUT/$BLKID_RC
            // and $FINDMNT_OUT say.
            let answer = match s {
                "blkid" => "printf '%s' \"$BLKID_OUT\"; exit \"$BLKID_RC\"",
                "findmnt" => "[ -n \"$FINDMNT_OUT\" ] || exit 1; echo \"$FINDMNT_OUT\"",
                _ => "exit 0",
            };
            let p = bin.join(s);
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\necho \"{s} $*\" >> {}\n{answer}\n",
                    dir.path().join("calls").display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = dir.path().join("mount.sh");
        std::fs::write(&path, script).unwrap();
        Run {
            dir,
            mount,
            script: path,
        }
    }

    /// Runs the step: (success, the recorded calls, stderr).
    fn run(&self, blkid: (&str, i32), findmnt: &str) -> (bool, String, String) {
        let out = std::process::Command::new("bash")
            .arg(&self.script)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.dir.path().join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("BLKID_OUT", blkid.0)
            .env("BLKID_RC", blkid.1.to_string())
            .env("FINDMNT_OUT", findmnt)
            .env_remove("DRY_RUN")
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(self.dir.path().join("calls")).unwrap_or_default();
        (
            out.status.success(),
            calls,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn unit(&self) -> Option<String> {
        let name = disktier_disks::render::mount_unit_name(&self.mount.display().to_string());
        std::fs::read_to_string(self.dir.path().join("units").join(name)).ok()
    }

    fn reset(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("calls"));
    }
}

const BLANK: (&str, i32) = ("", 2);

fn both() -> Option<[(Run, PathBuf); 2]> {
    let Some(dev) = some_block_device() else {
        eprintln!("skipped: no block device node in /dev");
        return None;
    };
    Some([
        (
            Run::new(bcache, "device=\"/dev/bcache/by-uuid/$uuid\"", &dev),
            dev.clone(),
        ),
        (Run::new(lvmcache, "device=\"/dev/$VG/$LV\"", &dev), dev),
    ])
}

#[test]
fn a_blank_device_is_formatted_once_then_mounted_by_its_unit_at_every_boot() {
    let Some(runs) = both() else { return };
    for (r, dev) in &runs {
        let (ok, calls, err) = r.run(BLANK, "");
        assert!(ok, "{err}");
        let dev = dev.display();
        assert!(
            calls.contains(&format!("blkid -p -o export {dev}\n")),
            "{calls}"
        );
        assert!(
            calls.contains(&format!("mkfs.xfs -K -L cached {dev}\n")),
            "{calls}"
        );
        let link = r.dir.path().join("by-uuid-link");
        let unit = r.unit().expect("the mount unit is written");
        assert!(
            unit.contains(&format!("\nWhat={}\n", link.display())),
            "{unit}"
        );
        assert!(unit.contains(&format!("\nWhere={}\n", r.mount.display())));
        assert!(
            unit.contains("\nOptions=defaults,noatime,nofail\n"),
            "{unit}"
        );
        assert!(unit.contains("\nWantedBy=local-fs.target\n"), "{unit}");
        let name = disktier_disks::render::mount_unit_name(&r.mount.display().to_string());
        let sc: Vec<&str> = calls
            .lines()
            .filter(|l| l.starts_with("systemctl"))
            .collect();
        assert_eq!(
            sc,
            [
                "systemctl daemon-reload".to_string(),
                format!("systemctl enable {name}"),
                format!("systemctl start {name}"),
            ],
            "{calls}"
        );

        // A re-run (or the script at a later boot): the filesystem is there, nothing is made
        // again and the unit is left as it is.
        r.reset();
        let (ok, calls, err) = r.run(("TYPE=xfs\nLABEL=cached\n", 0), "");
        assert!(ok, "{err}");
        assert!(!calls.contains("mkfs"), "{calls}");
        assert!(!calls.contains("daemon-reload"), "{calls}");
        assert!(
            err.contains("holds xfs already: not formatting it"),
            "{err}"
        );

        // Mounted already (by the unit at boot): not started again.
        r.reset();
        let (ok, calls, err) = r.run(("TYPE=xfs\n", 0), &dev.to_string());
        assert!(ok, "{err}");
        assert!(!calls.contains("systemctl start"), "{calls}");
    }
}

#[test]
fn a_device_holding_anything_else_or_a_busy_mount_point_is_refused_before_any_write() {
    let Some(runs) = both() else { return };
    for (r, _) in &runs {
        let cases: [((&str, i32), &str, &str); 4] = [
            (
                ("TYPE=ext4\nLABEL=theirs\n", 0),
                "",
                "holds TYPE=ext4 , not xfs: refusing to format it",
            ),
            (("PTTYPE=gpt\n", 0), "", "holds PTTYPE=gpt , not xfs"),
            (("blkid: cannot read", 4), "", "blkid -p"),
            (BLANK, "/dev/other", "is a mount of /dev/other already"),
        ];
        for (blkid, findmnt, want) in cases {
            r.reset();
            let (ok, calls, err) = r.run(blkid, findmnt);
            assert!(!ok, "{want}: must refuse");
            assert!(err.contains(want), "{want}: {err}");
            assert!(!calls.contains("mkfs"), "{want}: {calls}");
            assert!(!calls.contains("systemctl"), "{want}: {calls}");
            assert!(r.unit().is_none(), "{want}: a unit was written");
        }
        // Files in the mount point would be hidden by the mount.
        std::fs::write(r.mount.join("keep"), "x").unwrap();
        r.reset();
        let (ok, calls, err) = r.run(BLANK, "");
        assert!(!ok);
        assert!(err.contains("is not empty"), "{err}");
        assert!(
            !calls.contains("mkfs") && !calls.contains("systemctl"),
            "{calls}"
        );
        assert!(r.unit().is_none());
        std::fs::remove_file(r.mount.join("keep")).unwrap();
    }
}

#[test]
fn unclean_mount_paths_and_labels_too_long_for_the_fs_are_refused_at_render_time() {
    let refused = |mount: &str, fs: FsType, label: &str| {
        CacheMount::new(CacheMountInput {
            mount: mount.into(),
            fs: Some(fs),
            label: Some(label.into()),
            options: vec![],
        })
        .unwrap_err()
        .to_string()
    };
    for m in [
        "data",
        "/data/../etc",
        "/data/./x",
        "/da\nta",
        "/data;rm",
        "/a$(x)",
        "/a'b",
    ] {
        let e = refused(m, FsType::Xfs, "ok");
        assert!(e.starts_with("--mount "), "{m:?}: {e}");
    }
    let e = refused("/data", FsType::Xfs, "thirteenchars");
    assert!(e.contains("xfs holds at most 12 characters"), "{e}");
    let e = refused("/data", FsType::Ext4, "seventeen-chars-x");
    assert!(e.contains("ext4 holds at most 16 characters"), "{e}");
    let e = refused("/data", FsType::Xfs, "-L");
    assert!(e.starts_with("--label "), "{e}");
    let e = CacheMount::new(CacheMountInput {
        mount: "/data".into(),
        options: vec!["noatime\nx".into()],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("--options "), "{e}");
    // 16 bytes is an ext4 label; the default label is disktier.
    assert!(CacheMount::new(CacheMountInput {
        mount: "/data".into(),
        fs: Some(FsType::Ext4),
        label: Some("sixteen-chars-xy".into()),
        options: vec![],
    })
    .is_ok());
}

#[test]
fn without_mount_the_scripts_stop_at_the_cached_device() {
    let (fast, slow) = pair();
    let b = Bcache::new(BcacheConfig {
        fast,
        slow,
        mode: BcacheMode::Writeback,
        sequential_cutoff: 0,
    })
    .unwrap();
    let text = &b.render().unwrap().files[0].content;
    assert!(!text.contains("# 7. ") && !text.contains("mkfs"));
    let with = bcache(cache_mount("/data", FsType::Xfs, "cached"));
    assert!(
        with.starts_with(text.as_str()),
        "--mount only appends its step"
    );
}
