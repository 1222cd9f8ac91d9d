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

#[path = "harness/artifacts.rs"]
mod artifacts;
#[path = "harness/fixtures.rs"]
mod fixtures;
#[path = "harness/page.rs"]
mod page;
#[path = "harness/processes.rs"]
mod processes;
#[path = "harness/ui.rs"]
mod ui;

// What the tests and the bench use; each uses a part.
#[allow(unused_imports, reason = "the tests and the bench each use a part")]
pub use self::{
    artifacts::artifacts_dir,
    fixtures::{WIRE, WORKER, fs_worker, project, worker, write_args},
    page::tid,
    processes::{CHROMEDRIVER, CHROMIUM, Serve, require_browser, tail},
    ui::Ui,
};

/// How long anything may take before a test gives up (never reached when things work).
pub const LIMIT: Duration = Duration::from_secs(20);
