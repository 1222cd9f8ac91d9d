//! Provider clients against local mock servers that speak each provider's real protocol, and
//! one session per wire checked against a strict server and the fields each API documents.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod anthropic;
mod documented;
mod openai_chat;
mod openai_responses;
mod prompt_cache;
mod strict_server;
mod structured_output;
mod wire_sessions;
