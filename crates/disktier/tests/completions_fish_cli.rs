//! Fish completions three levels down, in a real fish: clap_complete's fish script stops at two
//! levels (clap-rs/clap#5975), so `disktier catalog refresh gcp --<TAB>` offered only
//! `refresh`'s options and `catalog import aws-offer --reg<TAB>` nothing (QA).

use disktier_testkit::cli::disktier;

/// The words fish offers for `line` with disktier's completions loaded.
fn complete(line: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = disktier().args(["completions", "fish"]).output().unwrap();
    assert!(out.status.success());
    std::fs::write(dir.path().join("script.fish"), &out.stdout).unwrap();
    let out = std::process::Command::new("fish")
        .current_dir(dir.path())
        .args(["--no-config", "-c"])
        .arg(format!("source ./script.fish; complete -C '{line}'"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn fish_completes_the_options_of_a_third_level_command() {
    if !disktier_testkit::require(disktier_testkit::have("fish"), "fish") {
        return;
    }
    assert_eq!(
        complete("disktier catalog import aws-offer --reg"),
        ["--region"]
    );
    let gcp = complete("disktier catalog refresh gcp --");
    for want in ["--region", "--output", "--format"] {
        assert!(gcp.iter().any(|w| w == want), "{want}: {gcp:?}");
    }
    assert_eq!(
        complete("disktier catalog refresh azure --format "),
        ["json", "prometheus", "text"]
    );
    // Once a third-level command is given, its parent's subcommands are no longer offered.
    let after = complete("disktier catalog import aws-offer ");
    assert!(!after.iter().any(|w| w == "aws-offer"), "{after:?}");
    assert_eq!(complete("disktier catalog import a"), ["aws-offer"]);
}
