use clap::Parser;
use gpusort_cli::cli::{Cli, run};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gpusort: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
