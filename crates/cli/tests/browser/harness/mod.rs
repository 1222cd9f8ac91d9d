//! The browser harness: `golem-forge serve` as a subprocess against the mock model, a local
//! chromedriver (a free port, its own process group) and a headless Chromium with a fresh
//! profile, driven through WebDriver by `fantoccini` behind a blocking facade. Every process is
//! killed when its guard drops, also when a test panics; a panicking test first leaves a
//! screenshot, the page's console log, its DOM and the server's stderr under
//! `target/browser-artifacts/<test name>/` and prints where.
//!
//! Waiting is polling with a deadline ([`LIMIT`]) and a message saying what was awaited and what
//! the page showed instead; there are no fixed sleeps.
//!
//! One concern per module, under `harness/`: `fixtures` (the worker and its project),
//! `processes` (`serve` and chromedriver, with their guards), `ui` (the [`Ui`] driver: the
//! browser's session, WebDriver calls, navigation, scripts), `page` (waiting for, reading and
//! acting on the page) and `artifacts` (what a failing test leaves and says). The tests and
//! `benches/browser_latency.rs` use them through this file.

use std::time::Duration;

mod artifacts;
mod fixtures;
mod page;
mod processes;
mod ui;

// What the tests (and `benches/browser_latency.rs`) use.
pub use self::{
    fixtures::{WIRE, fs_worker, project, worker, write_args},
    page::tid,
    processes::{Serve, require_browser},
    ui::Ui,
};

/// The page widths the layout is checked at: a desktop window and a phone's (CSS pixels).
pub const WIDTHS: [u32; 2] = [1280, 390];

/// The window height the tests use with [`WIDTHS`].
pub const HEIGHT: u32 = 900;

/// How long anything may take before a test gives up (never reached when things work).
pub const LIMIT: Duration = Duration::from_secs(20);
