//! The command-line tool `gpusort`: the main job (no subcommand), `bench` and `sort`.

pub mod bench;
pub mod main_job;
mod progress;
pub mod sort_file;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub use main_job::{Backend, MainJob};

/// Sort arrays on NVIDIA GPUs with kernels written in Rust, and compare with the CPU.
///
/// Without a subcommand: generate keys, sort them on the GPU, verify against std's sort and
/// print a table beside the CPU baselines.
#[derive(Debug, Parser)]
#[command(name = "gpusort", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A subcommand; none runs the main job.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The main job's settings.
    #[command(flatten)]
    pub job: MainJob,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sweep sizes × algorithms × key types × orders; write CSV, markdown and an SVG plot.
    Bench(bench::BenchArgs),
    /// Sort a .npy or raw file into another file.
    Sort(sort_file::SortArgs),
}

/// Runs the command line. Exit code 0: done; 1: a verification failed; errors are reported by
/// the caller (exit code 2).
///
/// # Errors
/// Bad input or settings, or a GPU error, each with a message naming the problem.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => main_job::run(&cli.job),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Sort(args)) => sort_file::run(&args),
    }
}
