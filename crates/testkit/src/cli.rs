//! The test environment of the `golem-forge` binary's end-to-end tests (`crates/cli/tests/`),
//! shared by every one of its test programs (and its benches): the binary run in a temporary
//! home with a clean environment ([`TestEnv`]), what it printed ([`render`], [`stdout`],
//! [`assert_exit`]), worker programs written into that home ([`worker`], [`TestEnv::project`],
//! [`Project`] with its mock model), the Python clients of the protocol tests ([`python`]) and
//! idle connections against an HTTP front end ([`flood`]).
//!
//! The binary is the one cargo built for the tests ([`binary`]); nothing here depends on a
//! crate of ours (docs/decisions/0021-test-support-below-every-crate.md). What only one test
//! program needs (the chat's pseudo-terminal, the browser's WebDriver, the MCP and ACP
//! clients' scripts, the Redis server) stays in that program's folder.

mod env;
pub mod fixtures;
pub mod flood;
mod output;
pub mod python;

pub use env::{
    TestEnv, api_key_env, binary, model_for, provider_env, render, repo_file, repo_root,
};
pub use fixtures::{PROJECT, Project, WRITES_ASK, fs_front_matter, worker, worker_described};
pub use output::{assert_exit, signal, stderr, stdout};
