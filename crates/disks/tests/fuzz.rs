//! Fuzz targets for everything in disktier-disks that reads outside input or writes what a
//! user gave into a file (SECURITY.md, "Fuzzing"): mountinfo, `blkid -o export`, the sysfs
//! readers, the validated values, and the setup/render writers. Each runs for about a second
//! in `cargo test` over the corpus in `tests/__fuzz__/NAME/corpus` plus random inputs;
//! `bench/fuzz.sh TARGET MINUTES` runs one for longer. Memory and time per input are capped
//! by `disktier_testkit::fuzz`.
//!
//! The writers' property: whatever the user typed, either it is refused, or no line of the
//! generated fstab, unit, script or manifest holds a control character, and each parses back
//! to exactly the value asked for.

use disktier_disks::discover::{mountinfo, sysfs, Signature};
use disktier_disks::render::{
    Bcache, BcacheConfig, BcacheMode, CacheMount, CacheMountInput, CloudInit, Intent, IntentInput,
    Quantity, Renderer, Systemd,
};
use disktier_disks::setup::{persist, Step};
use disktier_disks::valid::{
    fstab_escape, fstab_unescape, unit_escape_path, unit_unescape_path, Label, Mode, MountOptions,
    MountPath, Owner,
};
use disktier_testkit::fuzz::{bounded, serial, CappedAlloc};

/// Inputs that got past validation, printed at the end of a run (a target whose inputs are
/// all refused tests nothing).
static ACCEPTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn accepted() {
    ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

fn report(target: &str) {
    eprintln!(
        "{target}: {} inputs accepted",
        ACCEPTED.swap(0, std::sync::atomic::Ordering::Relaxed)
    );
}

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(512 << 20);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Maps fuzz bytes onto an alphabet of what paths and options are made of, plus the characters
/// an attacker would use, so that valid values are common and hostile ones are close to them.
fn hostile(b: &[u8]) -> String {
    const A: &[char] = &[
        '/', '/', '/', 'a', 'b', 'Z', '0', '9', '-', '_', '.', '.', '+', '@', ':', ' ', '=', ',',
        '\n', '\t', '\0', '\'', '"', '\\', '$', '%', '`', ';', '#', 'é', '\u{7f}', '\u{85}',
    ];
    b.iter().map(|x| A[*x as usize % A.len()]).collect()
}

/// A POSIX shell word as `disktier_cmd::shell_quote` writes it, unquoted.
fn shell_unquote(w: &str) -> String {
    match w.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        Some(inner) => inner.replace("'\\''", "'"),
        None => w.to_string(),
    }
}

/// Splits a line into shell words (single quotes only, which is all shell_quote uses).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Splits a unit setting's value into words as systemd does (systemd.syntax(7): blanks
/// separate words; double quotes group, with `\\` escapes inside; `%%` is a `%`).
fn unit_words(v: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any, mut esc) = (false, false, false);
    for c in v.chars() {
        if esc {
            cur.push(c);
            esc = false;
            continue;
        }
        match c {
            '\\' => esc = true,
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).replace("%%", "%"));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur.replace("%%", "%"));
    }
    words
}

fn no_control(what: &str, text: &str) {
    for (i, line) in text.lines().enumerate() {
        assert!(
            !line.chars().any(char::is_control),
            "{what}: line {} holds a control character: {line:?}",
            i + 1
        );
    }
}

#[test]
fn fuzz_mountinfo() {
    let _g = serial();
    bolero::check!().for_each(|b: &[u8]| {
        bounded(&ALLOC, || {
            let t = text(b);
            let lines = t.lines().count();
            let entries = mountinfo::parse(&t);
            assert!(entries.len() <= lines);
            for e in entries {
                assert!(e.mount_point.len() <= t.len());
            }
        })
    });
}

#[test]
fn fuzz_blkid_export() {
    let _g = serial();
    bolero::check!().for_each(|b: &[u8]| {
        bounded(&ALLOC, || {
            let t = text(b);
            let s = Signature::parse_export(&t);
            // Blank exactly when no TYPE= and no PTTYPE= line.
            let has = |k: &str| {
                t.lines()
                    .any(|l| l.split_once('=').is_some_and(|(a, _)| a.trim() == k))
            };
            assert_eq!(s.is_blank(), !has("TYPE") && !has("PTTYPE"), "{t:?}");
        })
    });
}

/// A one-disk sysfs tree whose files hold fuzz text.
#[test]
fn fuzz_sysfs() {
    let _g = serial();
    bolero::check!()
        .with_type::<(Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>)>()
        .for_each(|(size, dev, sched, model, psize)| {
            bounded(&ALLOC, || {
                let t = tempfile::tempdir().unwrap();
                let d = t.path().join("block/vdz");
                std::fs::create_dir_all(d.join("queue")).unwrap();
                std::fs::create_dir_all(d.join("device")).unwrap();
                std::fs::create_dir_all(d.join("vdz1")).unwrap();
                std::fs::write(d.join("size"), size).unwrap();
                std::fs::write(d.join("dev"), dev).unwrap();
                std::fs::write(d.join("queue/scheduler"), sched).unwrap();
                std::fs::write(d.join("device/model"), model).unwrap();
                std::fs::write(d.join("vdz1/partition"), "1").unwrap();
                std::fs::write(d.join("vdz1/size"), psize).unwrap();
                let disks = sysfs::read_block(t.path()).unwrap();
                assert_eq!(disks.len(), 1);
                let sectors: Option<u64> = String::from_utf8_lossy(size).trim().parse().ok();
                if let Some(s) = sectors.and_then(|s| s.checked_mul(512)) {
                    assert_eq!(disks[0].size_bytes, s);
                }
                let _ = sysfs::active_scheduler(&String::from_utf8_lossy(sched));
            })
        });
}

/// Every validated type: refused, or a value without control characters, `..` or `.`
/// components, that parses back to itself and survives each target's escaping.
#[test]
fn fuzz_valid_values() {
    let _g = serial();
    bolero::check!()
        .with_type::<(Vec<u8>, Vec<u8>, bool)>()
        .for_each(|(a, b, raw)| {
            bounded(&ALLOC, || {
                let s = if *raw { text(a) } else { hostile(a) };
                if let Ok(p) = MountPath::parse("--mount", &s) {
                    assert!(!p.chars().any(char::is_control), "{p:?}");
                    assert!(p.starts_with('/') && !p.ends_with('/') && !p.contains("//"));
                    assert!(!p.split('/').any(|c| c == "." || c == ".."), "{p:?}");
                    assert_eq!(MountPath::parse("--mount", &p).as_ref(), Ok(&p));
                    assert_eq!(fstab_unescape(&fstab_escape(&p)), p.as_str());
                    let unit = unit_escape_path(&p);
                    assert!(
                        unit.chars()
                            .all(|c| c.is_ascii_alphanumeric() || ":_.-\\".contains(c)),
                        "{unit}"
                    );
                    assert_eq!(unit_unescape_path(&unit), p.as_str());
                    assert_eq!(shell_unquote(&disktier_cmd::shell_quote(&p)), p.as_str());
                }
                let opts = [s.clone(), hostile(b)];
                if let Ok(o) = MountOptions::parse("--options", &opts) {
                    let j = o.joined();
                    assert!(
                        !j.chars()
                            .any(|c| c.is_control() || c.is_whitespace() || "'\"\\$%".contains(c)),
                        "{j:?}"
                    );
                    assert_eq!(
                        MountOptions::parse("--options", std::slice::from_ref(&j)).unwrap(),
                        o
                    );
                }
                if let Ok(o) = Owner::parse("--owner", &s) {
                    assert_eq!(o.to_string(), s);
                }
                if let Ok(m) = Mode::parse("--mode", &s) {
                    assert!(m.bits() <= 0o7777);
                    assert_eq!(Mode::parse("--mode", &m.to_string()), Ok(m));
                }
                if let Ok(l) = Label::parse("--label", &s, "xfs", 12, 0, "") {
                    assert!(l.len() <= 12 && !l.starts_with('-'));
                }
            })
        });
}

/// `--request` of `render gke`/`aks`: refused, or a quantity of at least one byte that keeps its
/// text; never a panic or an overflow, whatever the digits and exponents. A plain integer is
/// its own value, and a binary suffix multiplies it exactly (saturating at `u64::MAX`).
#[test]
fn fuzz_quantity() {
    let _g = serial();
    bolero::check!()
        .with_type::<(Vec<u8>, bool)>()
        .for_each(|(b, raw)| {
            bounded(&ALLOC, || {
                let s = if *raw {
                    text(b)
                } else {
                    from(b, "0123456789012345678900.+-eEkMGTPEiKm")
                };
                let Ok(q) = Quantity::parse(&s) else {
                    return;
                };
                accepted();
                assert!(q.bytes() >= 1, "{s:?}");
                assert_eq!(q.as_str(), s);
                if let Ok(n) = s.parse::<u64>() {
                    assert_eq!(q.bytes(), n, "{s:?}");
                    for (suffix, shift) in [("Ki", 10), ("Gi", 30), ("Ei", 60)] {
                        let want = u64::try_from(u128::from(n) << shift).unwrap_or(u64::MAX);
                        let got = Quantity::parse(&format!("{s}{suffix}")).unwrap();
                        assert_eq!(got.bytes(), want, "{s}{suffix}");
                    }
                }
            })
        });
    report("fuzz_quantity");
}

/// Maps fuzz bytes onto `alphabet`.
fn from(b: &[u8], alphabet: &str) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    b.iter().map(|x| a[*x as usize % a.len()]).collect()
}

/// A path field: `/` and, with `clean`, the characters paths are made of (so that whole valid
/// requests are common), else [`hostile`] characters.
fn path_field(b: &[u8], clean: bool) -> String {
    let rest = if clean {
        from(b, PATH_CHARS)
    } else {
        hostile(b)
    };
    format!("/{rest}")
}

/// An options field: with `clean`, up to four of [`OPTIONS`] picked by its bytes, else
/// [`hostile`] characters.
fn options_field(b: &[u8], clean: bool) -> String {
    if clean {
        b.iter()
            .take(4)
            .map(|x| OPTIONS[*x as usize % OPTIONS.len()])
            .collect::<Vec<_>>()
            .join(",")
    } else {
        hostile(b)
    }
}

/// An optional field: none without bytes, else made by `clean` when the field is drawn from
/// its own alphabet and by `dirty` when not.
fn optional(
    (b, clean_field): &(Vec<u8>, bool),
    clean: impl FnOnce(&[u8]) -> String,
    dirty: fn(&[u8]) -> String,
) -> Option<String> {
    if b.is_empty() {
        None
    } else if *clean_field {
        Some(clean(b))
    } else {
        Some(dirty(b))
    }
}

const PATH_CHARS: &str = "//abcZ09-_.+@: ";
const NAME_CHARS: &str = "abcdeuser09_.-:";
const LABEL_CHARS: &str = "abcXYZ09-_";

/// A fuzz request: each field's bytes and whether it is drawn from its own alphabet.
type Fields = [(Vec<u8>, bool); 6];

/// Options drawn from real ones (a clean field picks some of these by its bytes).
const OPTIONS: [&str; 8] = [
    "prjquota",
    "discard",
    "uid=1000",
    "x-systemd.device-timeout=5s",
    "context=system_u:object_r:container_file_t:s0",
    "sunit=512",
    "nofail",
    "noatime",
];

/// Builds a render intent from fuzz fields: mount, options, owner, mode, binds, label. A clean
/// path is drawn character by character from what paths are made of; the other clean fields
/// from well-formed pieces, so that whole valid requests are common.
fn intent_input(f: &Fields) -> IntentInput {
    IntentInput {
        mount: path_field(&f[0].0, f[0].1),
        options: vec![options_field(&f[1].0, f[1].1)],
        owner: optional(
            &f[2],
            |b| format!("u{}:g{}", from(b, NAME_CHARS).replace(':', ""), b.len()),
            hostile,
        ),
        mode: optional(
            &f[3],
            |b| format!("0{}", from(&[b[0], b[0] / 8, b[0] / 64], "01234567")),
            |b| String::from_utf8_lossy(b).into_owned(),
        ),
        binds: vec![path_field(&f[4].0, f[4].1)],
        label: optional(
            &f[5],
            |b| format!("L{}", from(&b[..b.len().min(10)], LABEL_CHARS)),
            hostile,
        ),
        ..Default::default()
    }
}

/// render systemd and cloud-init: no control character in any line; the mount unit's
/// `Where=`/`Options=`, the script's `MOUNT=`/`OWNER=` and the cloud-config YAML all give back
/// what was asked.
#[test]
fn fuzz_render_writers() {
    let _g = serial();
    bolero::check!().with_type::<Fields>().for_each(|parts| {
        bounded(&ALLOC, || {
            let Ok(intent) = Intent::new(intent_input(parts)) else {
                return;
            };
            accepted();
            let r = Systemd::new(intent.clone()).render().unwrap();
            let mut names: Vec<&str> = r.files.iter().map(|f| f.name.as_str()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), r.files.len(), "file names collide: {names:?}");
            for f in &r.files {
                no_control(&f.name, &f.content);
                assert!(!f.name.contains('/') && !f.name.chars().any(char::is_control));
                // A file or unit name systemd and Linux take (QA: a long --mount gave longer).
                assert!(f.name.len() <= 255, "{} bytes: {}", f.name.len(), f.name);
            }
            let unit = r
                .file(&format!("{}.mount", unit_escape_path(&intent.mount)))
                .expect("the mount unit");
            let value = |text: &str, key: &str| -> Vec<String> {
                text.lines()
                    .filter_map(|l| l.strip_prefix(key).map(str::to_string))
                    .collect()
            };
            assert_eq!(value(&unit.content, "Where="), [intent.mount.to_string()]);
            assert_eq!(value(&unit.content, "Options="), [intent.options_string()]);
            let mkfs = r
                .files
                .iter()
                .find(|f| f.name.starts_with("disktier-mkfs-"))
                .unwrap();
            let rmf = value(&mkfs.content, "RequiresMountsFor=");
            assert_eq!(
                unit_words(&rmf[0]),
                [intent.mount.parent_str(), "/etc/disktier"],
                "{}",
                rmf[0]
            );
            let script = r
                .files
                .iter()
                .find(|f| f.name.ends_with(".sh") && f.name != "install.sh")
                .unwrap();
            let m = value(&script.content, "MOUNT=");
            assert_eq!(m.len(), 1);
            assert_eq!(shell_unquote(&m[0]), intent.mount.as_str());
            let o = value(&script.content, "OWNER=");
            assert_eq!(
                shell_unquote(&o[0]),
                intent
                    .owner
                    .as_ref()
                    .map(|o| o.to_string())
                    .unwrap_or_default()
            );
            let ci = CloudInit::new(intent.clone()).render().unwrap();
            let doc = &ci.files[0].content;
            no_control("user-data", doc);
            let y: serde_json::Value = serde_yaml_ng::from_str(doc).expect("valid YAML");
            let files = y["write_files"].as_array().unwrap();
            let mount_unit = files
                .iter()
                .find(|f| {
                    f["path"].as_str().is_some_and(|p| {
                        p.ends_with(".mount") && p.contains(&unit_escape_path(&intent.mount))
                    })
                })
                .expect("the mount unit in write_files");
            let content = mount_unit["content"].as_str().unwrap();
            assert_eq!(value(content, "Where="), [intent.mount.to_string()]);
            // render bcache --mount: the same values reach the cache script's mount step.
            let input = intent_input(parts);
            let m = CacheMount::new(CacheMountInput {
                mount: input.mount,
                fs: input.fs,
                label: input.label,
                options: input.options,
            })
            .expect("what Intent takes, CacheMount takes");
            let b = Bcache::new(BcacheConfig {
                fast: "/dev/disk/by-id/fast".into(),
                slow: "/dev/disk/by-id/slow".into(),
                mode: BcacheMode::Writeback,
                sequential_cutoff: 0,
            })
            .unwrap()
            .with_mount(m);
            let text = &b.render().unwrap().files[0].content;
            no_control("bcache-setup.sh", text);
            let m = value(text, "MOUNT=");
            assert_eq!(m.len(), 1);
            assert_eq!(shell_unquote(&m[0]), intent.mount.as_str());
            assert_eq!(value(text, "Where="), [intent.mount.to_string()]);
        })
    });
    report("fuzz_render_writers");
}

/// setup's writers: fstab lines, mount/bind/boot units and the dry-run shell lines.
#[test]
fn fuzz_setup_writers() {
    let _g = serial();
    bolero::check!()
        .with_type::<((Vec<u8>, bool), (Vec<u8>, bool), (Vec<u8>, bool))>()
        .for_each(|(m, o, b)| {
            bounded(&ALLOC, || {
                let (Ok(mount), Ok(opts), Ok(bind)) = (
                    MountPath::parse("--mount", &path_field(&m.0, m.1)),
                    MountOptions::parse("--options", &[options_field(&o.0, o.1)]),
                    MountPath::parse("--bind", &path_field(&b.0, b.1)),
                ) else {
                    return;
                };
                accepted();
                let line = persist::fstab_line("UUID=u", &mount, "xfs", &opts.joined());
                no_control("fstab", &line);
                let f: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(f.len(), 8, "{line}");
                assert_eq!(fstab_unescape(f[1]), mount.as_str());
                assert_eq!(f[3], format!("{},nofail", opts.joined()));
                let merged = persist::merge_fstab(
                    "UUID=r / ext4 defaults 0 1\n",
                    &mount,
                    std::slice::from_ref(&line),
                )
                .unwrap();
                assert_eq!(merged.lines().count(), 2);
                let unit = persist::fs_unit("/dev/disk/by-uuid/u", &mount, "xfs", &opts.joined());
                no_control("unit", &unit);
                assert!(unit.lines().any(|l| l == format!("Where={mount}")));
                let src = mount.join_below(&bind);
                let bu = persist::bind_unit(&src, &bind, &persist::mount_unit_name(&mount));
                no_control("bind unit", &bu);
                assert!(bu.lines().any(|l| l == format!("What={src}")));
                let exec = [
                    "/usr/local/bin/disktier".to_string(),
                    "--mount".into(),
                    mount.to_string(),
                ]
                .iter()
                .map(|a| persist::exec_arg(a))
                .collect::<Vec<_>>()
                .join(" ");
                no_control(
                    "boot unit",
                    &persist::boot_unit(&exec, &mount, "x.mount", "/var/lib/disktier"),
                );
                let step = Step::Mount {
                    what: "UUID=u".into(),
                    target: mount.clone(),
                    fstype: "xfs".into(),
                    options: opts.joined(),
                };
                for l in step.shell() {
                    no_control("script", &l);
                    let w = shell_words(&l);
                    assert_eq!(w.last().map(String::as_str), Some(mount.as_str()), "{l}");
                    assert_eq!(w[4], opts.joined());
                }
                let wf = Step::WriteFile {
                    path: "/etc/fstab".into(),
                    contents: format!("{line}\nEOF\n"),
                    was: 0,
                };
                let sh = wf.shell().join("\n");
                // The heredoc ends only at its own delimiter, after the contents.
                let delim = sh.lines().last().unwrap();
                assert!(sh
                    .lines()
                    .next()
                    .unwrap()
                    .ends_with(&format!("<<'{delim}'")));
                assert_eq!(sh.lines().filter(|l| *l == delim).count(), 1, "{sh}");
            })
        });
    report("fuzz_setup_writers");
}

/// An existing fstab of any content merged with disktier's lines: our lines end up in it
/// exactly once (where this setup's first old line was, else at the end); every line not
/// tagged as this setup's is kept in order (other setups' tagged lines too); a foreign line on
/// one of our targets is refused instead.
#[test]
fn fuzz_fstab_merge() {
    let _g = serial();
    bolero::check!()
        .with_type::<(Vec<u8>, (Vec<u8>, bool))>()
        .for_each(|(existing, (m, clean))| {
            bounded(&ALLOC, || {
                let existing = text(existing);
                let Ok(mount) = MountPath::parse("--mount", &path_field(m, *clean)) else {
                    return;
                };
                let ours = persist::fstab_line("UUID=u", &mount, "xfs", "defaults");
                match persist::merge_fstab(&existing, &mount, std::slice::from_ref(&ours)) {
                    Ok(merged) => {
                        assert_eq!(merged.lines().filter(|l| *l == ours).count(), 1);
                        // Every line not ours, byte for byte (a last line without a newline
                        // gets one).
                        let kept: String = existing
                            .split_inclusive('\n')
                            .filter(|l| {
                                let l = l.trim_end_matches('\n').trim_end_matches('\r');
                                // A tagged line on our target is replaced even if another
                                // setup wrote it (two lines must not mount one place).
                                let on_target =
                                    l.split_whitespace().nth(1).map(persist::fstab_path)
                                        == ours.split_whitespace().nth(1).map(persist::fstab_path);
                                !(l.trim_end().ends_with(persist::FSTAB_TAG)
                                    && (on_target || persist::setup_line_for(l, &mount)))
                            })
                            .map(|l| {
                                if l.ends_with('\n') {
                                    l.to_string()
                                } else {
                                    format!("{l}\n")
                                }
                            })
                            .collect();
                        let line = format!("{ours}\n");
                        let mut rest: Vec<&str> = merged.split_inclusive('\n').collect();
                        let at = rest.iter().position(|l| *l == line).unwrap();
                        rest.remove(at);
                        assert_eq!(rest.concat(), kept);
                        // Where the first line it replaced was, or at the end.
                        let first_dropped = existing
                            .split_inclusive('\n')
                            .map(|l| l.trim_end_matches('\n').trim_end_matches('\r'))
                            .position(|l| {
                                l.trim_end().ends_with(persist::FSTAB_TAG)
                                    && !kept
                                        .split_inclusive('\n')
                                        .any(|k| k.trim_end_matches('\n') == l)
                            });
                        if first_dropped.is_none() {
                            assert_eq!(at, rest.len());
                        }
                        // Merging again changes nothing.
                        assert_eq!(
                            persist::merge_fstab(&merged, &mount, std::slice::from_ref(&ours))
                                .as_ref(),
                            Ok(&merged)
                        );
                    }
                    Err(line) => assert!(existing.lines().any(|l| l == line)),
                }
            })
        });
}

/// Any bytes as setup's undo journal (`/var/lib/disktier/undo-*.json`, a private file of root
/// that a resumed `setup --undo` trusts to say what to unmount and wipe): read back, it is
/// refused, or everything in it is what setup itself records: the undo's own mount point, bind
/// targets that are valid mount paths, and a device that `setup --devices` would take.
#[test]
fn fuzz_setup_journal() {
    use disktier_disks::setup::undo::read_journal;
    use disktier_disks::setup::DevicePath;
    use std::os::unix::fs::PermissionsExt;
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("undo-srv-data.json");
    let mount = MountPath::parse("--mount", "/srv/data").unwrap();
    disktier_testkit::fuzz_target!("fuzz_setup_journal", |input| {
        bounded(&ALLOC, || {
            std::fs::write(&path, input).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let Ok(Some(j)) = read_journal(&path, &mount) else {
                return;
            };
            accepted();
            assert_eq!(j.mount, "/srv/data");
            for b in &j.binds {
                assert!(MountPath::parse("--bind", b).is_ok(), "{b:?}");
            }
            if let Some(d) = &j.device {
                assert!(DevicePath::parse(d).is_ok(), "{d:?}");
            }
        })
    });
}
