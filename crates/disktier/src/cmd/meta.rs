//! `disktier completions SHELL` and `disktier man`: generated from the CLI definition, so they
//! never drift from it.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use anyhow::Context;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to print completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Directory to write disktier.1 and one page per subcommand (disktier-bench.1, ...) into;
    /// without it the main page goes to stdout.
    #[arg(long, short)]
    pub out_dir: Option<PathBuf>,
}

/// `cmd` is the whole command tree (`cli::command()`), passed in so that commands do not
/// depend on the tree that lists them.
/// `cmd` should be the tree without its hidden subcommands (`cli::completion_command`):
/// clap_complete offers hidden subcommands, which help and man leave out.
pub fn completions(
    ctx: &Ctx,
    args: CompletionsArgs,
    mut cmd: clap::Command,
) -> anyhow::Result<Outcome> {
    let buf = script(args.shell, &mut cmd);
    if ctx.json() {
        // `--format json`, as every command takes it: the script as a string (QA: it printed
        // the bare script, which no JSON reader takes).
        print_json(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "shell": args.shell.to_string(),
            "script": String::from_utf8_lossy(&buf),
        }))?;
        return Ok(Outcome::Pass);
    }
    crate::out::write_bytes(&buf)?;
    Ok(Outcome::Pass)
}

/// The completion script for `shell` of `cmd` (the tree without its hidden subcommands).
pub(crate) fn script(shell: clap_complete::Shell, cmd: &mut clap::Command) -> Vec<u8> {
    // Into memory, then out: clap_complete panics when its writer fails (QA: `> /dev/full`).
    let mut buf = Vec::new();
    clap_complete::generate(shell, cmd, "disktier", &mut buf);
    if shell == clap_complete::Shell::Fish {
        let (rules, narrow) = super::fish_deep::rules(cmd);
        let mut text = String::from_utf8_lossy(&fish_root_values(buf)).into_owned();
        for (from, to) in narrow {
            text = text.replace(&from, &to);
        }
        text.push_str(&rules);
        buf = text.into_bytes();
    }
    buf
}

/// The line of clap_complete's fish script that gives up on the command line when fish's
/// `argparse` fails, and what it becomes.
const FISH_GIVE_UP: (&str, &str) = (
    "    argparse -s (__fish_disktier_global_optspecs) -- $cmd 2>/dev/null\n    or return\n",
    "    argparse -s (__fish_disktier_global_optspecs) -- $cmd 2>/dev/null\n    # A root option still waiting for its value (`disktier --format <TAB>`) fails argparse:\n    # there is no command yet, and the option's values are offered.\n    or return 0\n",
);

/// clap_complete's fish script, with the root options' values offered: its
/// `__fish_disktier_needs_command` returned argparse's failure when the last word was a root
/// option waiting for its value, so `disktier --format <TAB>` matched no rule and fish listed
/// file names (a left item; `bench DIR --format <TAB>` was right).
fn fish_root_values(script: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&script);
    if !text.contains(FISH_GIVE_UP.0) {
        return script;
    }
    text.replacen(FISH_GIVE_UP.0, FISH_GIVE_UP.1, 1)
        .into_bytes()
}

pub fn man(ctx: &Ctx, args: ManArgs, cmd: clap::Command) -> anyhow::Result<Outcome> {
    // `--format json`, as every command takes it (QA: the page itself was printed, and with
    // --out-dir nothing): the page as a string, or the pages written.
    match args.out_dir {
        None => {
            let (_, buf) = super::manpage::render(cmd)?;
            if ctx.json() {
                print_json(&serde_json::json!({
                    "schema_version": SCHEMA_VERSION,
                    "page": "disktier.1",
                    "content": String::from_utf8_lossy(&buf),
                }))?;
            } else {
                crate::out::write_bytes(&buf)?;
            }
        }
        // `-o -` made a directory named "-" (QA): it reads as standard output, which holds one
        // page, the one printed without -o.
        Some(dir) if dir.as_os_str() == "-" => anyhow::bail!(
            "-o - would write the man pages into a directory named '-': pass a directory (-o ./man), or leave -o out to print the main page on standard output (`./-` for a directory of that name)"
        ),
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let mut pages = Vec::new();
            page_names(&cmd, "disktier", &mut pages);
            super::manpage::write_all(cmd, &dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            if ctx.json() {
                print_json(&serde_json::json!({
                    "schema_version": SCHEMA_VERSION,
                    "out_dir": crate::text::path_json(&dir),
                    "pages": pages,
                }))?;
            } else {
                ctx.note(format!("man pages written to {}", dir.display()));
            }
        }
    }
    Ok(Outcome::Pass)
}

/// The files `manpage::write_all` writes for `cmd` (named `name`): `name.1`, then one per
/// subcommand that is neither hidden nor `help`, `name-sub.1`, at every depth.
fn page_names(cmd: &clap::Command, name: &str, out: &mut Vec<String>) {
    out.push(format!("{name}.1"));
    for s in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        page_names(s, &format!("{name}-{}", s.get_name()), out);
    }
}
