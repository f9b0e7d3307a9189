//! `gpusort sort`: not yet written.

use anyhow::{Result, bail};
use clap::Args;
use std::process::ExitCode;

/// Settings of the file sort.
#[derive(Debug, Args)]
pub struct SortArgs {}

/// Runs the file sort.
///
/// # Errors
/// Always, for now.
pub fn run(_args: &SortArgs) -> Result<ExitCode> {
    bail!("the file sort is not written yet")
}
