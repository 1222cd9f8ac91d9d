//! `golem-forge test`: regression tests for workers (docs/testing.md). Test files beside a
//! worker list cases; each case runs as a fresh session of the worker in scratch zones with a
//! scripted model (or, for an eval, a real one, several runs each in a small pool), and its
//! expectations (status, answer, calls, approvals asked, blocked calls, files, structured
//! output, cost and tokens) are checked; `--update` writes a model's replies back into the file. The command itself, its terminal
//! output and its `--json` events are the binary's (`crates/cli/src/commands/test.rs`).

pub mod discover;
pub mod error;
pub mod expect;
pub mod file;
pub mod junit;
pub mod pool;
pub mod run;
pub mod schema;
pub mod update;

pub use discover::{Suite, find_test_files, load_suites};
pub use error::TestError;
pub use expect::{Failure, Observed};
pub use file::{Case, TestFile, load_test_file, parse_test_file};
pub use junit::{junit_xml, write_junit};
pub use pool::{Planned, PoolEvent, PoolOutcome, PoolSettings, run_pool};
pub use run::{CaseReport, RunOptions, run_case};
pub use schema::test_file_schema_json;
pub use update::{RecordingError, write_replies};
