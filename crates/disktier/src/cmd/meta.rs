//! `disktier completions SHELL` and `disktier man`: generated from the CLI definition, so they
//! never drift from it.

use super::{Ctx, Outcome};
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
    _ctx: &Ctx,
    args: CompletionsArgs,
    mut cmd: clap::Command,
) -> anyhow::Result<Outcome> {
    // Into memory, then out: clap_complete panics when its writer fails (QA: `> /dev/full`).
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "disktier", &mut buf);
    crate::out::write_bytes(&buf)?;
    Ok(Outcome::Pass)
}

pub fn man(ctx: &Ctx, args: ManArgs, cmd: clap::Command) -> anyhow::Result<Outcome> {
    match args.out_dir {
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            crate::out::write_bytes(&buf)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            ctx.note(format!("man pages written to {}", dir.display()));
        }
    }
    Ok(Outcome::Pass)
}
