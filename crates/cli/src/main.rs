//! The `golem-forge` binary: parses the command line, sets up diagnostics and runs a command.
//! Everything else lives in `commands/` (one file per subcommand).

mod cli_error;
mod commands;
mod frontend;
mod input;
mod logging;
mod session;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    let _log_guard = match logging::init() {
        Ok(guard) => guard,
        Err(err) => return cli_error::report(&err),
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) => cli_error::report(&err),
    }
}
