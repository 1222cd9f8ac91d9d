//! End-to-end tests of batches on a Redis queue: a real `redis-server` (Debian's, started by
//! the tests on a free port in a temporary directory), `golem-forge batch --queue` to enqueue,
//! `batch-worker` processes as consumers, the mock model server as their model. What they
//! hold: every item runs once however many consumers take from the queue; a consumer killed
//! mid-item loses nothing; a Redis restart is weathered; a poison item is dead-lettered; a
//! parked item is answered from another process and continued elsewhere; bad credentials are
//! one line; `rediss://` works, an untrusted server does not; each item is counted once, and
//! every hint printed can be pasted; nothing on the queue gives more consent than the consumer's
//! own configuration, and an approval is bound to the call it showed.
//!
//! `cargo test -p golem-forge --test queue`. The server is in `queue/redis_server.rs`, the project
//! and process helpers in `queue/harness.rs`, the cases in `queue/`, one concern each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

mod approvals;
mod consent;
mod counts;
mod delivery;
mod failures;
mod harness;
mod redis_server;
mod tls;
mod traces;
