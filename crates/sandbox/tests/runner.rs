//! The integration tests of golem-sandbox, in one test binary: ordinary use of every operation
//! (`ops`), the zone approval table and narrowing (`approval`), the adversarial escape suite
//! (`escapes`) and the property tests (`props`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

mod approval;
mod common;
mod escapes;
mod jail;
mod ops;
mod props;
mod protected;
mod walk;
