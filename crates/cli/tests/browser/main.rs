//! End-to-end tests of the browser front end: `golem-forge serve` against the local mock model
//! (the OpenAI chat wire), driven through its page in headless Chromium (Debian's `chromium`
//! and `chromium-driver`, over WebDriver with `fantoccini`), each test a whole session through
//! the page only; and the server's security rules over plain HTTP and WebSocket clients.
//!
//! `cargo test -p golem-forge --test browser`. A failing page test leaves a screenshot, the
//! console log, the DOM and the server's stderr under `target/browser-artifacts/<test>/`. The
//! page's hooks are the `data-testid`s of `crates/web/PAGE.md`. The harness is `browser/harness/mod.rs`
//! (its parts beside it); the cases are in `browser/`, one concern each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

mod approvals;
mod chat;
mod code_blocks;
mod elicitation;
mod harness;
mod inbox;
mod layout;
mod security;
mod session;
mod tools;
mod usage;
