//! `golem-forge test`: regression tests for workers (docs/testing.md). Test files beside a
//! worker list cases; each case runs as a fresh session of the worker in scratch zones with a
//! scripted model, and its expectations (status, answer, calls, approvals asked, blocked calls,
//! files, structured output, cost and tokens) are checked. The command itself, its terminal
//! output and its `--json` events are the binary's (`crates/cli/src/commands/test.rs`).

pub mod discover;
pub mod error;
pub mod expect;
pub mod file;
pub mod junit;
pub mod run;
pub mod schema;

pub use discover::{Suite, find_test_files, load_suites};
pub use error::TestError;
pub use expect::{Failure, Observed};
pub use file::{Case, TestFile, load_test_file, parse_test_file};
pub use junit::{junit_xml, write_junit};
pub use run::{CaseReport, RunOptions, run_case};
pub use schema::test_file_schema_json;
