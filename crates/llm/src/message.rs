//! The canonical conversation: our own message types, converted to each provider's wire format
//! at the edge (in the provider's file) and nowhere else.

use golem_protocol::ToolDefinition;

use crate::output::OutputFormat;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelToolCall {
    /// The provider's id for the call (made up when a provider sends none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model produced them (JSON text, possibly malformed).
    pub arguments: String,
}

impl ModelToolCall {
    /// The arguments as JSON; empty text counts as `{}`. A parse error is for the runtime to
    /// hand back to the model as an invalid-arguments result (its message is the parser's).
    pub fn parsed_arguments(&self) -> Result<Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }

    /// The arguments as a JSON object for providers that need one in the history
    /// (malformed arguments are sent as `{}`).
    pub fn arguments_object(&self) -> Value {
        match self.parsed_arguments() {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) | Err(_) => Value::Object(serde_json::Map::new()),
        }
    }
}

/// The result of one tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name (some wire formats need it).
    pub tool_name: String,
    /// The result as text.
    pub content: String,
    /// Whether the call failed (denied, blocked, error, interrupted).
    pub is_error: bool,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
#[allow(missing_docs)] // fields are named for what they hold
pub enum Message {
    /// The user's text.
    User {
        /// The text.
        content: String,
    },
    /// The model's answer: text and tool calls.
    Assistant {
        /// The text (may be empty when the model only called tools).
        #[serde(default)]
        text: String,
        /// The tool calls, in order.
        #[serde(default)]
        tool_calls: Vec<ModelToolCall>,
    },
    /// Results of the tool calls of the preceding assistant message, in order.
    Tool { results: Vec<ToolResultMessage> },
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// Everything a model needs for one turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    /// The system instructions (the worker's body).
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// The most tokens to produce.
    pub max_tokens: u32,
    /// Sampling temperature, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// A key that stays the same for every request of one conversation (the runtime sets the
    /// session id), for providers that route requests to their prompt cache by a key (OpenAI's
    /// `prompt_cache_key`). It never changes what the model is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
    /// The schema the final answer must meet, when the worker declares one (`output:`): each
    /// wire asks for it natively (OpenAI's `response_format` and `text.format`, Anthropic's
    /// `final_result` tool). Absent: the answer is free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputFormat>,
}

impl ModelRequest {
    /// A request with default limits.
    pub fn new(
        system: impl Into<String>,
        messages: Vec<Message>,
        tools: Vec<ToolDefinition>,
    ) -> Self {
        Self {
            system: system.into(),
            messages,
            tools,
            max_tokens: 8192,
            temperature: None,
            cache_key: None,
            output: None,
        }
    }

    /// The same request with `key` as its [`cache_key`](Self::cache_key).
    pub fn with_cache_key(mut self, key: Option<String>) -> Self {
        self.cache_key = key;
        self
    }

    /// The same request asking for a final answer in `output`'s format.
    pub fn with_output(mut self, output: Option<OutputFormat>) -> Self {
        self.output = output;
        self
    }
}
