use clap::Parser;
use gpusort_cli::cli::{Cli, run};
use std::io::Write as _;
use std::process::ExitCode;

// An allocation failure ends the run with a message and exit code 2, not an abort.
#[global_allocator]
static ALLOC: gpusort::memory::ExitOnOom = gpusort::memory::ExitOnOom;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = gpusort::cleanup::exit_cleanly_on_signals() {
        let _ = writeln!(
            std::io::stderr(),
            "gpusort: error: cannot handle signals: {e}"
        );
        return ExitCode::from(2);
    }
    // rayon's pool, at the size the process can afford, before any work uses it.
    if let Err(e) = gpusort::cpu::start_threads() {
        let _ = writeln!(std::io::stderr(), "gpusort: error: {e}");
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // A closed stderr leaves nothing to tell.
            let _ = writeln!(std::io::stderr(), "gpusort: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
