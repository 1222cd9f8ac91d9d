//! Context windows as data, like prices: built-in windows of the built-in providers' models by
//! `provider:model` prefix (their model rows in [`crate::providers::BUILTIN`]), corrected by
//! `context_windows:` in the program config (matched by [`ModelTable`], the same rules as
//! `prices:`), a conservative default for unknown models, and an estimate of how many tokens a
//! request will take before it is sent.

use std::collections::BTreeMap;

use golem_protocol::TokenUsage;

use crate::message::{Message, ModelRequest};
use crate::model::Model;
use crate::model_table::ModelTable;

/// The window assumed for a model no table knows: small enough for most models served today,
/// so that a session manages its context too early rather than too late.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;

/// Context windows by model (see [`ModelTable`] for the matching rules).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextWindows(ModelTable<u64>);

impl Default for ContextWindows {
    fn default() -> Self {
        Self::defaults()
    }
}

impl ContextWindows {
    /// The built-in windows only: those in the providers' model rows.
    pub fn defaults() -> Self {
        Self(ModelTable::builtin(|row| row.window))
    }

    /// The defaults, with `entries` (from `context_windows:`) taking precedence.
    pub fn with(self, entries: &BTreeMap<String, u64>) -> Self {
        Self(self.0.with(entries))
    }

    /// The window of `model` (`provider:model`), if known.
    pub fn lookup(&self, model: &str) -> Option<u64> {
        self.0.lookup(model)
    }

    /// The window of `model`, or [`DEFAULT_CONTEXT_WINDOW`] when unknown.
    pub fn window(&self, model: &str) -> u64 {
        self.lookup(model).unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }
}

/// The window `model` runs with: its own, else [`DEFAULT_CONTEXT_WINDOW`].
pub fn window_of(model: &dyn Model) -> u64 {
    model
        .context_window()
        .filter(|&window| window > 0)
        .unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// The tokens a call's context held: its prompt (full price, cache reads and cache writes) and
/// its answer, which the next request carries.
pub fn used_by(usage: &TokenUsage) -> u64 {
    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens
}

/// About four bytes of text per token, and a few tokens of framing per message: an estimate
/// that errs high for English and code, without a tokenizer.
const BYTES_PER_TOKEN: u64 = 4;
const MESSAGE_OVERHEAD: u64 = 4;

/// Tokens of `text`, estimated.
pub fn estimate_text(text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Tokens of `value` written as compact JSON, estimated by counting the bytes as they are
/// written rather than building the text (tool schemas are counted twice a turn).
pub fn estimate_json(value: &serde_json::Value) -> u64 {
    /// A writer that keeps only how many bytes went through it.
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // A `Value` always serializes, and the counter never fails a write.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0.div_ceil(BYTES_PER_TOKEN)
}

/// Tokens of one message, estimated.
pub fn estimate_message(message: &Message) -> u64 {
    MESSAGE_OVERHEAD
        + match message {
            Message::User { content } => estimate_text(content),
            Message::Assistant { text, tool_calls } => {
                estimate_text(text)
                    + tool_calls
                        .iter()
                        .map(|call| {
                            MESSAGE_OVERHEAD
                                + estimate_text(&call.name)
                                + estimate_text(&call.arguments)
                        })
                        .sum::<u64>()
            }
            Message::Tool { results } => results
                .iter()
                .map(|result| MESSAGE_OVERHEAD + estimate_text(&result.content))
                .sum(),
        }
}

/// Tokens of `messages`, estimated.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// Tokens of the part of a request that is not its messages (system prompt and tools),
/// estimated.
pub fn estimate_preamble(request: &ModelRequest) -> u64 {
    let tools: u64 = request
        .tools
        .iter()
        .map(|tool| {
            MESSAGE_OVERHEAD
                + estimate_text(&tool.name)
                + estimate_text(&tool.description)
                + estimate_json(&tool.input_schema)
        })
        .sum();
    estimate_text(&request.system) + tools
}

/// Tokens of a whole request's prompt, estimated.
pub fn estimate_request(request: &ModelRequest) -> u64 {
    estimate_preamble(request) + estimate_messages(&request.messages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolResultMessage;

    #[test]
    fn built_in_windows_by_prefix_and_the_programs_first() {
        let windows = ContextWindows::defaults();
        assert_eq!(
            windows.lookup("anthropic:claude-sonnet-4-5-20250929"),
            Some(200_000)
        );
        assert_eq!(windows.lookup("openai:gpt-4o-mini"), Some(128_000));
        assert_eq!(windows.lookup("openai-responses:gpt-5-mini"), Some(400_000));
        assert_eq!(windows.lookup("ollama:llama3"), None);
        assert_eq!(windows.window("ollama:llama3"), DEFAULT_CONTEXT_WINDOW);
        let own = BTreeMap::from([
            ("ollama:*".to_owned(), 8_192),
            ("proxy:claude-*".to_owned(), 1_000_000),
            ("anthropic:claude-opus-4".to_owned(), 100_000),
        ]);
        let windows = ContextWindows::defaults().with(&own);
        assert_eq!(windows.window("ollama:llama3"), 8_192);
        assert_eq!(windows.window("proxy:claude-x"), 1_000_000);
        assert_eq!(windows.window("anthropic:claude-opus-4"), 100_000);
        assert_eq!(windows.window("anthropic:claude-opus-4-1"), 200_000);
    }

    #[test]
    fn usage_counts_every_kind_of_token() {
        let usage = TokenUsage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 1000,
            cache_write_tokens: 100,
        };
        assert_eq!(used_by(&usage), 1115);
    }

    #[test]
    fn estimates_grow_with_the_text() {
        let small = Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: "c".into(),
                tool_name: "read_file".into(),
                content: "x".repeat(400),
                is_error: false,
            }],
        };
        let big = Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: "c".into(),
                tool_name: "read_file".into(),
                content: "x".repeat(40_000),
                is_error: false,
            }],
        };
        assert_eq!(estimate_message(&small), 108);
        assert_eq!(estimate_message(&big), 10_008);
        let request = ModelRequest::new("abcd", vec![small, big], Vec::new());
        assert_eq!(estimate_request(&request), 1 + 108 + 10_008);
    }

    #[test]
    fn a_schema_counts_as_its_compact_text() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "where \"it\" goes — ünïcode\n"}},
            "required": ["path"],
        });
        let text = schema.to_string();
        assert_eq!(estimate_json(&schema), estimate_text(&text));
        assert_eq!(estimate_json(&serde_json::json!({})), 1);
    }
}
