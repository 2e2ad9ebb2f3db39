//! `disktier plan`.

use super::{Ctx, Outcome};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_ctx: &Ctx, _args: Args) -> anyhow::Result<Outcome> {
    anyhow::bail!("disktier plan is not built yet")
}
