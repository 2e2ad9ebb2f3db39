//! Fish completions for the commands three levels down (`catalog import aws-offer`, `catalog
//! refresh gcp|azure`): clap_complete's fish generator stops at two levels (its "less than 3
//! levels" assumption, clap-rs/clap#5975), so `disktier catalog refresh gcp --<TAB>` offered only
//! `refresh`'s own options (no `--region`, `--out`) and `catalog import aws-offer --<TAB>`
//! nothing, and the second level kept offering its subcommands after one was given (QA).

/// The rules to add to clap_complete's fish script of `cmd`, and the second-level conditions
/// to narrow, as (clap_complete's condition, the condition once no subcommand of it is given).
pub fn rules(cmd: &clap::Command) -> (String, Vec<(String, String)>) {
    let mut c = cmd.clone();
    c.build();
    let mut out = String::new();
    let mut narrow = Vec::new();
    for first in shown(&c) {
        for second in shown(first) {
            let leaves: Vec<&clap::Command> = shown(second).collect();
            if leaves.is_empty() {
                continue;
            }
            let cond = format!(
                "__fish_disktier_using_subcommand {}; and __fish_seen_subcommand_from {}",
                first.get_name(),
                second.get_name()
            );
            let names: Vec<&str> = second.get_subcommands().map(|s| s.get_name()).collect();
            narrow.push((
                format!("-n \"{cond}\" "),
                format!(
                    "-n \"{cond}; and not __fish_seen_subcommand_from {}\" ",
                    names.join(" ")
                ),
            ));
            for leaf in leaves {
                let leaf_cond = format!(
                    "{cond}; and __fish_seen_subcommand_from {}",
                    leaf.get_name()
                );
                for a in leaf.get_arguments().filter(|a| !a.is_hide_set()) {
                    if let Some(line) = rule(&leaf_cond, a) {
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
            }
        }
    }
    (out, narrow)
}

/// The subcommands shown in help (not hidden, not clap's `help`).
fn shown(c: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    c.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// One `complete` line for the option `a`, as clap_complete writes them; `None` for a
/// positional argument (fish completes files for those by default).
fn rule(cond: &str, a: &clap::Arg) -> Option<String> {
    if a.is_positional() {
        return None;
    }
    let mut line = format!("complete -c disktier -n \"{cond}\"");
    if let Some(s) = a.get_short() {
        line.push_str(&format!(" -s {s}"));
    }
    if let Some(l) = a.get_long() {
        line.push_str(&format!(" -l {l}"));
    }
    if let Some(help) = a.get_help() {
        let first = help.to_string();
        let first = first.lines().next().unwrap_or_default();
        line.push_str(&format!(" -d '{}'", quoted(first)));
    }
    if a.get_action().takes_values() {
        line.push_str(" -r");
        let values: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() {
            line.push_str(&format!(" -f -a \"{}\"", values.join(" ")));
        }
    }
    Some(line)
}

/// `s` inside fish's single quotes, where only `\\` and `\'` are escapes.
fn quoted(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}
