//! `golem-forge schema worker` and `schema test`: the JSON Schema of a file golem-forge reads,
//! printed for editors and other tools. The worker file's schema is `golem_runtime`'s (committed
//! as `docs/schema/worker.schema.json`), the test file's `golem_worker_tests`' (committed as
//! `docs/schema/worker-test.schema.json`).

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::cli_error::CommandError;

/// Print the JSON Schema of a worker file's front matter or of a test file
///
/// For editors and other tools: a YAML language server given this schema can complete and check
/// the keys of a `.worker` file's front matter (or of a `NAME.test.yaml`). `check` (and `test`)
/// remain the judge: they also check what a schema cannot (zones named twice, a workdir that is
/// not a zone, a test file's paths outside the worker's zones).
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
    /// A worker's test file (`NAME.test.yaml`, docs/testing.md)
    Test,
}

/// Runs `golem-forge schema`.
pub fn cmd_schema(args: SchemaArgs) -> Result<ExitCode, CommandError> {
    let text = match args.what {
        SchemaKind::Worker => golem_runtime::worker::worker_schema_json(),
        SchemaKind::Test => golem_worker_tests::test_file_schema_json(),
    };
    super::write_stdout(&text)
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))
}
