//! The integration tests of the `golem-forge` binary and of the workspace's architecture rules,
//! in one test binary to keep link times down.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

mod approvals;
mod architecture;
mod batch;
mod batch_json;
mod chat;
mod cli;
mod escapes;
mod example_cases;
mod junit_schema;
mod readme;
mod run;
mod scaffold;
mod sessions;
mod startup_order;
mod tool_docs;
mod worker_tests;
