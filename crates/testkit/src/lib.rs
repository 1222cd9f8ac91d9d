//! Test support for Golem Forge, used only as a dev-dependency (`crates/cli/tests/architecture.rs`
//! checks that no crate depends on it otherwise).
//!
//! - [`mock`]: a local mock of a model provider's HTTP API with scripted replies and recorded
//!   requests, startable from async tests ([`mock::MockServer::start`]) or plain ones
//!   ([`mock::MockServer::start_blocking`], for tests that run the binary as a subprocess).
//! - [`anthropic`], [`openai`] (Chat Completions) and [`responses`] (OpenAI Responses):
//!   scripted replies shaped like each API's real SSE stream (a text answer, tool calls), and
//!   readers of the tool results a client sent back.
//! - [`Wire`]: the Anthropic and Chat Completions wire formats, each described by one
//!   [`WireSpec`] (in its module), to run one test against every wire without matching on it.
//! - [`otlp`]: local OTLP trace receivers (HTTP and gRPC) that decode what a program exports
//!   with the official OpenTelemetry messages, and endpoints that hang or refuse.
//! - [`git`]: the host's git with no user or system configuration, for tests that make
//!   repositories.
//! - [`harness`]: the `main` of a test binary that is also the jail's helper.
//! - [`program`]: a worker program on disk that talks to the mock, for session tests.
//! - [`mcp_servers`]: the installed MCP reference servers.
//! - [`parts`]: what the tests need beyond cargo, and the commands that install it.
//! - [`cli`]: the test environment of the `golem-forge` binary's end-to-end tests, shared by
//!   all its test programs: the binary in a clean temporary home, worker projects, the Python
//!   protocol clients, idle HTTP connections.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failure here is a test failure"
)]

pub mod anthropic;
pub mod cli;
pub mod git;
pub mod harness;
mod local_server;
pub mod mcp_servers;
pub mod mock;
pub mod openai;
pub mod otlp;
pub mod parts;
pub mod program;
pub mod responses;

use mock::{Chunk, Recorded, Reply};
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

/// A tool call as a client sent it back to the model in its history, read from a recorded
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as a JSON value: Anthropic's `input` object as it is; OpenAI's
    /// `arguments` string parsed (kept as a string when it is not JSON).
    pub arguments: Value,
}

/// A tool definition a request offered the model, read from a recorded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentTool {
    /// The tool's name.
    pub name: String,
    /// Its JSON Schema (Anthropic's `input_schema`, OpenAI's `function.parameters`).
    pub schema: Value,
}

/// Everything a test needs to know of one wire format, as data: how the mock's replies are
/// encoded, how a client's request is read, and how to point the binary at the mock. Each
/// wire's module has its `WIRE`; [`Wire`] picks one.
#[derive(Debug)]
pub struct WireSpec {
    /// The name the `mock_server` example takes (`anthropic`, `openai`).
    pub name: &'static str,
    /// The path a client posts to.
    pub path: &'static str,
    /// The `--model` that makes the binary speak this wire to the server of
    /// [`WireSpec::base_url_env`].
    pub model: &'static str,
    /// The variable holding its provider's API key, and the key the tests set.
    pub api_key: (&'static str, &'static str),
    /// The variable that points its provider's client at a server.
    pub base_url_env: &'static str,
    /// What follows the mock's address in that variable (`/v1` for OpenAI, nothing for
    /// Anthropic, whose client adds it).
    pub base_url_path: &'static str,
    /// Where in [`WireSpec::text`]'s chunks the first text delta ends: a chunk inserted
    /// there comes after some of the answer and before the rest.
    pub after_first_text_delta: usize,
    /// A streamed final answer.
    pub text: fn(&str) -> Reply,
    /// A streamed turn of tool calls (id, name, arguments).
    pub tool_calls: fn(&[(&str, &str, Value)]) -> Reply,
    /// Tool calls whose arguments are the text streamed, which need not be JSON.
    pub tool_calls_raw: fn(&[(&str, &str, &str)]) -> Reply,
    /// A structured answer with this value, the way the wire's client asks for one.
    pub structured_answer: fn(&Value) -> Reply,
    /// The tool results in a request body, in order.
    pub tool_results: fn(&Value) -> Vec<SentToolResult>,
    /// The tool calls in a request body's history, in order.
    pub tool_calls_sent: fn(&Value) -> Vec<SentToolCall>,
    /// The tools a request body offers, in order.
    pub tools_sent: fn(&Value) -> Vec<SentTool>,
    /// The schema a request body asks the answer to follow, if it asks for a structured one.
    pub output_schema_sent: fn(&Value) -> Option<Value>,
    /// Whether a sent result reports a failure, by the wire's convention.
    pub is_error: fn(&SentToolResult) -> bool,
    /// A sent result's text without the wire's error marker.
    pub result_text: fn(&SentToolResult) -> &str,
}

/// A provider wire format the mock can speak. What a wire does is its [`WireSpec`]; the
/// methods read it, so a test never matches on the wire. A new wire is a variant, its module's
/// `WIRE` and its line in [`Wire::spec`] and [`Wire::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The Anthropic Messages API (`/v1/messages`).
    Anthropic,
    /// The OpenAI Chat Completions API (`/v1/chat/completions`).
    OpenAi,
}

impl Wire {
    /// Every wire format, for parametrised tests.
    pub const ALL: [Wire; 2] = [Wire::Anthropic, Wire::OpenAi];

    /// What this wire does.
    pub fn spec(self) -> &'static WireSpec {
        match self {
            Wire::Anthropic => &anthropic::WIRE,
            Wire::OpenAi => &openai::WIRE,
        }
    }

    /// The wire whose [`WireSpec::name`] is `name`.
    pub fn named(name: &str) -> Option<Wire> {
        Wire::ALL.into_iter().find(|wire| wire.spec().name == name)
    }

    /// A streamed final answer.
    pub fn text(self, text: &str) -> Reply {
        (self.spec().text)(text)
    }

    /// A streamed final answer with `chunk` (a [`Chunk::Hang`], a [`Chunk::Delay`]) after its
    /// first text delta: the client has part of the answer, then waits.
    pub fn text_stalled(self, text: &str, chunk: Chunk) -> Reply {
        let mut reply = self.text(text);
        reply
            .chunks
            .insert(self.spec().after_first_text_delta, chunk);
        reply
    }

    /// A streamed turn with these tool calls (id, name, arguments).
    pub fn tool_calls(self, calls: &[(&str, &str, Value)]) -> Reply {
        (self.spec().tool_calls)(calls)
    }

    /// Like [`Wire::tool_calls`], with each call's arguments given as the text the model
    /// streams, which need not be valid JSON.
    pub fn tool_calls_raw(self, calls: &[(&str, &str, &str)]) -> Reply {
        (self.spec().tool_calls_raw)(calls)
    }

    /// A structured answer (`output: {schema}`) with this value, as the model gives it on
    /// this wire: a `final_result` tool call on Anthropic, the JSON text on OpenAI.
    pub fn structured_answer(self, value: &Value) -> Reply {
        (self.spec().structured_answer)(value)
    }

    /// The tool results in a recorded request, in order.
    pub fn tool_results(self, request: &Recorded) -> Vec<SentToolResult> {
        (self.spec().tool_results)(&request.body)
    }

    /// The tool calls in a recorded request's history, in order.
    pub fn tool_calls_sent(self, request: &Recorded) -> Vec<SentToolCall> {
        (self.spec().tool_calls_sent)(&request.body)
    }

    /// The tools a recorded request offers, in order.
    pub fn tools_sent(self, request: &Recorded) -> Vec<SentTool> {
        (self.spec().tools_sent)(&request.body)
    }

    /// The schema a recorded request asks the answer to follow (Anthropic: the `final_result`
    /// tool's, when `tool_choice` makes the model call a tool; OpenAI: `response_format`'s).
    pub fn output_schema_sent(self, request: &Recorded) -> Option<Value> {
        (self.spec().output_schema_sent)(&request.body)
    }

    /// Whether a sent result reports a failure, by the wire's convention.
    pub fn is_error(self, result: &SentToolResult) -> bool {
        (self.spec().is_error)(result)
    }

    /// A sent result's text without the wire's error marker (the `Error: ` that the OpenAI
    /// clients put before a failed result's text when it does not already start with
    /// `Error`), i.e. what the runtime gave the client.
    pub fn result_text(self, result: &SentToolResult) -> &str {
        (self.spec().result_text)(result)
    }

    /// The path a client posts to.
    pub fn path(self) -> &'static str {
        self.spec().path
    }

    /// The `--model` that makes the binary speak this wire (to the server of
    /// [`Wire::provider_env`]).
    pub fn model(self) -> &'static str {
        self.spec().model
    }

    /// The environment variable holding the API key of this wire's provider.
    pub fn api_key_env(self) -> &'static str {
        self.spec().api_key.0
    }

    /// The API key and base URL variables that point this wire's provider client at the
    /// server at `base_url` (the mock's, without a path).
    pub fn provider_env(self, base_url: &str) -> [(&'static str, String); 2] {
        let spec = self.spec();
        [
            (spec.api_key.0, spec.api_key.1.to_owned()),
            (
                spec.base_url_env,
                format!("{base_url}{}", spec.base_url_path),
            ),
        ]
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for wire in Wire::ALL {
            assert_eq!(Wire::named(wire.spec().name), Some(wire));
        }
        assert_eq!(Wire::named("nope"), None);
    }

    /// The chunk before the stall carries some of the answer, the chunks after it the rest.
    #[test]
    fn a_stall_comes_after_the_first_text_delta() {
        for wire in Wire::ALL {
            let reply = wire.text_stalled("Once upon a time", Chunk::Hang);
            let at = wire.spec().after_first_text_delta;
            assert!(matches!(reply.chunks[at], Chunk::Hang), "{wire:?}");
            let text = |chunks: &[Chunk]| -> String {
                chunks
                    .iter()
                    .filter_map(|c| match c {
                        Chunk::Data(data) => Some(data.clone()),
                        Chunk::Delay(_) | Chunk::Cut | Chunk::Hang | Chunk::Until(_) => None,
                    })
                    .collect()
            };
            let before = text(&reply.chunks[..at]);
            let after = text(&reply.chunks[at + 1..]);
            // The answer streams in two halves: "Once upo", "n a time".
            assert!(
                before.contains("Once upo") && !before.contains("n a time"),
                "{wire:?}: {before}"
            );
            assert!(
                after.contains("n a time") && !after.contains("Once"),
                "{wire:?}: {after}"
            );
            assert_eq!(
                reply.chunks.len(),
                wire.text("Once upon a time").chunks.len() + 1
            );
        }
    }

    #[test]
    fn provider_env_points_at_the_server() {
        assert_eq!(
            Wire::Anthropic.provider_env("http://127.0.0.1:9"),
            [
                ("ANTHROPIC_API_KEY", "sk-ant-mock".to_owned()),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9".to_owned())
            ]
        );
        assert_eq!(
            Wire::OpenAi.provider_env("http://127.0.0.1:9")[1],
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1".to_owned())
        );
        assert_eq!(Wire::OpenAi.api_key_env(), "OPENAI_API_KEY");
    }

    #[test]
    fn sent_calls_and_output_schemas_are_read_on_each_wire() {
        let anthropic = json!({
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "x"},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]}],
            "tools": [{"name": "final_result", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "tool", "name": "final_result"}});
        let calls = (anthropic::WIRE.tool_calls_sent)(&anthropic);
        assert_eq!(
            calls,
            [SentToolCall {
                id: "t1".into(),
                name: "read_file".into(),
                arguments: json!({})
            }]
        );
        let tool = SentTool {
            name: "final_result".into(),
            schema: json!({"type": "object"}),
        };
        assert_eq!(
            (anthropic::WIRE.tools_sent)(&anthropic),
            std::slice::from_ref(&tool)
        );
        assert_eq!(
            (anthropic::WIRE.output_schema_sent)(&anthropic),
            Some(json!({"type": "object"}))
        );
        // A final_result tool the model is not made to call is not a structured request.
        let mut auto = anthropic.clone();
        auto["tool_choice"] = json!({"type": "auto"});
        assert_eq!((anthropic::WIRE.output_schema_sent)(&auto), None);

        let openai = json!({
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "a", "arguments": "{}"}},
                    {"id": "c2", "type": "function",
                     "function": {"name": "b", "arguments": "{\"p\": "}}]}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "m", "schema": {"type": "object"}}}});
        let calls = (openai::WIRE.tool_calls_sent)(&openai);
        assert_eq!(calls[0].arguments, json!({}));
        assert_eq!(calls[1].arguments, json!("{\"p\": "));
        assert_eq!(
            (openai::WIRE.output_schema_sent)(&openai),
            Some(json!({"type": "object"}))
        );
        assert_eq!((openai::WIRE.output_schema_sent)(&json!({})), None);
        let offered = json!({"tools": [{"type": "function", "function": {
            "name": "final_result", "description": "d", "parameters": {"type": "object"}}}]});
        assert_eq!((openai::WIRE.tools_sent)(&offered), [tool]);
        assert!((openai::WIRE.tools_sent)(&json!({})).is_empty());
    }
}
