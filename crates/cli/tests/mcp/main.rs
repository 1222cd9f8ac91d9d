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

mod approvals;
mod calls;
mod cancel;
mod harness;
mod http;
mod measure;
mod questions;
mod startup;
