//! Integration tests of `golem-tools`: one binary, one module per toolset. Every tool call goes
//! through the real `ToolCallOrchestrator` over a real `Sandbox` on temporary directories (the
//! web toolset against HTTP servers the tests start on `127.0.0.1`). The MCP toolset's start
//! errors are in a binary of their own (`mcp.rs`), which is also its servers' reaper.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod filesystem;
mod shell;
mod web;
