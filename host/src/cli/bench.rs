//! `gpusort bench`: not yet written.

use anyhow::{Result, bail};
use clap::Args;
use std::process::ExitCode;

/// Settings of the bench mode.
#[derive(Debug, Args)]
pub struct BenchArgs {}

/// Runs the bench mode.
///
/// # Errors
/// Always, for now.
pub fn run(_args: &BenchArgs) -> Result<ExitCode> {
    bail!("the bench mode is not written yet")
}
