//! Recording and replaying model exchanges. `--record FILE` wraps any model in a
//! [`RecordingModel`] that appends each complete exchange (the request and the events it
//! produced) to a JSONL file; the `replay:FILE` model ([`crate::providers::replay`]) plays them
//! back offline, failing clearly when the conversation differs from the recording.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::StreamEvent;
use crate::message::ModelRequest;
use crate::model::{EventStream, Model};
use crate::spec::ModelSpec;

/// The version of the recording format, written in the header line.
pub const RECORDING_VERSION: u32 = 1;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordingHeader {
    /// [`RECORDING_VERSION`].
    pub golem_forge_recording: u32,
    /// The model that was recorded, as `provider:model`.
    pub model: String,
}

/// One recorded exchange: what was asked and what the model streamed back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    /// The request, as [`request_fingerprint`] renders it.
    pub request: Value,
    /// The events, in order.
    pub events: Vec<StreamEvent>,
}

/// What of a request must match for a replay to follow the recording: the system prompt, the
/// messages, and the tools' names and schemas (not limits such as `max_tokens`).
pub fn request_fingerprint(request: &ModelRequest) -> Value {
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| serde_json::json!({"name": t.name, "inputSchema": t.input_schema}))
        .collect();
    serde_json::json!({
        "system": request.system,
        "messages": request.messages,
        "tools": tools,
    })
}

/// A model wrapper that records every complete exchange to a JSONL file.
pub struct RecordingModel {
    inner: Arc<dyn Model>,
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl std::fmt::Debug for RecordingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingModel")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RecordingModel {
    /// Records `inner` to `path`, replacing any previous recording there.
    pub fn create(inner: Arc<dyn Model>, path: &Path) -> Result<Self, ModelError> {
        let io = |e: std::io::Error| {
            ModelError::Config(format!(
                "cannot write the recording {}: {e}",
                path.display()
            ))
        };
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(io)?;
        let header = RecordingHeader {
            golem_forge_recording: RECORDING_VERSION,
            model: inner.spec().to_string(),
        };
        let line = golem_protocol::to_jsonl_line(&header)
            .map_err(|e| ModelError::Config(e.to_string()))?;
        writeln!(file, "{line}")
            .and_then(|()| file.flush())
            .map_err(io)?;
        Ok(Self {
            inner,
            path: path.to_owned(),
            file: Arc::new(Mutex::new(file)),
        })
    }
}

fn append(file: &Mutex<File>, path: &Path, exchange: &Exchange) {
    let Ok(line) = golem_protocol::to_jsonl_line(exchange) else {
        return;
    };
    let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Err(e) = writeln!(file, "{line}").and_then(|()| file.flush()) {
        tracing::error!(path = %path.display(), error = %e, "cannot append to the recording");
    }
}

#[async_trait]
impl Model for RecordingModel {
    fn spec(&self) -> &ModelSpec {
        self.inner.spec()
    }

    fn price(&self) -> Option<crate::pricing::Price> {
        self.inner.price()
    }

    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }

    fn server(&self) -> Option<crate::http::ServerAddress> {
        self.inner.server()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let inner = self.inner.stream(request, cancel).await?;
        let fingerprint = request_fingerprint(request);
        let file = self.file.clone();
        let path = self.path.clone();
        let mut events = Vec::new();
        let recorded = inner.map(move |item| {
            if let Ok(event) = &item {
                events.push(event.clone());
                if matches!(event, StreamEvent::Finish { .. }) {
                    let exchange = Exchange {
                        request: fingerprint.clone(),
                        events: std::mem::take(&mut events),
                    };
                    append(&file, &path, &exchange);
                }
            }
            item
        });
        Ok(Box::pin(recorded))
    }
}

/// The first place where two JSON values differ, as a JSON pointer with both values, or `None`
/// when they are equal.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<(String, Value, Value)> {
    fn walk(expected: &Value, actual: &Value, at: &mut String) -> Option<(String, Value, Value)> {
        match (expected, actual) {
            (Value::Object(a), Value::Object(b)) => {
                let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
                keys.sort();
                keys.dedup();
                for key in keys {
                    let len = at.len();
                    at.push('/');
                    at.push_str(key);
                    let found = walk(
                        a.get(key).unwrap_or(&Value::Null),
                        b.get(key).unwrap_or(&Value::Null),
                        at,
                    );
                    if found.is_some() {
                        return found;
                    }
                    at.truncate(len);
                }
                None
            }
            (Value::Array(a), Value::Array(b)) => {
                for i in 0..a.len().max(b.len()) {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    let found = walk(
                        a.get(i).unwrap_or(&Value::Null),
                        b.get(i).unwrap_or(&Value::Null),
                        at,
                    );
                    if found.is_some() {
                        return found;
                    }
                    at.truncate(len);
                }
                None
            }
            (a, b) if a == b => None,
            (a, b) => Some((at.clone(), a.clone(), b.clone())),
        }
    }
    walk(expected, actual, &mut String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_first_difference() {
        assert_eq!(
            first_difference(&json!({"a": [1, 2]}), &json!({"a": [1, 2]})),
            None
        );
        assert_eq!(
            first_difference(&json!({"a": [1, 2], "b": 1}), &json!({"a": [1, 3], "b": 2})),
            Some(("/a/1".into(), json!(2), json!(3)))
        );
        assert_eq!(
            first_difference(&json!({"m": [1]}), &json!({"m": [1, {"x": 1}]})),
            Some(("/m/1".into(), json!(null), json!({"x": 1})))
        );
    }
}

#[cfg(test)]
mod replay_tests {
    use std::sync::Arc;

    use super::*;
    use crate::message::{Message, ModelToolCall, ToolResultMessage};
    use crate::providers::replay::ReplayModel;
    use crate::providers::test_model::TestModel;
    use golem_protocol::ToolDefinition;
    use serde_json::json;

    fn spec(provider: &str, model: &str) -> ModelSpec {
        ModelSpec {
            provider: provider.into(),
            model: model.into(),
        }
    }

    fn tools() -> Vec<ToolDefinition> {
        vec![ToolDefinition {
            name: "read_file".into(),
            description: "reads".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }]
    }

    /// Runs a two-turn conversation (a tool call, then the answer) and returns the requests
    /// and responses.
    async fn converse(model: &dyn Model) -> Vec<Result<crate::event::ModelResponse, ModelError>> {
        let mut messages = vec![Message::user("hello")];
        let first = model
            .complete(
                &ModelRequest::new("sys", messages.clone(), tools()),
                CancellationToken::new(),
            )
            .await;
        let Ok(response) = &first else {
            return vec![first];
        };
        let call: ModelToolCall = response.tool_calls[0].clone();
        messages.push(Message::Assistant {
            text: response.text.clone(),
            tool_calls: vec![call.clone()],
        });
        messages.push(Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: call.id,
                tool_name: call.name,
                content: "hi".into(),
                is_error: false,
            }],
        });
        let second = model
            .complete(
                &ModelRequest::new("sys", messages, tools()),
                CancellationToken::new(),
            )
            .await;
        vec![first, second]
    }

    #[tokio::test]
    async fn a_recorded_session_replays_offline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let recorder =
            RecordingModel::create(Arc::new(TestModel::new(spec("test", "7"))), &path).unwrap();
        let recorded = converse(&recorder).await;
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "header + 2 exchanges:\n{text}");

        let replay = ReplayModel::open(spec("replay", path.to_str().unwrap())).unwrap();
        assert_eq!(replay.recorded_model(), "test:7");
        let replayed = converse(&replay).await;
        assert_eq!(replayed, recorded);

        // A third request goes beyond the recording.
        let err = replay
            .complete(
                &ModelRequest::new("sys", vec![Message::user("more")], tools()),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::ReplayDiverged { exchange: 3, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("only 2 exchanges"), "{err}");
    }

    #[tokio::test]
    async fn a_different_conversation_diverges_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let recorder =
            RecordingModel::create(Arc::new(TestModel::new(spec("test", "0"))), &path).unwrap();
        converse(&recorder).await;
        let replay = ReplayModel::open(spec("replay", path.to_str().unwrap())).unwrap();
        let err = replay
            .complete(
                &ModelRequest::new("sys", vec![Message::user("goodbye")], tools()),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("exchange 1"), "{message}");
        assert!(message.contains("/messages/0/content"), "{message}");
        assert!(
            message.contains("\"hello\"") && message.contains("\"goodbye\""),
            "{message}"
        );
    }

    #[test]
    fn bad_recordings_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let open = |content: &str| {
            let path = dir.path().join("r.jsonl");
            std::fs::write(&path, content).unwrap();
            ReplayModel::open(spec("replay", path.to_str().unwrap()))
                .unwrap_err()
                .to_string()
        };
        assert!(open("").contains("line 1: the recording is empty"));
        assert!(open("{\"hello\": 1}\n").contains("line 1: not a golem-forge recording"));
        assert!(
            open("{\"golemForgeRecording\": 9, \"model\": \"x\"}\n")
                .contains("format 9 is not supported")
        );
        let err = open("{\"golemForgeRecording\": 1, \"model\": \"x\"}\n{\"request\": 1}\n");
        assert!(err.contains("line 2"), "{err}");
        let missing = ReplayModel::open(spec("replay", "/nonexistent/rec.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("cannot read the recording /nonexistent/rec.jsonl"),
            "{missing}"
        );
    }
}
