//! `golem-forge schema worker`: the JSON Schema of a file golem-forge reads, printed for editors
//! and other tools. The schema is `golem_runtime`'s; its committed copy is
//! `docs/schema/worker.schema.json`.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::cli_error::CommandError;

/// Print the JSON Schema of a worker file's front matter
///
/// For editors and other tools: a YAML language server given this schema can complete and check
/// the keys of a `.worker` file's front matter. `check` remains the judge: it also checks what a
/// schema cannot (zones named twice, a workdir that is not a zone).
#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[command(subcommand)]
    pub what: SchemaKind,
}

/// Which file's schema.
#[derive(Debug, Subcommand)]
pub enum SchemaKind {
    /// The front matter of a `.worker` file
    Worker,
}

/// Runs `golem-forge schema`.
pub fn cmd_schema(args: SchemaArgs) -> Result<ExitCode, CommandError> {
    let text = match args.what {
        SchemaKind::Worker => golem_runtime::worker::worker_schema_json(),
    };
    super::write_stdout(&text)
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))
}
