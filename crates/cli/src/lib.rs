//! The `golem-forge` command line as a library: [`main`] is the whole program (the binary in
//! `main.rs` only calls it). The terminal renderers are public too, so that benchmarks
//! (`benches/`) measure the code the chat draws with.

mod chat;
mod cli_error;
mod commands;
mod frontend;
mod inspection;
mod logging;
mod open_files;
mod run_input;
mod session;
mod shell_word;

use std::process::ExitCode;

use clap::Parser;

pub use frontend::{markdown, render};

/// Whether `args` (the program's name first) is a command line `golem-forge` accepts, as its
/// argument parser sees it; for checking command lines written elsewhere (a container's
/// command in `deploy/`) against the binary without running it.
pub fn check_command_line<I, T>(args: I) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::Parser;
    commands::Cli::try_parse_from(args)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Runs `golem-forge` with the process's arguments: the jail helper mode when the first
/// argument asks for it, otherwise the command line (`commands/`, one file per subcommand).
pub fn main() -> ExitCode {
    // The jail helper mode runs before anything else starts (no threads, no runtime).
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(golem_sandbox::jail::HELPER_ARG.as_ref()) {
        let code = golem_sandbox::jail::helper_main(args.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    inspection::close_to_inspection();
    open_files::raise_open_file_limit();
    let cli = commands::Cli::parse();
    let _log_guard = match logging::init() {
        Ok(guard) => guard,
        Err(err) => return cli_error::report(&err),
    };
    let code = match commands::run(cli) {
        Ok(code) => code,
        Err(err) => cli_error::report(&err),
    };
    // What is still queued for the trace collector gets at most two seconds.
    golem_telemetry::Telemetry::shutdown_process();
    code
}
