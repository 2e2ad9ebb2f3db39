//! The command-line surface: global options and one subcommand per job. Each subcommand's own
//! options live beside its code in `cmd/<name>.rs`.

use crate::cmd::{self, Ctx, Outcome};
use crate::exposition::TextfileDir;
use anyhow::bail;
use clap::{Parser, Subcommand};

pub use crate::global::{Format, Global};

#[derive(Debug, Parser)]
#[command(
    name = "disktier",
    version,
    about = "Which disk should this data live on, is it fast enough, what does it cost, and can it be set up safely?",
    long_about = None,
    after_help = "Exit status: 0 ok, 1 a verdict failed (e.g. check etcd above threshold), 2 usage or runtime error."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Assess the disks behind paths: the quick suite, verdicts, store and HTML report (the main job).
    #[command(
        after_help = "Exit status: 0 every target that ran the etcd profile can host etcd, 1 a target cannot (its fdatasync p99 is above the threshold), 2 usage or runtime error (the etcd profile could not run on a target, or a signal interrupted the run)."
    )]
    Assess(cmd::assess::Args),
    /// Run one benchmark job (a built-in profile or fio-style options) on a file, directory or device.
    #[command(
        after_help = "Exit status: 0 the job ran (bench gives figures, no verdict), 2 usage or runtime error (or a signal interrupted the run)."
    )]
    Bench(cmd::bench::Args),
    /// Give a verdict: can this disk host etcd?
    Check(cmd::check::Args),
    /// Import a result produced by another tool (fio's JSON or text report, OpenShift's etcd-perf).
    #[command(
        after_help = "Exit status: 0 imported (the etcd verdict passed, or there is none), 1 imported and the etcd verdict failed (the run is saved all the same), 2 not imported. A file imported again with the same options is not stored twice: a note names the run that holds it."
    )]
    Import(cmd::import::Args),
    /// Show, check or import the price/performance catalog.
    #[command(
        after_help = "Exit status: 0 ok, 1 catalog check found problems, 2 usage or runtime error."
    )]
    Catalog(cmd::catalog::Args),
    /// Price one volume type or instance for a month.
    #[command(after_help = cmd::EXIT_OK)]
    Price(cmd::price::Args),
    /// List the storage options that meet requirements, cheapest first.
    #[command(after_help = cmd::EXIT_OK)]
    Plan(cmd::plan::Args),
    /// List the node's block devices, classified, with eligibility for setup.
    #[command(after_help = cmd::EXIT_OK)]
    Disks(cmd::disks::Args),
    /// Make a filesystem on the node's local disks and mount it, safely and idempotently.
    Setup(cmd::setup::Args),
    /// Render the same setup as manifests for a platform (openshift, gke, eks, systemd, ...).
    Render(cmd::render::Args),
    /// List stored runs.
    History(cmd::history::Args),
    /// Show one stored run.
    Show(cmd::show::Args),
    /// Compare stored runs side by side.
    Compare(cmd::compare::Args),
    /// Write a self-contained HTML report of stored runs.
    Report(cmd::report::Args),
    /// Runs waiting in the spool (the store was unreachable): list them, or save them now.
    #[command(
        after_help = "Exit status: 0 ok (the spool listed, or every run meant for this store saved), 2 usage or runtime error (a run could not be saved: it stays in the spool)."
    )]
    Store(cmd::store::Args),
    /// Measure what a bulk writer does to etcd's fsyncs, and which mitigation helps.
    Interfere(cmd::interfere::Args),
    /// The bulk writer `interfere` runs next to the probe, as its own process (internal).
    #[command(hide = true, name = "__aggressor")]
    Aggressor(cmd::interfere::AggressorArgs),
    /// Measure every node of a Kubernetes cluster (one Job per node) and compare them.
    #[command(
        after_help = "Exit status: 0 ok, 1 fleet run: a node's verdict failed, 2 usage or runtime error."
    )]
    Fleet(cmd::fleet::Args),
    /// Record, import and describe block I/O traces.
    #[command(after_help = cmd::EXIT_OK)]
    Trace(cmd::trace::Args),
    /// Predict cache hit ratios from a trace for cache sizes and policies.
    #[command(after_help = cmd::EXIT_OK)]
    Simulate(cmd::simulate::Args),
    /// Print shell completions.
    #[command(after_help = cmd::EXIT_OK)]
    Completions(cmd::meta::CompletionsArgs),
    /// Write the man pages.
    #[command(after_help = cmd::EXIT_OK)]
    Man(cmd::meta::ManArgs),
}

/// Parses the command line, or exits as clap does (help, version, a usage error with exit 2). A
/// usage error quotes the offending value, and clap prints it as given to a terminal: when an
/// argument holds control characters (an escape sequence) or bidi overrides, the error is
/// printed unstyled with them escaped (`\u{1b}`, `\u{202e}`); when one is longer than
/// [`crate::text::LONGEST_WORD`], it is quoted cut short, as runtime errors quote it. Under
/// `--format json` a usage error is one `error: ...` line, as every error is there.
pub fn parse() -> Cli {
    use std::io::Write;
    command()
        .try_get_matches()
        .and_then(|mut m| <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut m))
        .unwrap_or_else(|e| {
            let e = crate::numbers::with_tip(usage_without_env(e));
            let utf8 = not_utf8(&e);
            if e.use_stderr() {
                // A usage error is an error too: fleet's Jobs read the node command's outcome
                // from this line (QA: an option the node's binary does not know left it empty).
                let msg = utf8.clone().unwrap_or_else(|| usage_termination(&e));
                crate::termination::write_from_env(Err(&msg));
            }
            if e.use_stderr() && json_asked() {
                // As every error under --format json: one line on stderr, nothing on stdout
                // (QA: clap's usage, tips and "For more information" spread over lines).
                let msg = utf8.unwrap_or_else(|| usage_line(&e));
                errln!("error: {msg}");
                std::process::exit(e.exit_code());
            }
            if let Some(msg) = utf8 {
                errln!("error: {msg}\n\nFor more information, try '--help'.");
                std::process::exit(2);
            }
            // Also a bidi override or a C1 control (U+0080..U+009F), which clap's plain
            // rendering keeps: they are escaped below; and an argument too long to quote whole
            // (QA: `price gp3 --size <100 kB>` printed 200 kB), cut below.
            let hostile = std::env::args_os().any(|a| {
                a.len() > crate::text::LONGEST_WORD
                    || a.to_string_lossy()
                        .chars()
                        .any(|c| disktier_units::unsafe_on_terminal(c) && c != '\n')
            });
            if hostile && e.use_stderr() {
                let text = crate::text::printable(&e.render().to_string(), true);
                let text = crate::text::shorten_words(&text);
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
                std::process::exit(e.exit_code());
            }
            // `--help` and `--version` go to stdout: one that cannot take them is an error, as
            // for every command's output (`out`); a reader that went away is not.
            if let Err(io) = e.print().and_then(|()| std::io::stdout().flush()) {
                if !e.use_stderr() && io.kind() != std::io::ErrorKind::BrokenPipe {
                    errln!(
                        "error: cannot write the output: {}",
                        crate::out::os_message(&io)
                    );
                    std::process::exit(2);
                }
            }
            std::process::exit(e.exit_code())
        })
}

/// What a usage error leaves in the termination log ([`crate::termination`]): clap's first line
/// without its `error: ` (the log's line adds it), then its tips; with control characters and
/// bidi overrides escaped and a huge argument cut, as on stderr.
fn usage_termination(e: &clap::Error) -> String {
    usage_one_line(e, false)
}

/// clap's first line of `e` without its `error: `, with (`values`) the values the option takes
/// when clap lists them (`[possible values: ...]`), then its tips in parentheses.
fn usage_one_line(e: &clap::Error, values: bool) -> String {
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // clap prints the command's help, whose first line is its description.
        return "a subcommand or argument is missing: run the command with --help for them".into();
    }
    let text = crate::text::shorten_words(&crate::text::printable(&e.render().to_string(), true));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("usage error");
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if let (true, Some(clap::error::ContextValue::Strings(valid))) =
        (values, e.get(clap::error::ContextKind::ValidValue))
    {
        if !valid.is_empty() {
            let valid = crate::text::printable(&valid.join(", "), false);
            msg.push_str(&format!(" [possible values: {valid}]"));
        }
    }
    for tip in lines.filter(|l| l.starts_with("tip:")) {
        msg.push_str(" (");
        msg.push_str(tip);
        msg.push(')');
    }
    msg
}

/// Whether the command line asks for `--format json` (or `--format=json`), read without clap
/// (which refused it): the last `--format` given before a `--` counts, wherever it stands
/// relative to the argument clap refused. There is no environment variable for the format.
fn json_asked() -> bool {
    json_in(std::env::args_os().skip(1))
}

fn json_in(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    let mut json = false;
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        if a == "--" {
            // What follows is a node command's (`fleet run -- ...`), not disktier's.
            break;
        }
        if a == "--format" {
            json = args.next().is_some_and(|v| v == "json");
        } else if let Some(v) = a.to_str().and_then(|a| a.strip_prefix("--format=")) {
            json = v == "json";
        }
    }
    json
}

/// A usage error as the one line an error is under `--format json`: clap's first line, the
/// values the option takes when clap lists them, and its tips.
fn usage_line(e: &clap::Error) -> String {
    usage_one_line(e, true)
}

/// For clap's "invalid UTF-8 was detected in one or more arguments", which names neither the
/// argument nor the fix (QA: `history --group $'\xff'`, `plan --region $'\xff'`): the arguments
/// that are not UTF-8, with their place and their bytes, and the fix. (Options that take a path
/// take any bytes; `--db` has its own message, [`crate::global`].)
fn not_utf8(e: &clap::Error) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::InvalidUtf8
        || e.to_string().contains(crate::global::NOT_UTF8)
    {
        return None;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let bad: Vec<String> = args
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, a)| a.to_str().is_none())
        .map(|(i, a)| {
            let after = args[i - 1].to_string_lossy();
            let after = if i > 1 && after.starts_with('-') {
                format!(", after {}", crate::text::printable(&after, false))
            } else {
                String::new()
            };
            format!("{i} ('{}'{after})", escaped_bytes(a))
        })
        .collect();
    let (which, reads) = match bad.as_slice() {
        [] => return None,
        [one] => (format!("argument {one} is"), "this value"),
        many => (format!("arguments {} are", many.join(", ")), "one of them"),
    };
    Some(crate::text::shorten_words(&format!(
        "{which} not UTF-8, and disktier reads {reads} as text (a name, a region, a run id, a node command): give it in UTF-8 (options that take a path take any bytes)"
    )))
}

/// `a` as text: its UTF-8 runs as they are (control characters escaped), every other byte as
/// `\xNN`.
fn escaped_bytes(a: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for chunk in a.as_encoded_bytes().utf8_chunks() {
        out.push_str(&crate::text::printable(chunk.valid(), false));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// `e` made again by a tree whose options read no environment variable. clap counts an option
/// set through its variable as given, and the usage line of an error lists the options given:
/// with DISKTIER_DB set, `disktier show` said `Usage: disktier show --db <DB> <RUN>`, as if
/// `--db` were needed to show a run (QA). The variables change what is parsed, never whether a
/// usage error is one, so the error is the same one, with the usage line of the command.
fn usage_without_env(e: clap::Error) -> clap::Error {
    let set = |v: &str| std::env::var_os(v).is_some();
    if !e.use_stderr() || !(set("DISKTIER_DB") || set("DISKTIER_CATALOG")) {
        return e;
    }
    let again = command()
        .mut_arg("db", |a| a.env(None))
        .mut_arg("catalog", |a| a.env(None))
        .try_get_matches();
    match again {
        Err(plain) if plain.kind() == e.kind() => plain,
        _ => e,
    }
}

/// The clap command tree, for parsing, man pages (they leave hidden subcommands out) and
/// completions. `--textfile-dir` is hidden from the help of the commands that refuse it
/// ([`dispatch`]); they still parse it, so that the refusal says which commands take it.
pub fn command() -> clap::Command {
    let c = <Cli as clap::CommandFactory>::command();
    let textfile = textfile_args(&c);
    // trace record runs the native engine only (it records the engine's own I/O): its shared
    // --engine option still parses, so that fio is refused with the reason, but is not offered
    // in its help (QA).
    let c = c.mut_subcommand("trace", |t| {
        t.mut_subcommand("record", |r| r.mut_arg("engine", |a| a.hide(true)))
    });
    with_textfile_dir(c, &textfile, true, &mut Vec::new())
}

/// The ids of the options only the metrics commands take.
const TEXTFILE_IDS: [&str; 2] = ["textfile_dir", "textfile_name"];

/// The root's global `--textfile-dir` and `--textfile-name`.
fn textfile_args(c: &clap::Command) -> Vec<clap::Arg> {
    TEXTFILE_IDS
        .iter()
        .map(|id| {
            c.get_arguments()
                .find(|a| a.get_id() == *id)
                .cloned()
                .expect("the global textfile options")
        })
        .collect()
}

/// The commands (by their path in the tree, with everything under them) that take
/// `--textfile-dir`: those [`exports_metrics`] names.
const METRICS_COMMANDS: &[&[&str]] = &[&["assess"], &["bench"], &["check"], &["fleet", "run"]];

/// Gives every subcommand of `c` (at `path`) under [`METRICS_COMMANDS`] its own copy of
/// `--textfile-dir`, and with `hidden_elsewhere` every other one a hidden copy. clap copies a
/// global option into each subcommand that has no option of that id yet, so a copy placed in
/// every subcommand first is the one that subcommand shows; every level gets one, so that a
/// parent's hidden copy is never the one handed down to a child that takes the option (`fleet`
/// to `fleet run`).
fn with_textfile_dir(
    mut c: clap::Command,
    textfile: &[clap::Arg],
    hidden_elsewhere: bool,
    path: &mut Vec<String>,
) -> clap::Command {
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        path.push(name.clone());
        let takes = METRICS_COMMANDS
            .iter()
            .any(|m| m.len() <= path.len() && m.iter().zip(path.iter()).all(|(a, b)| a == b));
        c = c.mut_subcommand(&name, |s| {
            let s = match (takes, hidden_elsewhere) {
                (true, _) => s.args(textfile.iter().cloned()),
                (false, true) => s.args(textfile.iter().map(|a| a.clone().hide(true))),
                (false, false) => s,
            };
            with_textfile_dir(s, textfile, hidden_elsewhere, path)
        });
        path.pop();
    }
    c
}

/// The command tree for shell completions: [`command`] without its hidden subcommands (the
/// internal `__aggressor`), which clap_complete would offer (QA), and without `--textfile-dir`
/// where it is refused: clap_complete offers hidden options too (QA: `render <TAB>` offered
/// it), so there the option is local, not global, and only the commands that take it have it.
/// clap cannot remove a subcommand, so the root is built again from the tree's parts.
pub fn completion_command() -> clap::Command {
    let base = <Cli as clap::CommandFactory>::command();
    let textfile: Vec<clap::Arg> = textfile_args(&base)
        .into_iter()
        .map(|a| a.global(false))
        .collect();
    let base = TEXTFILE_IDS
        .iter()
        .fold(base, |b, id| b.mut_arg(*id, |a| a.global(false)));
    let full = with_textfile_dir(base, &textfile, false, &mut Vec::new());
    let mut c = clap::Command::new("disktier")
        .version(env!("CARGO_PKG_VERSION"))
        .about(full.get_about().cloned().unwrap_or_default())
        .subcommand_required(true);
    for a in full.get_arguments() {
        c = c.arg(a.clone());
    }
    let c = c.subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    crate::completion_words::offer(c)
}

/// Whether the command's runs have a Prometheus exposition (`--format prometheus`,
/// `--textfile-dir`).
fn exports_metrics(c: &Command) -> bool {
    matches!(
        c,
        Command::Assess(_) | Command::Bench(_) | Command::Check(_)
    ) || matches!(c, Command::Fleet(f) if matches!(f.what, cmd::fleet::What::Run(_)))
}

/// Runs the parsed command line: checks the global options against the command, then calls
/// the command's `run`.
pub fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    let metrics = exports_metrics(&cli.command);
    if !metrics && cli.global.format == Format::Prometheus {
        bail!(
            "--format prometheus is for check, bench, assess and fleet run: use --format json here"
        );
    }
    if !metrics && cli.global.textfile_dir.is_some() {
        bail!("--textfile-dir is for check, bench, assess and fleet run: drop it here");
    }
    if !metrics && cli.global.textfile_name.is_some() {
        bail!("--textfile-name is for check, bench, assess and fleet run: drop it here");
    }
    if cli.global.textfile_dir.is_none() && cli.global.textfile_name.is_some() {
        bail!("--textfile-name names the file in --textfile-dir: give --textfile-dir DIR too");
    }
    // Checked before the command measures anything: a run of minutes must not end in an
    // unwritable directory.
    let textfile = cli
        .global
        .textfile_dir
        .as_deref()
        .map(TextfileDir::check)
        .transpose()?
        .map(|d| d.named(cli.global.textfile_name.clone()));
    if !cli.global.quiet {
        disktier_store::migrate::tell_upgrades(|msg| crate::out::note(format_args!("note: {msg}")));
    }
    let ctx = Ctx {
        global: cli.global,
        textfile,
    };
    match cli.command {
        Command::Assess(a) => cmd::assess::run(&ctx, a),
        Command::Bench(a) => cmd::bench::run(&ctx, a),
        Command::Check(a) => cmd::check::run(&ctx, a),
        Command::Import(a) => cmd::import::run(&ctx, a),
        Command::Catalog(a) => cmd::catalog::run(&ctx, a),
        Command::Price(a) => cmd::price::run(&ctx, a),
        Command::Plan(a) => cmd::plan::run(&ctx, a),
        Command::Disks(a) => cmd::disks::run(&ctx, a),
        Command::Setup(a) => cmd::setup::run(&ctx, a),
        Command::Render(a) => cmd::render::run(&ctx, a),
        Command::History(a) => cmd::history::run(&ctx, a),
        Command::Show(a) => cmd::show::run(&ctx, a),
        Command::Compare(a) => cmd::compare::run(&ctx, a),
        Command::Report(a) => cmd::report::run(&ctx, a),
        Command::Store(a) => cmd::store::run(&ctx, a),
        Command::Interfere(a) => cmd::interfere::run(&ctx, a),
        Command::Aggressor(a) => cmd::interfere::aggressor(&ctx, a),
        Command::Fleet(a) => cmd::fleet::run(&ctx, a),
        Command::Trace(a) => cmd::trace::run(&ctx, a),
        Command::Simulate(a) => cmd::simulate::run(&ctx, a),
        Command::Completions(a) => cmd::meta::completions(&ctx, a, completion_command()),
        Command::Man(a) => cmd::meta::man(&ctx, a, command()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_consistent() {
        super::command().debug_assert();
        super::completion_command().debug_assert();
    }

    /// `--textfile-dir` shows in the help of the commands that take it, at any depth, and
    /// nowhere else (QA: `plan --help` offered it, and `plan` refuses it).
    #[test]
    fn textfile_dir_shows_only_where_it_is_taken() {
        fn help(path: &[&str]) -> String {
            let mut c = super::command();
            let mut argv = vec!["disktier"];
            argv.extend_from_slice(path);
            argv.push("--help");
            let e = c.try_get_matches_from_mut(argv).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{path:?}");
            e.to_string()
        }
        for taken in [
            &["bench"][..],
            &["check", "etcd"],
            &["assess"],
            &["fleet", "run"],
        ] {
            assert!(help(taken).contains("--textfile-dir"), "{taken:?}");
            assert!(help(taken).contains("--textfile-name"), "{taken:?}");
        }
        for refused in [
            &["plan"][..],
            &["fleet"],
            &["fleet", "clean"],
            &["render", "systemd"],
            &["store", "flush"],
            &["history"],
        ] {
            assert!(!help(refused).contains("--textfile-dir"), "{refused:?}");
            assert!(!help(refused).contains("--textfile-name"), "{refused:?}");
        }
        // Still parsed where hidden, so that `dispatch` can say which commands take it.
        let m = super::command().try_get_matches_from([
            "disktier",
            "plan",
            "--capacity",
            "1TiB",
            "--textfile-dir",
            "d",
        ]);
        assert!(m.is_ok());
    }

    #[test]
    fn json_is_read_from_the_last_format_before_a_double_dash() {
        let json = |args: &[&str]| super::json_in(args.iter().map(std::ffi::OsString::from));
        assert!(json(&["history", "--bogus", "--format", "json"]));
        assert!(json(&["--format=json", "history", "--bogus"]));
        assert!(!json(&["--format", "json", "history", "--format", "text"]));
        assert!(!json(&["history", "--format"]));
        assert!(!json(&["history", "--bogus"]));
        assert!(!json(&["fleet", "run", "--", "check", "--format", "json"]));
    }

    #[test]
    fn completions_leave_hidden_subcommands_out() {
        let names = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect()
        };
        let full = names(&super::command());
        let shown = names(&super::completion_command());
        assert!(full.iter().any(|n| n == "__aggressor"));
        assert!(!shown.iter().any(|n| n == "__aggressor"));
        assert_eq!(shown.len() + 1, full.len(), "{shown:?}");
    }
}

#[cfg(test)]
#[path = "cli_walk_tests.rs"]
mod walk_tests;
