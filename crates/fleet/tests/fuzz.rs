//! Fuzz targets (bolero) for what fleet reads from outside: a node pod's log (written by
//! whatever ran on the node), the node command the user typed after `--`, and Node objects as
//! the API server returns them. Each runs over its corpus in `tests/__fuzz__/<target>/corpus`
//! and briefly on random inputs in `cargo test`; `bench/fuzz.sh TARGET MINUTES` runs one long.

use disktier_fleet::command::{NodeCommand, PathKind};
use disktier_fleet::k8s_openapi::api::core::v1::Node;
use disktier_fleet::manifest::{self, JobConfig, PullPolicy};
use disktier_fleet::result::{parse_log, NodeDoc};
use disktier_fleet::select::{self, Selection};
use disktier_fleet::summary::{summarize, NodeReport, Status};
use disktier_testkit::fuzz::CappedAlloc;
use disktier_testkit::fuzz_target;
use std::time::Duration;

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(1 << 30);

/// Property: a pod log gives a document or an error. A document reads back to the same type
/// from the raw value fleet stores, its key figures are sane, and a fleet summary over it
/// (and a second, failed node) is made without a panic.
#[test]
fn fuzz_pod_log() {
    fuzz_target!("fuzz_pod_log", |input| {
        let log = String::from_utf8_lossy(input);
        let Ok((value, doc)) = parse_log(&log) else {
            return;
        };
        assert_eq!(NodeDoc::from_value(&value), Ok(doc.clone()));
        let f = doc.figures();
        if let Some(iops) = f.iops {
            assert!(!iops.is_nan(), "{f:?}");
        }
        let mut ok = NodeReport::new("a", None, None);
        ok.status = match f.pass {
            Some(false) => Status::Fail,
            _ => Status::Pass,
        };
        ok.figures = f;
        ok.result = Some(value);
        let mut failed = NodeReport::new("b", None, None);
        failed.reason = Some("deadline".into());
        let s = summarize(&[ok, failed]);
        serde_json::to_string(&s).expect("a summary serialises");
    });
}

/// Property: a node command is refused or gives host paths that are absolute and normalised,
/// never the node's root, nothing under /proc or /sys, and under /dev only block devices
/// (mounted as such, privileged); the Job made from it serialises to YAML that reads back, with
/// the user's words passed through as they were (after the kubelet's `$(VAR)` expansion).
#[test]
fn fuzz_node_command() {
    fuzz_target!("fuzz_node_command", |input| {
        let args: Vec<String> = String::from_utf8_lossy(input)
            .split('\0')
            .map(str::to_string)
            .collect();
        let Ok(cmd) = NodeCommand::parse(&args) else {
            return;
        };
        for hp in &cmd.host_paths {
            let p = hp.path.as_str();
            assert!(p.starts_with('/') && p.len() > 1, "{p:?}");
            assert!(!p.ends_with('/') && !p.contains("//"), "{p:?}");
            assert!(
                !p.split('/').any(|c| c == "." || c == ".."),
                "{p:?} has a dot component"
            );
            assert!(!["/proc", "/sys", "/dev"].contains(&p), "{p:?}");
            assert!(
                !p.starts_with("/proc/") && !p.starts_with("/sys/"),
                "{p:?} is under a kernel tree"
            );
            for pseudo in ["/dev/shm", "/dev/pts", "/dev/mqueue", "/dev/hugepages"] {
                assert!(
                    p != pseudo && !p.starts_with(&format!("{pseudo}/")),
                    "{p:?} is no block device"
                );
            }
            if p.starts_with("/dev/") {
                assert_eq!(hp.kind, PathKind::BlockDevice, "{p:?}");
                assert!(cmd.privileged.is_some(), "{p:?}");
            }
        }
        let container_args = cmd.container_args();
        // What the kubelet runs is the args after its `$(VAR)` expansion: the user's as typed.
        let expanded: Vec<String> = container_args.iter().map(|a| kubelet_expand(a)).collect();
        assert!(expanded.starts_with(&cmd.user_args), "{expanded:?}");
        let cfg = JobConfig {
            run_id: "fuzz-0123abcd".into(),
            namespace: "disktier".into(),
            image: "localhost/disktier:0.1.0".into(),
            pull_policy: PullPolicy::IfNotPresent,
            service_account: None,
            timeout: Duration::from_secs(600),
            ttl: Duration::from_secs(600),
            tolerate_all: false,
            command: cmd,
        };
        let job = manifest::job(&cfg, "node-a");
        let yaml = manifest::to_yaml(&[job]).expect("a Job serialises");
        let back: serde_yaml_ng::Value = serde_yaml_ng::from_str(&yaml).expect("YAML reads back");
        let args = &back["spec"]["template"]["spec"]["containers"][0]["args"];
        let args: Vec<&str> = args
            .as_sequence()
            .expect("the container has args")
            .iter()
            .map(|a| a.as_str().expect("each arg is a string"))
            .collect();
        assert_eq!(args, container_args);
    });
}

/// Property: any Node object the API could return is judged without a panic; a node is
/// measured only when it reported Ready and has no NoExecute taint the pod does not tolerate
/// (with `--tolerate-all` every taint is tolerated); the Job name made from its name is a DNS
/// label short enough for the pods the Job controller names after it, and two different
/// valid node names never give one Job name (QA: `qa.dot` and `qa-dot` did).
#[test]
fn fuzz_node_object() {
    let default = manifest::tolerations(false);
    let all = manifest::tolerations(true);
    fuzz_target!("fuzz_node_object", |input| {
        let Ok(node) = serde_json::from_slice::<Node>(input) else {
            return;
        };
        let c = select::candidate(&node, &default);
        if c.skip.is_none() {
            let ready = node
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
                .map(|c| c.status.as_str());
            assert_eq!(ready, Some("True"), "{c:?}");
            assert!(
                select::untolerated_no_execute(&node, &default).is_empty(),
                "{c:?} is measured though a NoExecute taint would evict its pod"
            );
        }
        assert!(select::untolerated_no_execute(&node, &all).is_empty());
        if select::candidate(&node, &all).skip.is_none() {
            assert!(c.skip.is_none() || c.skip.as_deref().unwrap().contains("NoExecute"));
        }
        let nodes = [node.clone(), node];
        for sel in [
            Selection::All,
            Selection::ControlPlane,
            Selection::Names(vec![c.node.clone(), "zz".into()]),
        ] {
            let got = select::candidates(&sel, &nodes, &default);
            assert!(got.windows(2).all(|w| w[0].node < w[1].node), "{got:?}");
        }
        if manifest::check_node_name(&c.node).is_ok() {
            let name = manifest::job_name("fuzz-0123abcd", &c.node);
            assert!(name.len() <= manifest::MAX_JOB_NAME, "{name}");
            assert!(manifest::check_dns_label("job", &name).is_ok(), "{name}");
            // Against its near twins (`.` and `-` swapped, a character dropped or added) and
            // every other string of the object that is a valid node name too.
            let meta = &nodes[0].metadata;
            let others = near_twins(&c.node).into_iter().chain(
                [meta.labels.as_ref(), meta.annotations.as_ref()]
                    .into_iter()
                    .flatten()
                    .flat_map(|m| m.iter().flat_map(|(k, v)| [k.clone(), v.clone()])),
            );
            for other in others {
                if other != c.node && manifest::check_node_name(&other).is_ok() {
                    let theirs = manifest::job_name("fuzz-0123abcd", &other);
                    assert_ne!(name, theirs, "{:?} and {other:?}", c.node);
                    let pair = [c.node.clone(), other];
                    assert!(manifest::job_names("fuzz-0123abcd", &pair).is_ok());
                }
            }
        }
    });
}

/// Names one edit away from `name`: each `.` made `-` and back, all at once and one at a time,
/// the last character dropped, a digit appended.
fn near_twins(name: &str) -> Vec<String> {
    let swap = |c: char| match c {
        '.' => '-',
        '-' => '.',
        c => c,
    };
    let mut v = vec![
        name.chars().map(swap).collect::<String>(),
        name.replace('.', "-"),
        name.replace('-', "."),
        format!("{name}0"),
    ];
    if name.len() > 1 {
        v.push(name[..name.len() - 1].to_string());
    }
    for (i, c) in name.char_indices().filter(|(_, c)| matches!(c, '.' | '-')) {
        let mut s = name.to_string();
        s.replace_range(i..i + 1, &swap(c).to_string());
        v.push(s);
    }
    v
}

/// The corpora reach past the first check: each log seed is a document, each node seed a Node
/// (one Ready and measured, one unreachable, one tainted NoExecute), and each command seed but
/// the one with `..` a node command (so the targets above test the
/// paths that accept, not only the refusals).
#[test]
fn the_seeds_are_accepted() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let seeds = |t| disktier_testkit::fuzz::seeds(dir, t);
    let logs = seeds("fuzz_pod_log");
    assert_eq!(logs.len(), 4);
    for s in &logs {
        parse_log(&String::from_utf8_lossy(s)).expect("a seed log holds a document");
    }
    let nodes = seeds("fuzz_node_object");
    assert_eq!(nodes.len(), 3);
    let tolerations = manifest::tolerations(false);
    let judged: Vec<_> = nodes
        .iter()
        .map(|s| select::candidate(&serde_json::from_slice::<Node>(s).unwrap(), &tolerations))
        .collect();
    assert_eq!(judged.iter().filter(|c| c.skip.is_none()).count(), 1);
    let commands = seeds("fuzz_node_command");
    let parsed: Vec<bool> = commands
        .iter()
        .map(|s| {
            let args: Vec<String> = String::from_utf8_lossy(s)
                .split('\0')
                .map(str::to_string)
                .collect();
            NodeCommand::parse(&args).is_ok()
        })
        .collect();
    assert_eq!(parsed.iter().filter(|ok| !**ok).count(), 1, "{parsed:?}");
}

/// The kubelet's expansion of a container arg (Kubernetes' third_party/forked/golang/expansion,
/// as 1.20 has it): `$$` is `$`, `$(NAME)` of a variable the container has (fleet sets NODE_NAME
/// and DISKTIER_TERMINATION_LOG) is its value, anything else stays.
fn kubelet_expand(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            match b[i + 1] {
                b'$' => {
                    out.push('$');
                    i += 2;
                    continue;
                }
                b'(' => {
                    if let Some(close) = s[i + 2..].find(')') {
                        let name = &s[i + 2..i + 2 + close];
                        if name == "NODE_NAME" || name == "DISKTIER_TERMINATION_LOG" {
                            out.push_str("EXPANDED");
                        } else {
                            out.push_str(&s[i..i + 3 + close]);
                        }
                        i += 3 + close;
                        continue;
                    }
                }
                _ => {}
            }
        }
        let ch = s[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}
