//! Provider clients against local mock servers that speak each provider's real protocol.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod anthropic;
mod openai_chat;
mod openai_responses;
