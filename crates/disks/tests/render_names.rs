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
