//! The built-in offline `test` model: deterministic and free. For each tool it is offered, in
//! turn, it calls the tool once with arguments generated from the tool's JSON Schema; then it
//! answers with a summary of what the tools returned, or, asked for a structured answer, with a
//! small JSON value generated from the answer's schema. The model name may be a seed
//! (`test:42`); any other name (`test:default`) uses the seed `0`.

use async_trait::async_trait;
use golem_protocol::TokenUsage;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::{FinishReason, StreamEvent};
use crate::message::{Message, ModelRequest, ToolResultMessage};
use crate::model::{EventStream, Model};
use crate::providers::ProviderEntry;
use crate::schema_args::generate_args;
use crate::spec::ModelSpec;

/// `test:SEED` (a bare `test` is `test:default`): offline, free, no price.
pub const ENTRY: ProviderEntry = ProviderEntry {
    name: "test",
    wire: None,
    build: |spec, _| Ok(std::sync::Arc::new(TestModel::new(spec))),
    api_key_env: None,
    base_url: None,
    bare_model: Some("default"),
    models_of: None,
    models: &[],
};

/// The offline test model.
#[derive(Debug, Clone)]
pub struct TestModel {
    spec: ModelSpec,
    seed: u64,
}

impl TestModel {
    /// A test model; a numeric model name is the seed.
    pub fn new(spec: ModelSpec) -> Self {
        let seed = spec.model.parse().unwrap_or(0);
        Self { spec, seed }
    }

    /// The events of the next turn for `request`.
    pub fn respond(&self, request: &ModelRequest) -> Vec<StreamEvent> {
        let turn = current_turn(&request.messages);
        let called: Vec<&str> = turn.calls.iter().map(|name| name.as_str()).collect();
        let next = request
            .tools
            .iter()
            .find(|tool| !called.contains(&tool.name.as_str()));
        let mut events = Vec::new();
        match next {
            Some(tool) => {
                let index = turn.calls.len();
                let seed = self.seed ^ fnv1a(&tool.name);
                let args = generate_args(&tool.input_schema, seed);
                events.push(StreamEvent::ToolCallStart {
                    index: 0,
                    id: format!("test_call_{index}_{}", tool.name),
                    name: tool.name.clone(),
                });
                events.push(StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: args.to_string(),
                });
                events.push(StreamEvent::ToolCallEnd { index: 0 });
                events.push(word_usage(request, 8));
                events.push(StreamEvent::Finish {
                    reason: FinishReason::ToolUse,
                });
            }
            None => {
                let answer = match &request.output {
                    Some(output) => generate_args(&output.schema, self.seed).to_string(),
                    None => summary(turn.input, &turn.results),
                };
                let words = answer.split_inclusive(' ').count() as u64;
                for piece in answer.split_inclusive(' ') {
                    events.push(StreamEvent::TextDelta {
                        text: piece.to_owned(),
                    });
                }
                events.push(word_usage(request, words));
                events.push(StreamEvent::Finish {
                    reason: FinishReason::EndTurn,
                });
            }
        }
        events
    }
}

/// What happened since the last user message.
struct Turn<'a> {
    input: &'a str,
    calls: Vec<String>,
    results: Vec<&'a ToolResultMessage>,
}

fn current_turn(messages: &[Message]) -> Turn<'_> {
    let start = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .unwrap_or(0);
    let mut turn = Turn {
        input: "",
        calls: Vec::new(),
        results: Vec::new(),
    };
    for message in messages.iter().skip(start) {
        match message {
            Message::User { content } => turn.input = content,
            Message::Assistant { tool_calls, .. } => {
                turn.calls.extend(tool_calls.iter().map(|c| c.name.clone()));
            }
            Message::Tool { results } => turn.results.extend(results.iter()),
        }
    }
    turn
}

fn summary(input: &str, results: &[&ToolResultMessage]) -> String {
    let input = golem_protocol::text::fold(input.trim(), 80);
    if results.is_empty() {
        return format!("Test model: you said \"{input}\". No tools to call.");
    }
    let mut text = format!(
        "Test model: you said \"{input}\". I called {} tool(s):",
        results.len()
    );
    for result in results {
        let outcome = if result.is_error { "error" } else { "ok" };
        let first_line = result.content.lines().next().unwrap_or("");
        text.push_str(&format!(
            "\n- {} ({outcome}): {}",
            result.tool_name,
            golem_protocol::text::fold(first_line, 100)
        ));
    }
    text
}

/// The usage the offline models (`test`, the scripted replies of `golem-forge test`) report:
/// every word of the request is an input token, every argument text a word more.
pub(super) fn word_usage(request: &ModelRequest, output_tokens: u64) -> StreamEvent {
    let words = |s: &str| s.split_whitespace().count() as u64;
    let mut input_tokens = words(&request.system);
    for message in &request.messages {
        input_tokens += match message {
            Message::User { content } => words(content),
            Message::Assistant { text, tool_calls } => {
                words(text)
                    + tool_calls
                        .iter()
                        .map(|c| words(&c.arguments) + 1)
                        .sum::<u64>()
            }
            Message::Tool { results } => results.iter().map(|r| words(&r.content)).sum(),
        };
    }
    StreamEvent::Usage {
        usage: TokenUsage {
            input_tokens,
            output_tokens,
            ..TokenUsage::default()
        },
    }
}

/// A stable 64-bit hash of a name (FNV-1a), so tool argument choices do not depend on order.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[async_trait]
impl Model for TestModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let events = self.respond(request).into_iter().map(Ok);
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ModelToolCall;
    use golem_protocol::ToolDefinition;
    use serde_json::json;

    fn tools() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition {
                name: "read_file".into(),
                description: "".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"},
                    "encoding": {"enum": ["utf-8", "base64"], "default": "utf-8"}},
                    "required": ["path"], "additionalProperties": false}),
            },
            ToolDefinition {
                name: "count".into(),
                description: "".into(),
                input_schema: json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}},
                    "required": ["n"]}),
            },
        ]
    }

    fn model() -> TestModel {
        TestModel::new(ModelSpec {
            provider: "test".into(),
            model: "default".into(),
        })
    }

    #[tokio::test]
    async fn calls_each_tool_once_with_valid_arguments_then_answers() {
        let tools = tools();
        let mut messages = vec![Message::user("hello")];
        let mut called = Vec::new();
        for _ in 0..tools.len() {
            let request = ModelRequest::new("sys", messages.clone(), tools.clone());
            let response = model()
                .complete(&request, CancellationToken::new())
                .await
                .unwrap();
            assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
            let call = response.tool_calls[0].clone();
            let schema = &tools
                .iter()
                .find(|t| t.name == call.name)
                .unwrap()
                .input_schema;
            let args = call.parsed_arguments().unwrap();
            assert!(
                jsonschema::is_valid(schema, &args),
                "{args} invalid for {schema}"
            );
            called.push(call.name.clone());
            messages.push(Message::Assistant {
                text: String::new(),
                tool_calls: vec![call.clone()],
            });
            messages.push(Message::Tool {
                results: vec![ToolResultMessage {
                    tool_call_id: call.id,
                    tool_name: call.name,
                    content: "fine".into(),
                    is_error: false,
                }],
            });
        }
        assert_eq!(called, ["read_file", "count"]);
        let request = ModelRequest::new("sys", messages, tools);
        let response = model()
            .complete(&request, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response.finish_reason, Some(FinishReason::EndTurn));
        assert!(response.tool_calls.is_empty());
        assert!(response.text.contains("\"hello\""), "{}", response.text);
        assert!(
            response.text.contains("- read_file (ok): fine"),
            "{}",
            response.text
        );
        assert!(response.usage.output_tokens > 0);
    }

    #[tokio::test]
    async fn deterministic_and_new_turns_start_over() {
        let request = ModelRequest::new(
            "",
            vec![
                Message::user("one"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ModelToolCall {
                        id: "a".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                },
                Message::user("two"),
            ],
            tools(),
        );
        let first = model().respond(&request);
        assert_eq!(first, model().respond(&request));
        assert!(
            matches!(&first[0], StreamEvent::ToolCallStart { name, .. } if name == "read_file")
        );
    }

    #[tokio::test]
    async fn answers_without_tools_and_honours_cancellation() {
        let request = ModelRequest::new("", vec![Message::user("hi")], vec![]);
        let response = model()
            .complete(&request, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(
            response.text,
            "Test model: you said \"hi\". No tools to call."
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(matches!(
            model().stream(&request, cancel).await,
            Err(ModelError::Cancelled)
        ));
    }

    #[test]
    fn a_structured_answer_is_a_value_valid_against_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "verdict": {"enum": ["ok", "bad"]},
            "reasons": {"type": "array", "items": {"type": "string"}}}, "required": ["verdict"]});
        let request = ModelRequest::new("sys", vec![Message::user("judge")], vec![])
            .with_output(Some(crate::OutputFormat::new("judge", schema.clone())));
        let model = TestModel::new(ModelSpec::parse("test:default", &[]).unwrap());
        let text: String = model
            .respond(&request)
            .into_iter()
            .filter_map(|event| {
                if let StreamEvent::TextDelta { text } = event {
                    Some(text)
                } else {
                    None
                }
            })
            .collect();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(jsonschema::is_valid(&schema, &value), "{value}");
    }

    #[test]
    fn seed_comes_from_a_numeric_model_name() {
        assert_eq!(
            TestModel::new(ModelSpec {
                provider: "test".into(),
                model: "42".into()
            })
            .seed,
            42
        );
        assert_eq!(model().seed, 0);
    }
}
