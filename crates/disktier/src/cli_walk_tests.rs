//! The command line as a whole, by walking the clap definition (so that a new subcommand or
//! option is covered without editing a list): every subcommand that runs has a line in
//! tests/fixtures/cli/format-json-runs.txt, which tests/format_json_cli.rs runs with
//! `--format json`, and its line parses with `--format json`; the man pages and the bash, zsh and
//! fish completions name every subcommand and every option.

use crate::cli::{command, completion_command};

/// The table tests/format_json_cli.rs runs.
const RUNS: &str = include_str!("../tests/fixtures/cli/format-json-runs.txt");

/// The table's lines as (subcommand path, arguments).
fn runs() -> Vec<(Vec<String>, String)> {
    RUNS.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (path, args) = l.split_once('|').unwrap_or_else(|| panic!("no '|': {l}"));
            let path = path.split_whitespace().map(str::to_string).collect();
            (path, args.trim().to_string())
        })
        .collect()
}

/// Every subcommand path of `c` that is shown (not hidden, not clap's `help`), at every depth,
/// with whether it is a leaf (a command that runs rather than one that groups others).
fn paths(c: &clap::Command, prefix: &[String], out: &mut Vec<(Vec<String>, bool)>) {
    for s in c
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let mut p = prefix.to_vec();
        p.push(s.get_name().to_string());
        let leaf = !s
            .get_subcommands()
            .any(|s| !s.is_hide_set() && s.get_name() != "help");
        out.push((p.clone(), leaf));
        paths(s, &p, out);
    }
}

fn all_paths() -> Vec<(Vec<String>, bool)> {
    let mut c = command();
    c.build();
    let mut out = Vec::new();
    paths(&c, &[], &mut out);
    assert!(out.len() > 30, "{out:?}");
    out
}

/// The subcommand at `path` of a built tree.
fn at<'a>(c: &'a clap::Command, path: &[String]) -> &'a clap::Command {
    path.iter().fold(c, |c, p| {
        c.find_subcommand(p)
            .unwrap_or_else(|| panic!("no subcommand {p} in {path:?}"))
    })
}

/// The long options shown in the help of the subcommand at `path` (`--help` included).
fn long_options(c: &clap::Command, path: &[String]) -> Vec<String> {
    at(c, path)
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

#[test]
fn every_command_that_runs_has_a_format_json_line_that_parses() {
    let table = runs();
    let leaves: Vec<Vec<String>> = all_paths()
        .into_iter()
        .filter(|(_, leaf)| *leaf)
        .map(|(p, _)| p)
        .collect();
    for leaf in &leaves {
        let n = table.iter().filter(|(p, _)| p == leaf).count();
        assert_eq!(
            n, 1,
            "the command {:?} has {n} lines in tests/fixtures/cli/format-json-runs.txt: give it one, which tests/format_json_cli.rs runs with --format json",
            leaf
        );
    }
    for (path, args) in &table {
        assert!(
            leaves.contains(path),
            "format-json-runs.txt names `{}`, which is not a command that runs",
            path.join(" ")
        );
        let args = args.strip_prefix("parse:").unwrap_or(args);
        // --format json before the command and after it: it is global.
        for before in [true, false] {
            let mut argv = vec!["disktier".to_string()];
            if before {
                argv.extend(["--format".into(), "json".into()]);
            }
            argv.extend(path.iter().cloned());
            if !before {
                // Right after the command: `fleet run`'s words after `--` are its node command's.
                argv.extend(["--format".into(), "json".into()]);
            }
            argv.extend(args.split_whitespace().map(|w| {
                w.replace("{FX}", "/fx")
                    .replace("{CS}", "/cs")
                    .replace("{TMP}", "/tmp/t")
                    .replace("{RUN1}", "20260101-000000-aaaaaa")
                    .replace("{RUN2}", "20260101-000000-bbbbbb")
            }));
            let m = command()
                .try_get_matches_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(
                m.get_one::<crate::global::Format>("format").copied(),
                Some(crate::global::Format::Json),
                "{argv:?}"
            );
        }
    }
}

#[test]
fn man_pages_name_every_subcommand_and_option() {
    let dir = tempfile::tempdir().unwrap();
    crate::cmd::manpage::write_all(command(), dir.path()).unwrap();
    let mut c = command();
    c.build();
    let page = |path: &[String]| {
        let name = format!("disktier-{}.1", path.join("-"));
        std::fs::read_to_string(dir.path().join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let mut root = Vec::new();
    paths(&c, &[], &mut root);
    for (path, _) in root {
        let text = page(&path);
        for long in long_options(&c, &path) {
            let roff = format!("\\-\\-{}", long.replace('-', "\\-"));
            assert!(
                text.contains(&roff),
                "the man page of {path:?} does not name --{long}"
            );
        }
        // The parent's page lists it among its subcommands.
        let parent = if path.len() == 1 {
            std::fs::read_to_string(dir.path().join("disktier.1")).unwrap()
        } else {
            page(&path[..path.len() - 1])
        };
        let sub = path.last().unwrap().replace('-', "\\-");
        assert!(
            parent.contains(&sub),
            "the parent page does not list {path:?}"
        );
    }
}

/// A shell's completion script, as `disktier completions` prints it.
fn script(shell: clap_complete::Shell) -> String {
    String::from_utf8(crate::cmd::meta::script(shell, &mut completion_command())).unwrap()
}

/// Whether a zsh script offers `--long`: `'--long[`, `'--long=[`, after a `*` (repeatable) or a
/// `(...)` exclusion list.
fn zsh_offers(zsh: &str, dashed: &str) -> bool {
    [format!("{dashed}["), format!("{dashed}=[")]
        .iter()
        .any(|spec| {
            zsh.match_indices(spec.as_str())
                .any(|(i, _)| matches!(zsh[..i].chars().last(), Some('\'' | '*' | ')')))
        })
}

#[test]
fn completions_name_every_subcommand_and_option() {
    let (bash, zsh, fish) = (
        script(clap_complete::Shell::Bash),
        script(clap_complete::Shell::Zsh),
        script(clap_complete::Shell::Fish),
    );
    let mut c = command();
    c.build();
    for (path, _) in all_paths() {
        let name = path.last().unwrap();
        let longs = long_options(&c, &path);
        // bash: the subcommand's own case lists its options.
        let case = format!(
            "        disktier__subcmd__{})\n",
            // clap_complete writes a '-' in a name as it writes the step to a subcommand.
            path.join("__subcmd__").replace('-', "__subcmd__")
        );
        let at = bash
            .find(&case)
            .unwrap_or_else(|| panic!("bash completions have no case for {path:?}"));
        let opts = bash[at + case.len()..].lines().next().unwrap();
        assert!(opts.contains("opts=\""), "{path:?}: {opts}");
        // zsh and fish: the subcommand is offered, and each option with it.
        assert!(
            zsh.contains(&format!("'{name}:")) || zsh.contains(&format!("({name})")),
            "zsh completions do not offer {path:?}"
        );
        assert!(
            fish.contains(&format!("-a \"{name}\"")) || fish.contains(&format!("-f -a \"{name}\"")),
            "fish completions do not offer {path:?}"
        );
        let fish_lines: Vec<&str> = fish
            .lines()
            .filter(|l| {
                l.contains(&format!("__fish_disktier_using_subcommand {name}"))
                    || l.contains(&format!("__fish_seen_subcommand_from {name}"))
            })
            .collect();
        for long in longs {
            let dashed = format!("--{long}");
            assert!(
                opts.split_whitespace()
                    .any(|w| w.trim_matches('"') == dashed),
                "bash completions of {path:?} lack {dashed}: {opts}"
            );
            assert!(
                zsh_offers(&zsh, &dashed),
                "zsh completions lack {dashed} ({path:?})"
            );
            assert!(
                fish_lines
                    .iter()
                    .any(|l| l.contains(&format!(" -l {long} "))
                        || l.ends_with(&format!(" -l {long}"))),
                "fish completions of {path:?} lack {dashed}"
            );
        }
    }
}
