//! Test support for Golem Forge, used only as a dev-dependency (`crates/cli/tests/architecture.rs`
//! checks that no crate depends on it otherwise).
//!
//! - [`mock`]: a local mock of a model provider's HTTP API with scripted replies and recorded
//!   requests, startable from async tests ([`mock::MockServer::start`]) or plain ones
//!   ([`mock::MockServer::start_blocking`], for tests that run the binary as a subprocess).
//! - [`anthropic`], [`openai`] (Chat Completions) and [`responses`] (OpenAI Responses):
//!   scripted replies shaped like each API's real SSE stream (a text answer, tool calls), and
//!   readers of the tool results a client sent back.
//! - [`Wire`]: the Anthropic and Chat Completions wire formats behind one enum, to run one test
//!   against both.
//! - [`git`]: the host's git with no user or system configuration, for tests that make
//!   repositories.
//! - [`harness`]: the `main` of a test binary that is also the jail's helper.
//! - [`program`]: a worker program on disk that talks to the mock, for session tests.
//! - [`mcp_servers`]: the installed MCP reference servers.
//! - [`parts`]: what the tests need beyond cargo, and the commands that install it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failure here is a test failure"
)]

pub mod anthropic;
pub mod git;
pub mod harness;
pub mod mcp_servers;
pub mod mock;
pub mod openai;
pub mod parts;
pub mod program;
pub mod responses;

use mock::{Recorded, Reply};
use serde_json::Value;

/// A tool result as a client sent it back to the model, read from a recorded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentToolResult {
    /// The id of the call it answers.
    pub tool_call_id: String,
    /// The text the model reads.
    pub content: String,
    /// The wire's error flag: `Some` for Anthropic (`is_error`, absent means `false`); `None`
    /// for OpenAI Chat Completions and Responses, which have no flag (failures start with
    /// `Error`: the runtime's `Error [CODE]: …` as it is, any other text after `Error: `).
    pub is_error: Option<bool>,
}

/// A provider wire format the mock can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The Anthropic Messages API (`/v1/messages`).
    Anthropic,
    /// The OpenAI Chat Completions API (`/v1/chat/completions`).
    OpenAi,
}

impl Wire {
    /// Both wire formats, for parametrised tests.
    pub const ALL: [Wire; 2] = [Wire::Anthropic, Wire::OpenAi];

    /// A streamed final answer.
    pub fn text(self, text: &str) -> Reply {
        match self {
            Wire::Anthropic => anthropic::text(text),
            Wire::OpenAi => openai::text(text),
        }
    }

    /// A streamed turn with these tool calls (id, name, arguments).
    pub fn tool_calls(self, calls: &[(&str, &str, Value)]) -> Reply {
        match self {
            Wire::Anthropic => anthropic::tool_calls(calls),
            Wire::OpenAi => openai::tool_calls(calls),
        }
    }

    /// Like [`Wire::tool_calls`], with each call's arguments given as the text the model
    /// streams, which need not be valid JSON.
    pub fn tool_calls_raw(self, calls: &[(&str, &str, &str)]) -> Reply {
        match self {
            Wire::Anthropic => anthropic::tool_calls_raw(calls),
            Wire::OpenAi => openai::tool_calls_raw(calls),
        }
    }

    /// The tool results in a recorded request, in order.
    pub fn tool_results(self, request: &Recorded) -> Vec<SentToolResult> {
        match self {
            Wire::Anthropic => anthropic::tool_results(&request.body),
            Wire::OpenAi => openai::tool_results(&request.body),
        }
    }

    /// Whether a sent result reports a failure, by the wire's convention.
    pub fn is_error(self, result: &SentToolResult) -> bool {
        match self {
            Wire::Anthropic => result.is_error == Some(true),
            Wire::OpenAi => result.content.starts_with("Error"),
        }
    }

    /// A sent result's text without the wire's error marker (the `Error: ` that the OpenAI
    /// clients put before a failed result's text when it does not already start with
    /// `Error`), i.e. what the runtime gave the client.
    pub fn result_text(self, result: &SentToolResult) -> &str {
        match self {
            Wire::Anthropic => &result.content,
            Wire::OpenAi => result
                .content
                .strip_prefix("Error: ")
                .unwrap_or(&result.content),
        }
    }

    /// The path a client posts to.
    pub fn path(self) -> &'static str {
        match self {
            Wire::Anthropic => "/v1/messages",
            Wire::OpenAi => "/v1/chat/completions",
        }
    }
}

/// Splits `text` in two at a character boundary near its middle, as a stream would.
pub(crate) fn halves(text: &str) -> [&str; 2] {
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle -= 1;
    }
    [&text[..middle], &text[middle..]]
}
