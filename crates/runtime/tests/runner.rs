//! The integration tests of golem-runtime, in one binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod compaction;
mod config;
mod faults;
mod fixture;
mod host;
mod host_inbox;
mod host_mode;
mod host_tree;
mod long_sessions;
mod model_calls;
mod models;
mod prompt_cache;
mod registry;
mod rules;
mod scenario;
mod worker_file;
mod worker_file_mcp;
mod worker_file_web;
mod worker_schema;
