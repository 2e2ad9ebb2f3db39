use crate::cli::{command, completion_command};

/// The words the completion tree offers for `--name` of the subcommand at `path`.
fn offered(path: &[&str], name: &str) -> Vec<String> {
    let mut c = completion_command();
    for p in path {
        c = c.find_subcommand(p).expect("a subcommand").clone();
    }
    let arg = c
        .get_arguments()
        .find(|a| a.get_long() == Some(name) || a.get_id() == name)
        .unwrap_or_else(|| panic!("{path:?} has no {name}"));
    arg.get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect()
}

/// Every word offered for `--rw` and `--ioengine` is one the real parser takes.
#[test]
fn the_offered_engine_words_parse() {
    for path in [&["bench"][..], &["trace", "record"][..]] {
        for name in ["rw", "ioengine"] {
            let words = offered(path, name);
            assert!(words.len() >= 4, "{path:?} --{name}: {words:?}");
            for w in words {
                let mut argv: Vec<String> = ["disktier"]
                    .iter()
                    .chain(path)
                    .map(|s| s.to_string())
                    .collect();
                argv.extend([
                    format!("--{name}"),
                    w,
                    "-o".into(),
                    "x.dtt".into(),
                    "f".into(),
                ]);
                if path == ["bench"] {
                    argv.retain(|a| a != "-o" && a != "x.dtt");
                }
                command()
                    .try_get_matches_from(&argv)
                    .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            }
        }
    }
}

/// Regions are the embedded catalog's: every cloud's for plan and price, AWS's for render
/// openshift's MachineSet; price's kind is a volume type or `instance`.
#[test]
fn regions_and_price_kinds_come_from_the_catalog() {
    let plan = offered(&["plan"], "region");
    assert!(plan.iter().any(|r| r == "us-east-1"), "{plan:?}");
    assert!(plan.iter().any(|r| r == "us-central1"), "{plan:?}");
    assert_eq!(plan, offered(&["price"], "region"));
    let render = offered(&["render", "openshift"], "region");
    assert!(render.iter().any(|r| r == "us-east-1"), "{render:?}");
    assert!(!render.iter().any(|r| r == "us-central1"), "{render:?}");
    let kinds = offered(&["price"], "kind");
    for k in ["gp3", "io2", "pd-ssd", "instance"] {
        assert!(kinds.iter().any(|x| x == k), "{k}: {kinds:?}");
    }
    // Parsing keeps its own free-text parsers: a region or type from --catalog still parses.
    command()
        .try_get_matches_from([
            "disktier",
            "plan",
            "--region",
            "mars-1",
            "--capacity",
            "1TiB",
        ])
        .expect("any region text parses");
}

/// `interfere --mitigations <TAB>` listed file names (a left item of the words above): each
/// mitigation is offered, and each parses as the whole list.
#[test]
fn interfere_offers_its_mitigations() {
    let words = offered(&["interfere"], "mitigations");
    assert_eq!(
        words.len(),
        disktier_interfere::Mitigation::all().len(),
        "{words:?}"
    );
    for w in [
        "none",
        "scheduler-bfq",
        "cgroup-throttle",
        "writer-no-fsync",
    ] {
        assert!(words.iter().any(|x| x == w), "{w}: {words:?}");
    }
    for w in &words {
        disktier_interfere::Combo::parse_list(w).unwrap_or_else(|e| panic!("{w}: {e}"));
    }
    // Parsing keeps the free text: a list and a combination still parse.
    command()
        .try_get_matches_from([
            "disktier",
            "interfere",
            "--mitigations",
            "none,scheduler-bfq+ionice-idle",
            "/tmp",
        ])
        .expect("a list parses");
}
