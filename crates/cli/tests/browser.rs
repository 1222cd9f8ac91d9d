//! End-to-end tests of the browser front end: `golem-forge serve` against the local mock model
//! (the OpenAI chat wire), driven through its page in headless Chromium (Debian's `chromium`
//! and `chromium-driver`, over WebDriver with `fantoccini`), each test a whole session through
//! the page only; and the server's security rules over plain HTTP and WebSocket clients.
//!
//! `cargo test -p golem-forge --test browser`. A failing page test leaves a screenshot, the
//! console log, the DOM and the server's stderr under `target/browser-artifacts/<test>/`. The
//! page's hooks are the `data-testid`s of `crates/web/PAGE.md`. The harness is `browser/harness.rs`
//! (its parts in `browser/harness/`); the cases are in `browser/`, one concern each.

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

#[path = "browser/approvals.rs"]
mod approvals;
#[path = "browser/chat.rs"]
mod chat;
#[path = "browser/elicitation.rs"]
mod elicitation;
mod flood;
#[allow(dead_code, reason = "the bench uses parts the tests do not")]
#[path = "browser/harness.rs"]
mod harness;
#[path = "browser/inbox.rs"]
mod inbox;
#[path = "browser/security.rs"]
mod security;
#[path = "browser/session.rs"]
mod session;
#[path = "browser/tools.rs"]
mod tools;
