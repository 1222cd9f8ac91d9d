//! End-to-end tests of `golem-forge mcp` with a real MCP client nobody here wrote: the Python
//! `mcp` package (2.x, from PyPI, in the virtual environment `scripts/test` makes), running the
//! small scripts of `mcp/clients/` against the binary, whose workers' model is the local mock
//! server. Each behaviour is checked over stdio and streamable HTTP, with the initialize
//! handshake (2025-11-25) and with the discovery the client prefers (2026-07-28).
//!
//! `cargo test -p golem-forge --test mcp`. The harness is in `mcp/harness.rs`; the cases are in
//! `mcp/`, one concern each.

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

#[path = "mcp/approvals.rs"]
mod approvals;
#[path = "mcp/calls.rs"]
mod calls;
#[path = "mcp/cancel.rs"]
mod cancel;
mod flood;
#[allow(dead_code, reason = "not every case uses every helper")]
#[path = "mcp/harness.rs"]
mod harness;
#[path = "mcp/http.rs"]
mod http;
#[path = "mcp/measure.rs"]
mod measure;
#[path = "mcp/questions.rs"]
mod questions;
#[path = "mcp/startup.rs"]
mod startup;
