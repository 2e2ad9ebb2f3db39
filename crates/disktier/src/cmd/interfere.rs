//! `disktier interfere`: the probe (etcd's fdatasync job) alone, then next to a bulk writer under
//! each mitigation; a table, a recommendation, the run saved to the store. Also the hidden
//! `__aggressor` subcommand: the bulk writer itself, run as a child process so that an I/O class
//! or a cgroup applies to it alone.

use super::{Ctx, Outcome};
use crate::app::interfere::{Options, Wiring};
use anyhow::Context;
use disktier_interfere::aggressor::command::UserCommand;
use disktier_interfere::aggressor::{self, AggressorKind, AggressorSpec};
use disktier_interfere::{journal, Config, WriterPolicy};
use disktier_units::clap_parsers;
use std::path::PathBuf;
use std::time::Duration;

/// The mitigations compared when none are named: the OSTree-vs-etcd issue's candidates (issue #6's
/// example).
const DEFAULT_MITIGATIONS: &str =
    "none,ionice-idle,scheduler-bfq,cgroup-weight,cgroup-throttle,writer-per-object-fsync,writer-no-fsync";

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Mitigations: none, ionice-idle, ionice-be7, scheduler-bfq, scheduler-mq-deadline, cgroup-weight, cgroup-throttle, cgroup-latency, writer-per-object-fsync, writer-no-fsync. Join mitigations of different kinds with + to apply them together in one scenario (scheduler-bfq+ionice-idle, cgroup-weight+writer-per-object-fsync).\n\
Every change (scheduler, cgroups, scratch files) is journaled in /run/disktier/interfere.journal (non-root: $XDG_RUNTIME_DIR/disktier, else ~/.local/state/disktier) before it is made and undone afterwards, also on Ctrl-C, SIGTERM, SIGHUP or SIGQUIT (a repeated signal does not skip the undo); after SIGKILL the next run, or --restore, undoes what is left.\n\n\
Exit status: 0 the probe's fdatasync p99 stayed within the threshold in every scenario, 1 it went above in at least one, 2 usage or runtime error (the writer failed in every scenario, or a signal interrupted the run; the changes are undone all the same)."
)]
pub struct Args {
    /// The directory the data lives in (e.g. /var/lib/etcd); probe and aggressor write scratch
    /// files in a subdirectory of it, removed afterwards.
    #[arg(required_unless_present = "restore")]
    pub dir: Option<PathBuf>,
    /// The bulk writer: ostree (an OS update: many objects, mostly small), bulk-seq (one large
    /// sequential file), rand-write (direct random 16 KiB writes at depth 32).
    #[arg(long, default_value = "ostree", value_parser = super::value_enum::Offered { values: &["ostree", "bulk-seq", "rand-write"], check: super::value_enum::any_text }, hide_possible_values = true)]
    pub aggressor: String,
    /// Your own workload as the aggressor instead of a built-in writer, e.g. 'tar xf
    /// /srv/update.tar' or 'dd if=/dev/zero of=big bs=1M count=4096 conv=fsync'. Split with
    /// shell quoting into arguments and run without a shell (pass "sh -c '...'" for pipes or
    /// redirections), in a scratch directory on DIR (also in $DISKTIER_AGGRESSOR_DIR), under
    /// each scenario's I/O class and cgroup. --aggressor-cap is its timeout; its exit status,
    /// time and written bytes are in the result.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["aggressor", "aggressor_size"])]
    pub aggressor_cmd: Option<String>,
    /// Comma-separated mitigations to compare, each in its own scenario; `a+b` applies a and b
    /// together in one scenario [default: none, ionice-idle, scheduler-bfq, cgroup-weight,
    /// cgroup-throttle, writer-per-object-fsync, writer-no-fsync].
    // The default is spelt out above with spaces: clap's own "[default: a,b,...]" is one word
    // too long for a man page line (troff: "cannot adjust line").
    #[arg(long, default_value = DEFAULT_MITIGATIONS, hide_default_value = true)]
    pub mitigations: String,
    /// How long the probe runs in each scenario.
    #[arg(long, default_value = "60s", value_parser = clap_parsers::duration)]
    pub duration: Duration,
    /// Bytes the aggressor writes [default: ostree 4GiB, bulk-seq 8GiB, rand-write 2GiB].
    #[arg(long, value_parser = clap_parsers::size)]
    pub aggressor_size: Option<u64>,
    /// The etcd limit for the fdatasync p99 (etcd's docs: 10 ms).
    #[arg(long, default_value = "10ms", value_parser = threshold)]
    pub threshold: Duration,
    /// cgroup-throttle: the aggressor's write bandwidth limit.
    #[arg(long, default_value = "20MiB/s", value_parser = throttle_bps)]
    pub throttle_bps: u64,
    /// cgroup-throttle: the aggressor's write IOPS limit.
    #[arg(long, default_value = "200", value_parser = throttle_iops)]
    pub throttle_iops: u64,
    /// Stop the aggressor this long after it started if it has not finished (marked capped)
    /// [default: ten times --duration, at least 30s].
    #[arg(long, value_parser = aggressor_cap)]
    pub aggressor_cap: Option<Duration>,
    /// Undo what a killed run left (scheduler, cgroups, scratch files) and exit.
    // It undoes the journal, whatever the directory or options: given with them it would
    // ignore them (QA: `interfere --restore DIR --mitigations bogus` exited 0), so they are
    // refused (clap does not count a default as given).
    #[arg(long, conflicts_with_all = ["dir", "aggressor", "aggressor_cmd", "mitigations", "duration", "aggressor_size", "threshold", "throttle_bps", "throttle_iops", "aggressor_cap"])]
    pub restore: bool,
    /// Run the whole comparison N times (each saved as its own run, in one group) and say
    /// whether the same mitigation wins every time, with each scenario's median p99 and range.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "restore", value_parser = clap::value_parser!(u64).range(1..=super::repeat::MAX_REPEAT))]
    pub repeat: u64,
}

/// `--threshold`: a duration above zero (every fdatasync takes longer than 0 ms, so every
/// scenario would fail).
fn threshold(s: &str) -> Result<Duration, String> {
    let d = clap_parsers::duration(s)?;
    if d.is_zero() {
        return Err("a p99 limit of 0 fails every scenario (no fdatasync takes 0 ms): give etcd's 10ms or another limit above zero".into());
    }
    Ok(d)
}

/// `--aggressor-cap`: a duration above zero (a cap of 0 stops the aggressor before it writes).
fn aggressor_cap(s: &str) -> Result<Duration, String> {
    let d = clap_parsers::duration(s)?;
    if d.is_zero() {
        return Err("a cap of 0 stops the aggressor before it writes anything: give a time such as 10m, or leave it out for ten times --duration".into());
    }
    Ok(d)
}

/// Why a throttle limit of 0 is refused: it would not throttle at all.
const ZERO_THROTTLE: &str = "0 is no limit: cgroup v1 deletes a blkio throttle rule written as 0 (it reads back empty), so nothing would be throttled; give a limit above zero";

/// Why a throttle limit the kernel reads as "max" is refused: the limit files hold bytes/s as a
/// u64 and I/Os per second as an unsigned int, and their largest value means no limit
/// (`blk-throttle.c`: `U64_MAX`/`UINT_MAX`, what `io.max` prints as "max"), so the setting
/// would read back as no rule and the run would fail after its baseline (QA).
fn unlimited_throttle(max: u64, example: &str) -> String {
    format!("{max} or more is no limit to the kernel (its \"max\"), so nothing would be throttled; give a real limit, e.g. {example}")
}

/// `--throttle-bps`: a rate above zero and below the kernel's "max".
fn throttle_bps(s: &str) -> Result<u64, String> {
    match clap_parsers::rate(s)? {
        0 => Err(format!("{ZERO_THROTTLE}, e.g. 20MiB/s")),
        u64::MAX => Err(unlimited_throttle(u64::MAX, "20MiB/s")),
        r => Ok(r),
    }
}

/// `--throttle-iops`: a whole number above zero and below the kernel's "max" (`UINT_MAX`).
fn throttle_iops(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err(format!("{ZERO_THROTTLE}, e.g. 200")),
        Ok(n) if n >= u64::from(u32::MAX) => Err(unlimited_throttle(u32::MAX.into(), "200")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{s:?} is not a whole number of I/Os per second, e.g. 200"
        )),
    }
}

/// The hidden `__aggressor` subcommand's options (set by the parent, not by users).
#[derive(Debug, clap::Args)]
pub struct AggressorArgs {
    #[arg(long)]
    pub kind: String,
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub size: u64,
    #[arg(long)]
    pub policy: String,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// `command`: the program (an absolute path, checked by the parent).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// `command`: the line the user typed, for messages.
    #[arg(long)]
    pub line: Option<String>,
    /// `command`: the program's arguments.
    #[arg(last = true)]
    pub args: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let run_dir = journal::default_dir();
    if args.restore {
        return restore(ctx, &run_dir);
    }
    let repeat = args.repeat;
    let cfg = options(args, run_dir).into_config(|| wiring(ctx))?;
    if repeat > 1 {
        return run_repeated(ctx, &cfg, repeat);
    }
    let once = crate::app::interfere::once(&ctx.store(), &cfg, &super::progress::clear, &|| {
        super::progress::restoring_signal().is_some()
    })?;
    if ctx.json() {
        super::print_json(&once.value)?;
    } else {
        crate::out::print(&disktier_interfere::render_text(&once.doc))?;
        if let Some(id) = &once.id {
            ctx.note(format!("saved as run {id}"));
        }
    }
    if once.interrupted {
        anyhow::bail!(
            "interrupted by {}: the figures of the last scenario are partial; every change was undone",
            super::progress::restoring_signal().unwrap_or("a signal")
        );
    }
    if once.pass() {
        if let Some(which) = once.doc.writer_failed_everywhere() {
            anyhow::bail!("{}", writer_failed(&which));
        }
    }
    Ok(if once.pass() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

/// Why a run whose every scenario passed is not a pass: the writer command failed in every
/// scenario (`which`: each one and its exit status). Exit 2, as for a run that could not be
/// made: a gate on this command must not read "etcd holds beside the writer" from it.
fn writer_failed(which: &str) -> String {
    format!(
        "the writer command failed in every scenario ({which}): each one measured etcd's probe beside a command that did not do its work, so this run cannot tell whether etcd holds beside it; run the command by hand until it succeeds (its stderr is in the scenarios' notes), then run interfere again"
    )
}

/// `--repeat N`: the comparison N times, each run saved in one group, then what they agree on
/// ([`disktier_interfere::report::repeat`]). A signal ends the series: the run it stopped is
/// saved (marked interrupted) but not counted, and the exit is 2, as `check --repeat`'s.
fn run_repeated(ctx: &Ctx, cfg: &Config, n: u64) -> anyhow::Result<Outcome> {
    use crate::app::interfere::Finished;
    use disktier_interfere::report::repeat::render_summary;
    let s = crate::app::interfere::series(
        &ctx.store(),
        cfg,
        n,
        crate::app::interfere::Hooks {
            starting: &mut |i, n| ctx.note(format!("interfere run {i} of {n}")),
            ran: &super::progress::clear,
            finished: &mut |f| {
                let Finished { i, n, id, doc, cut } = f;
                if !ctx.json() {
                    outln!(
                        "run {i} of {n}{}: {}",
                        id.map(|id| format!(" (saved as {id})")).unwrap_or_default(),
                        if cut {
                            "INTERRUPTED (partial, not counted)".to_string()
                        } else {
                            disktier_interfere::report::outcome(doc).sentence()
                        }
                    )?;
                }
                Ok(())
            },
            signalled: &|| super::progress::restoring_signal().is_some(),
        },
    )?;
    let (group, docs) = (&s.group, &s.docs);
    let summary = s.summary();
    if ctx.json() {
        super::print_json(&serde_json::json!({
            "schema_version": crate::app::SCHEMA_VERSION,
            "kind": "interfere-repeat",
            "group_id": (!ctx.global.no_save).then(|| group.clone()),
            "run_ids": s.ids,
            "runs": docs,
            "summary": summary,
            "interrupted": s.cut.is_some(),
            "interrupted_run_id": s.cut.as_ref().and_then(|(_, id, _)| id.clone()),
            "interrupted_run": s.cut.as_ref().map(|(_, _, d)| d),
        }))?;
    } else {
        crate::out::print(&render_summary(&summary))?;
        if ctx.global.quiet && !ctx.global.no_save {
            // The notes below are not printed with --quiet: the group is worth a line.
            outln!("group {group}")?;
        }
        if !ctx.global.no_save {
            ctx.note(format!(
                "saved as group {group}: each run's table with `disktier show ID`, all of them with `disktier history --group {group}`"
            ));
        }
    }
    if let Some((k, _, _)) = &s.cut {
        anyhow::bail!(
            "interrupted by {} during run {k} of {n}: it is not counted, the summary above is over the {} run(s) that completed; every change was undone",
            super::progress::restoring_signal().unwrap_or("a signal"),
            docs.len()
        );
    }
    if s.pass() && !docs.is_empty() {
        let never: Option<Vec<String>> =
            docs.iter().map(|d| d.writer_failed_everywhere()).collect();
        if let Some(which) = never {
            anyhow::bail!(
                "{} (in each of the {} runs)",
                writer_failed(&which[0]),
                docs.len()
            );
        }
    }
    Ok(if s.pass() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

/// The options as plain values, with `$PATH` and this binary for `--aggressor-cmd` and the
/// aggressor process.
fn options(args: Args, run_dir: PathBuf) -> Options {
    Options {
        dir: args.dir,
        aggressor: args.aggressor,
        aggressor_cmd: args.aggressor_cmd,
        mitigations: args.mitigations,
        duration: args.duration,
        aggressor_size: args.aggressor_size,
        threshold: args.threshold,
        throttle_bps: args.throttle_bps,
        throttle_iops: args.throttle_iops,
        aggressor_cap: args.aggressor_cap,
        run_dir,
        path: std::env::var("PATH").ok(),
        exe: std::env::current_exe(),
    }
}

/// The stop flag (restoring signals), the notes on stderr and the progress line.
fn wiring(ctx: &Ctx) -> Wiring {
    let chatty = ctx.chatty();
    Wiring {
        stop: super::progress::restoring_stop_flag(),
        notes: Box::new(move |n: &str| {
            super::progress::clear();
            if chatty {
                errln!("{n}");
            }
        }),
        progress: super::progress::reporter(ctx, "etcd probe"),
    }
}

fn restore(ctx: &Ctx, run_dir: &std::path::Path) -> anyhow::Result<Outcome> {
    let r = disktier_interfere::restore(run_dir)?;
    if ctx.json() {
        super::print_json(&serde_json::json!({
            "schema_version": crate::app::SCHEMA_VERSION,
            "journal": crate::text::path_json(&journal::Journal::file_in(run_dir)),
            "undone": r.undone,
            "failed": r.failed,
        }))?;
    } else if r.undone.is_empty() && r.failed.is_empty() {
        outln!("nothing to restore: no journal in {}", run_dir.display())?;
    } else {
        for u in &r.undone {
            outln!("undone: {u}")?;
        }
        for f in &r.failed {
            outln!("FAILED: {f}")?;
        }
    }
    if !r.failed.is_empty() {
        anyhow::bail!("{} change(s) could not be undone (listed above); fix the cause and run --restore again", r.failed.len());
    }
    Ok(Outcome::Pass)
}

/// `disktier __aggressor`: the bulk writer, talking to its parent on stdin/stdout.
pub fn aggressor(_ctx: &Ctx, args: AggressorArgs) -> anyhow::Result<Outcome> {
    let spec = AggressorSpec {
        kind: AggressorKind::from_name(&args.kind)?,
        dir: args.dir,
        size: args.size,
        policy: WriterPolicy::from_name(&args.policy)
            .with_context(|| format!("unknown writer policy {:?}", args.policy))?,
        seed: args.seed,
        command: match args.program {
            Some(program) => Some(UserCommand {
                program,
                args: args.args,
                line: args.line.unwrap_or_default(),
            }),
            None => None,
        },
    };
    aggressor::process::child_main(&spec)?;
    Ok(Outcome::Pass)
}
