//! End-to-end tests of `golem-forge acp` with an editor nobody here wrote: the Python ACP client
//! (`agent-client-protocol` from PyPI, in the virtual environment `scripts/test` makes) runs
//! `acp/clients/acp_client.py`, which starts the binary and speaks ACP v1 to it over stdio;
//! the workers' model is the local mock server. Malformed JSON-RPC is written by hand.
//!
//! `cargo test -p golem-forge --test acp`. The harness is in `acp/harness.rs` (on the
//! project and Python of `golem_testkit::cli`); the cases are in `acp/`, one concern each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

mod approvals;
mod harness;
mod jsonrpc;
mod sessions;
