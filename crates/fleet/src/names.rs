//! The names fleet gives and takes: namespaces, service accounts, run ids, node names and
//! image references checked once, and each node's Job name made from its run and node.

use crate::error::{FleetError, Result};

/// A namespace or a run id: an RFC 1123 label (lowercase alphanumerics and `-`, at most 63,
/// starting and ending alphanumeric).
pub fn check_dns_label(what: &'static str, s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(FleetError::Invalid {
            what,
            value: s.to_string(),
            why: "must be lowercase letters, digits and `-`, at most 63, not starting or ending with `-`".into(),
        })
    }
}

/// An image reference as container runtimes parse it (the distribution project's reference
/// grammar, github.com/distribution/reference, regexp.go): `[HOST[:PORT]/]PATH[:TAG][@DIGEST]`,
/// PATH lowercase components joined by `/`, each alphanumerics joined by `.`, `_`, `__` or
/// `-`s; a tag of at most 128 word characters, `.` and `-`, not starting with `.` or `-`; a
/// digest `ALGORITHM:HEX` of at least 32 hex digits; the name at most 255 characters. QA: a
/// reference the runtime refuses (`Registry/X:1`, `x:`, `r/x@sha256:abc`) was written into every
/// Job, and each node failed in turn with InvalidImageName.
pub fn check_image(s: &str) -> Result<()> {
    match image_problem(s) {
        None => Ok(()),
        Some(why) => Err(FleetError::Invalid {
            what: "--image",
            value: s.to_string(),
            why: format!("{why}: give an image reference such as registry.local/disktier:0.1.0 or localhost/disktier@sha256:<64 hex digits>"),
        }),
    }
}

/// Whether `p` is lowercase alphanumerics joined by `.`, `_`, `__` or a run of `-`.
fn path_component(p: &str) -> bool {
    let b = p.as_bytes();
    let an = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && an(b[i]) {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i == b.len() {
            return true;
        }
        match b[i] {
            b'.' => i += 1,
            b'_' => i += if b.get(i + 1) == Some(&b'_') { 2 } else { 1 },
            b'-' => {
                while b.get(i) == Some(&b'-') {
                    i += 1;
                }
            }
            _ => return false,
        }
    }
}

/// What is wrong with image reference `s`, if anything (see [`check_image`]).
fn image_problem(s: &str) -> Option<String> {
    if s.is_empty() || s.len() > 512 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("an image reference is 1 to 512 characters with no spaces".into());
    }
    let alnum = |t: &str, lower: bool| {
        !t.is_empty()
            && t.bytes().all(|b| {
                b.is_ascii_digit() || b.is_ascii_lowercase() || (!lower && b.is_ascii_uppercase())
            })
    };
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    if let Some(d) = digest {
        let ok = d.split_once(':').is_some_and(|(alg, hex)| {
            alg.split(['+', '.', '_', '-']).all(|c| alnum(c, true))
                && hex.len() >= 32
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
        if !ok {
            return Some(format!(
                "the digest `{d}` is not ALGORITHM:HEX (sha256: and 64 hex digits)"
            ));
        }
    }
    let after_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[after_slash..].rfind(':') {
        Some(i) => (&rest[..after_slash + i], Some(&rest[after_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let ok = (1..=128).contains(&t.len())
            && word(t.as_bytes()[0])
            && t.bytes().all(|b| word(b) || b == b'.' || b == b'-');
        if !ok {
            return Some(format!("the tag `{t}` is not 1 to 128 letters, digits, `_`, `.` or `-` starting with a letter, digit or `_`"));
        }
    }
    if name.is_empty() || name.len() > 255 {
        return Some(
            "the image name (before the tag) is empty or longer than 255 characters".into(),
        );
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    if parts.len() > 1 && (first.contains(['.', ':']) || first == "localhost") {
        let (host, port) = match first.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (first, None),
        };
        let host_ok = host
            .split('.')
            .all(|c| alnum(&c.replace('-', ""), false) && !c.starts_with('-') && !c.ends_with('-'));
        let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !host_ok || !port_ok {
            return Some(format!(
                "the registry `{first}` is not a host name with an optional :PORT"
            ));
        }
        parts.remove(0);
    }
    if let Some(p) = parts.into_iter().find(|p| !path_component(p)) {
        return Some(format!("`{p}` is not a repository path component: lowercase letters and digits, joined by `.`, `_`, `__` or `-`s"));
    }
    None
}

/// Whether `s` is an RFC 1123 subdomain as Kubernetes checks one (IsDNS1123Subdomain: the
/// pattern and 253 in all, no bound per label): dot-separated labels, each starting and ending
/// with a letter or digit (QA: `a..b` and `a.-b` were taken as node names, and the API server
/// refuses them).
fn is_dns_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && l.as_bytes()[0].is_ascii_alphanumeric()
            && l.as_bytes()[l.len() - 1].is_ascii_alphanumeric()
    };
    !s.is_empty() && s.len() <= 253 && s.split('.').all(label)
}

/// A ServiceAccount's name (`--service-account`): an RFC 1123 subdomain, as the API server
/// checks it (k8s.io/apimachinery pkg/api/validation/generic.go: `ValidateServiceAccountName =
/// NameIsDNSSubdomain`). QA: it was checked as a DNS label, so a valid account such as
/// `ci.disktier` was refused by `fleet run` and `fleet rbac`.
pub fn check_service_account(s: &str) -> Result<()> {
    check_subdomain("--service-account", "a ServiceAccount's name", s)
}

/// A node name as the API server takes it (RFC 1123 subdomain: at most 253).
pub fn check_node_name(s: &str) -> Result<()> {
    check_subdomain("node name", "a node name", s)
}

/// `s` as an RFC 1123 subdomain, or the error naming `what` and saying what `noun` must be.
fn check_subdomain(what: &'static str, noun: &str, s: &str) -> Result<()> {
    if is_dns_subdomain(s) {
        Ok(())
    } else {
        Err(FleetError::Invalid {
            what,
            value: s.to_string(),
            why: format!("{noun} is an RFC 1123 subdomain: lowercase letters, digits and `-` in labels that start and end with a letter or digit, joined by `.` (at most 253 in all)"),
        })
    }
}

/// The longest run suffix (the run id's last `-` part) a Job name carries: 16 characters keeps
/// room for the node in the 52 (the run's ids end in 6 hex digits; a longer `--run-id` is
/// refused by [`check_run_id`], and [`job_name`] cuts one anyway rather than overflow).
const MAX_RUN_SUFFIX: usize = 16;

/// The longest Job name: the Job controller's pod names add 6 characters (`-` and 5 random) to
/// the Job's, and a pod name must stay a 63-character DNS label as well.
pub const MAX_JOB_NAME: usize = 52;

/// A fleet run id (`--run-id`, `fleet clean --run`): a DNS label (it is a label value and part
/// of every Job name) whose last `-` part, the one Job names carry, is at most 16 characters.
pub fn check_run_id(what: &'static str, s: &str) -> Result<()> {
    check_dns_label(what, s)?;
    let suffix = s.rsplit('-').next().unwrap_or(s);
    if suffix.len() > MAX_RUN_SUFFIX {
        return Err(FleetError::Invalid {
            what,
            value: s.to_string(),
            why: format!(
                "its last `-` part ({} characters) goes into every Job name: at most {MAX_RUN_SUFFIX}, like the ids fleet makes (20261124-121935-a3f90c)",
                suffix.len()
            ),
        });
    }
    Ok(())
}

/// The Job's name for a node: `disktier-<run suffix>-<node, cleaned and cut>-<hash>`, at most
/// [`MAX_JOB_NAME`] characters and a DNS label. The hash (32 bits of FNV-1a over the full node
/// name) is always there: cleaning maps `.` to `-`, so `ip-10-0-0-1.ec2.internal` and
/// `ip-10-0-0-1-ec2-internal` (both valid node names) would otherwise get one Job name, and a
/// name with the hash only sometimes could equal another node's name without it. Total for any
/// input (a run suffix past 16 characters is cut, nothing underflows); two nodes of one run
/// can share a name only if their hashes collide, which [`job_names`] refuses.
pub fn job_name(run_id: &str, node: &str) -> String {
    let suffix = clean(run_id.rsplit('-').next().unwrap_or(run_id));
    let suffix = suffix[..suffix.len().min(MAX_RUN_SUFFIX)].trim_matches('-');
    let hash = format!("{:08x}", fnv1a(node.as_bytes()) & 0xffff_ffff);
    let head = if suffix.is_empty() {
        "disktier".to_string()
    } else {
        format!("disktier-{suffix}")
    };
    // head, `-`, the node, `-`, the hash.
    let room = MAX_JOB_NAME.saturating_sub(head.len() + 2 + hash.len());
    let body = clean(node);
    let body = body[..body.len().min(room)].trim_matches('-');
    if body.is_empty() {
        format!("{head}-{hash}")
    } else {
        format!("{head}-{body}-{hash}")
    }
}

/// The Job names of one run's nodes, in order; an error if two nodes would share one (their
/// 32-bit hashes collide: about one pair in 2^32, but then one node would not be measured).
pub fn job_names(run_id: &str, nodes: &[String]) -> Result<Vec<String>> {
    let names: Vec<String> = nodes.iter().map(|n| job_name(run_id, n)).collect();
    for (i, a) in names.iter().enumerate() {
        if let Some(j) = names[..i].iter().position(|b| b == a) {
            return Err(FleetError::Invalid {
                what: "node names",
                value: format!("{}, {}", nodes[j], nodes[i]),
                why: format!("both give the Job name {a}: measure them in two runs"),
            });
        }
    }
    Ok(names)
}

/// Lowercase ASCII letters and digits kept, everything else `-` (one `-` per character, so
/// the result is ASCII and as long in bytes as it is in characters).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// 64-bit FNV-1a (Fowler, Noll, Vo; the offset basis and prime of the 64-bit variant): a short,
/// stable fingerprint of a name, not a secret.
pub(crate) fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_fit_and_stay_distinct() {
        let name = job_name("20261124-121935-a3f90c", "node-1");
        assert!(name.starts_with("disktier-a3f90c-node-1-"), "{name}");
        assert_eq!(name.len(), "disktier-a3f90c-node-1-".len() + 8, "{name}");
        let long_a = format!("{}.a.example.com", "x".repeat(80));
        let long_b = format!("{}.b.example.com", "x".repeat(80));
        let (a, b) = (job_name("r-a3f90c", &long_a), job_name("r-a3f90c", &long_b));
        assert!(
            a.len() <= MAX_JOB_NAME && b.len() <= MAX_JOB_NAME,
            "{a} {b}"
        );
        assert_ne!(a, b);
        check_dns_label("job", &a).unwrap();
        check_dns_label("job", &job_name("r-1", "ip-10-0-0-1.ec2.internal")).unwrap();
    }

    /// QA: `qa.dot` and `qa-dot` got one Job name, and the second node failed AlreadyExists.
    #[test]
    fn names_that_differ_only_in_dot_and_dash_get_two_job_names() {
        for (a, b) in [
            ("qa.dot", "qa-dot"),
            ("ip-10-0-0-1.ec2.internal", "ip-10-0-0-1-ec2-internal"),
        ] {
            let (ja, jb) = (job_name("r-a3f90c", a), job_name("r-a3f90c", b));
            assert_ne!(ja, jb);
            check_dns_label("job", &ja).unwrap();
        }
        let names = job_names("r-a3f90c", &["qa.dot".into(), "qa-dot".into()]).unwrap();
        assert_ne!(names[0], names[1]);
        // The same node twice is one name twice: refused, not created twice.
        assert!(job_names("r-a3f90c", &["a".into(), "a".into()]).is_err());
    }

    /// QA: `--run-id` of 40 characters and a 60-character node name panicked (52 - head.len()
    /// underflowed); 50 characters gave a name past 52.
    #[test]
    fn long_run_ids_are_refused_and_never_panic() {
        let node = "n".repeat(60);
        for len in [1, 16, 17, 40, 50, 63, 200] {
            let id = "a".repeat(len);
            let name = job_name(&id, &node);
            assert!(name.len() <= MAX_JOB_NAME, "{len}: {name}");
            check_dns_label("job", &name).unwrap();
            assert_eq!(check_run_id("--run-id", &id).is_ok(), len <= 16, "{len}");
        }
        check_run_id("--run-id", "20261124-121935-a3f90c").unwrap();
        assert!(check_run_id("--run-id", "Bad").is_err());
        // Not a DNS label at all: still a DNS-label Job name, no panic.
        for id in ["", "-", "é-ü", "x-"] {
            check_dns_label("job", &job_name(id, "node-1")).unwrap();
        }
    }

    #[test]
    fn a_service_account_is_a_dns_subdomain() {
        for ok in [
            "disktier-fleet",
            "ci.disktier",
            "a",
            &format!("{}.b", "a".repeat(251)),
        ] {
            check_service_account(ok).unwrap();
        }
        for bad in ["", "Ci", "a..b", "-a", "a.", "a_b", &"a".repeat(254)] {
            let e = check_service_account(bad).unwrap_err().to_string();
            assert!(e.starts_with("--service-account `"), "{e}");
        }
        // Both commands that take one (QA: `ci.disktier` was refused by both).
        let who = crate::rbac::Who::from_options(None, "ci.disktier".into()).unwrap();
        assert_eq!(who, crate::rbac::Who::ServiceAccount("ci.disktier".into()));
        let mut o = crate::manifest::example_options();
        o.service_account = Some("ci.disktier".into());
        o.into_config(&["check".into(), "etcd".into(), "/x".into()])
            .unwrap();
    }

    #[test]
    fn checks_names() {
        check_dns_label("--namespace", "disktier").unwrap();
        assert!(check_dns_label("--namespace", "Disk tier").is_err());
        assert!(check_dns_label("--namespace", "-x").is_err());
        assert!(check_image("a b").is_err());
        check_image("localhost/disktier:0.1.0").unwrap();
        for ok in [
            "busybox",
            "quay.io/openshift-scale/etcd-perf",
            "registry.local:5000/a/b_c__d-e.f--g:v1.2-rc_3",
            "REGISTRY.example.com/team/disktier:0.3",
            &format!("localhost/disktier@sha256:{}", "a".repeat(64)),
            &format!("localhost/disktier:0.1.0@sha256:{}", "0".repeat(64)),
        ] {
            check_image(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        // QA: each was written into every Job, and every node failed with InvalidImageName.
        for bad in [
            "Registry.Local/X:1",
            "x:",
            ":tag",
            "r/x@sha256:abc",
            "x//y",
            "x/-y",
            "x/y.",
            "x:tag/y",
            "x:.t",
            "a/B",
        ] {
            let e = check_image(bad).unwrap_err().to_string();
            assert!(e.contains("give an image reference such as"), "{bad}: {e}");
        }
        check_node_name("ip-10-0-0-1.ec2.internal").unwrap();
        assert!(check_node_name("a/b").is_err());
        // Each dot-separated label is a DNS label (QA: `a..b` was taken).
        for bad in ["a..b", "a.-b", "a-.b", ".a", "a.", &"x".repeat(254)] {
            assert!(check_node_name(bad).is_err(), "{bad}");
        }
        // Kubernetes bounds the whole name, not each label (review).
        check_node_name(&format!("{}.b", "x".repeat(64))).unwrap();
        assert!(check_node_name("").is_err());
    }

    /// QA: a newline in a node name, namespace, image or path was kept in the error, which
    /// the binary prints with its line breaks: `--nodes $'a\nb'` gave a two-line error.
    #[test]
    fn a_newline_in_what_is_refused_stays_on_the_errors_line() {
        let errors = [
            check_node_name("a\nb").unwrap_err(),
            check_dns_label("--namespace", "x\ny").unwrap_err(),
            check_image("x\ny").unwrap_err(),
            crate::command::NodeCommand::parse(&["chec\nk".into()]).unwrap_err(),
            crate::command::NodeCommand::parse(&["check".into(), "/a\n/..".into()]).unwrap_err(),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(!msg.contains('\n') && msg.contains("\\n"), "{msg:?}");
        }
    }
}
