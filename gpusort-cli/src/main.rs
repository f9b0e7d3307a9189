use clap::Parser;
use gpusort_cli::cli::{Cli, error_line, run};
use std::io::Write as _;
use std::process::ExitCode;

// An allocation failure ends the run with a message and exit code 2, not an abort.
#[global_allocator]
static ALLOC: gpusort_cli::memory::ExitOnOom = gpusort_cli::memory::ExitOnOom;

/// Says `message` on stderr as one line (a line break inside, as in a file's name, is shown as
/// `\n`); a closed stderr leaves nothing to tell.
fn error(message: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "gpusort: error: {}",
        message.replace('\n', "\\n")
    );
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version: printed as clap prints them, usage included.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let args: Vec<_> = std::env::args_os().collect();
            error(&error_line(&e, &args));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = gpusort_cli::cleanup::exit_cleanly_on_signals() {
        error(&format!("cannot handle signals: {e}"));
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
            error(&format!("{e:#}"));
            ExitCode::from(2)
        }
    }
}
