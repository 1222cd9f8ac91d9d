//! End-to-end tests of `golem-forge acp` with an editor nobody here wrote: the Python ACP client
//! (`agent-client-protocol` from PyPI, in the virtual environment `scripts/test` makes) runs
//! `acp/clients/acp_client.py`, which starts the binary and speaks ACP v1 to it over stdio;
//! the workers' model is the local mock server. Malformed JSON-RPC is written by hand.
//!
//! `cargo test -p golem-forge --test acp`. The harness is in `acp/harness.rs` (on the MCP
//! tests' project harness); the cases are in `acp/`, one concern each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

#[allow(
    dead_code,
    reason = "shared with the runner's tests, which use all of it"
)]
mod common;

#[path = "acp/approvals.rs"]
mod approvals;
#[allow(dead_code, reason = "not every case uses every helper")]
#[path = "acp/harness.rs"]
mod harness;
#[path = "acp/jsonrpc.rs"]
mod jsonrpc;
#[allow(
    dead_code,
    reason = "the ACP tests use the project and the script runner only"
)]
#[path = "mcp/harness.rs"]
mod mcp_harness;
#[path = "acp/sessions.rs"]
mod sessions;
