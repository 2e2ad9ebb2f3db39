//! Names derived from paths never collide: `/a-b` and `/a/b` used to share a script
//! (`/etc/disktier/a-b.sh`), its units and, as bind directories, their copy on the disk.

use disktier_disks::render::{Intent, IntentInput, Renderer, Systemd};
use std::collections::BTreeSet;

fn render(mount: &str, binds: &[&str]) -> disktier_disks::render::Rendered {
    let intent = Intent::new(IntentInput {
        mount: mount.into(),
        binds: binds.iter().map(|b| b.to_string()).collect(),
        ..Default::default()
    })
    .unwrap();
    Systemd::new(intent).render().unwrap()
}

#[test]
fn mounts_that_slug_alike_get_distinct_scripts_and_units() {
    let a = render("/mnt/a-b", &[]);
    let b = render("/mnt/a/b", &[]);
    let names = |r: &disktier_disks::render::Rendered| -> BTreeSet<String> {
        r.files
            .iter()
            .map(|f| f.name.clone())
            .filter(|n| n != "install.sh")
            .collect()
    };
    let (na, nb) = (names(&a), names(&b));
    assert!(na.is_disjoint(&nb), "{na:?} / {nb:?}");
    // Deterministic: the same request renders the same names.
    assert_eq!(names(&render("/mnt/a-b", &[])), na);
    // The plain form is kept where it is unambiguous.
    assert!(names(&render("/var/lib/containers", &[])).contains("var-lib-containers.sh"));
}

#[test]
fn binds_that_slug_alike_get_distinct_directories_on_the_disk() {
    let r = render("/mnt/disks/ssd", &["/srv/a-b", "/srv/a/b"]);
    let script = r
        .files
        .iter()
        .find(|f| f.name.ends_with(".sh") && f.name != "install.sh")
        .unwrap();
    let sources = script
        .content
        .lines()
        .find_map(|l| l.strip_prefix("BIND_SOURCES=("))
        .unwrap();
    let words: Vec<&str> = sources.trim_end_matches(')').split(' ').collect();
    assert_eq!(words.len(), 2);
    assert_ne!(words[0], words[1], "{sources}");
    let whats: BTreeSet<&str> = r
        .files
        .iter()
        .flat_map(|f| f.content.lines())
        .filter_map(|l| l.strip_prefix("What=/mnt/disks/ssd/"))
        .collect();
    assert_eq!(whats.len(), 2, "{whats:?}");
}

/// A mount point with a blank and dashes, and such a bind: systemd accepts every unit (the
/// mount unit's name matches its `Where=`, `RequiresMountsFor=` names the right parent) and
/// bash parses every script.
#[test]
fn blanks_and_dashes_survive_systemd_and_bash() {
    use disktier_cmd::{Cmd, CommandRunner, RealRunner};
    let r = render("/mnt/my disks/k8s-a", &["/var/lib/my app"]);
    let dir = tempfile::tempdir().unwrap();
    let mut units = vec!["verify".to_string()];
    for f in &r.files {
        let p = dir.path().join(&f.name);
        std::fs::write(&p, &f.content).unwrap();
        if f.name.ends_with(".sh") {
            let out = RealRunner
                .output(&Cmd::new("bash").args(["-n".to_string(), p.display().to_string()]))
                .unwrap();
            assert!(out.success(), "{}: {}", f.name, out.stderr);
        } else {
            units.push(p.display().to_string());
        }
    }
    assert!(
        units
            .iter()
            .any(|u| u.ends_with("mnt-my\\x20disks-k8s\\x2da.mount")),
        "{units:?}"
    );
    if !disktier_testkit::require(RealRunner.has_program("systemd-analyze"), "systemd-analyze") {
        return;
    }
    let out = RealRunner
        .output(&Cmd::new("systemd-analyze").args(units))
        .unwrap();
    // The script is installed under /etc/disktier on the node, not here.
    let complaints: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| {
            !l.trim().is_empty()
                && !l.contains("/etc/disktier/")
                && !l.contains("is not executable")
        })
        .collect();
    assert!(complaints.is_empty(), "{}", out.stderr);
}
