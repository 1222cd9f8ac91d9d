//! Diagnostics with `tracing`: the level comes from `GOLEM_FORGE_LOG` (an env-filter such as
//! `debug` or `golem_core=trace`, default `warn`), written to stderr, or appended to the file
//! named by `GOLEM_FORGE_LOG_FILE`. Never to stdout, where `--json` events go. Colour only
//! when stderr is a terminal and `NO_COLOR` is unset or empty.

use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

use crate::cli_error::CommandError;

/// Keeps the log writer alive for the life of the process.
pub struct LogGuard;

/// Installs the global subscriber.
pub fn init() -> Result<LogGuard, CommandError> {
    let spec = std::env::var("GOLEM_FORGE_LOG").unwrap_or_else(|_| "warn".to_owned());
    let filter = EnvFilter::try_new(&spec).map_err(|e| {
        CommandError::usage(format!(
            "GOLEM_FORGE_LOG=`{spec}` is not a valid log filter: {e}"
        ))
        .with_hint(
            "Use a level such as `GOLEM_FORGE_LOG=debug` or `GOLEM_FORGE_LOG=golem_core=trace`",
        )
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(true);
    let installed = match std::env::var_os("GOLEM_FORGE_LOG_FILE") {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| {
                    CommandError::usage(format!(
                        "cannot open the log file {} (GOLEM_FORGE_LOG_FILE): {e}",
                        std::path::Path::new(&path).display()
                    ))
                })?;
            builder
                .with_ansi(false)
                .with_writer(Mutex::new(file))
                .try_init()
        }
        None => builder
            .with_ansi(stderr_colour())
            .with_writer(std::io::stderr)
            .try_init(),
    };
    // A second init (in tests) keeps the first subscriber; that is fine.
    let _ = installed;
    Ok(LogGuard)
}

/// Whether log lines on stderr may be coloured: a terminal, and no `NO_COLOR`.
fn stderr_colour() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}
