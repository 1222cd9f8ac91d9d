//! Integration tests of `golem-tools`: one binary, one module per toolset. Every tool call goes
//! through the real `ToolCallOrchestrator` over a real `Sandbox` on temporary directories. The
//! web toolset's tests are `golem-web-tools`', the MCP toolset's `golem-mcp-client`'s.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod filesystem;
mod shell;
