//! The scripted model of `golem-forge test`: it plays the replies a test case wrote down, one
//! per request, in order — text, tool calls, or both — and fails clearly when the worker asks
//! for a reply past the last one. It is an in-process [`Model`], not a provider: a session is
//! handed an instance, never a name, and it costs nothing (a price of zero, so that budgets in
//! dollars can be checked). Tokens are counted as the `test` model counts them, by words.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::{FinishReason, StreamEvent};
use crate::message::ModelRequest;
use crate::model::{EventStream, Model};
use crate::pricing::Price;
use crate::spec::ModelSpec;

/// The provider name scripted models report (`script:NAME`); no provider of that name exists.
pub const SCRIPT_PROVIDER: &str = "script";

/// One scripted reply: text, tool calls, or both (the calls follow the text).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptedReply {
    /// The answer text (empty: none).
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ScriptedCall>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments, sent as their JSON text.
    pub args: Value,
}

/// A model that answers request `n` with reply `n` of its script.
#[derive(Debug)]
pub struct ScriptedModel {
    spec: ModelSpec,
    replies: Vec<ScriptedReply>,
    next: AtomicUsize,
}

impl ScriptedModel {
    /// A scripted model named `script:NAME` playing `replies`.
    pub fn new(name: &str, replies: Vec<ScriptedReply>) -> Self {
        Self {
            spec: ModelSpec {
                provider: SCRIPT_PROVIDER.to_owned(),
                model: name.to_owned(),
            },
            replies,
            next: AtomicUsize::new(0),
        }
    }

    /// How many replies were asked for so far (more than scripted counts too).
    pub fn requests(&self) -> usize {
        self.next.load(Ordering::SeqCst)
    }

    /// The events of reply `reply` for `request`.
    fn events(reply: &ScriptedReply, index: usize, request: &ModelRequest) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if !reply.text.is_empty() {
            events.push(StreamEvent::TextDelta {
                text: reply.text.clone(),
            });
        }
        for (position, call) in reply.tool_calls.iter().enumerate() {
            events.push(StreamEvent::ToolCallStart {
                index: position,
                id: format!("script_{}_{position}", index + 1),
                name: call.name.clone(),
            });
            events.push(StreamEvent::ToolCallDelta {
                index: position,
                arguments: call.args.to_string(),
            });
            events.push(StreamEvent::ToolCallEnd { index: position });
        }
        let words = |s: &str| s.split_whitespace().count() as u64;
        let output_tokens = words(&reply.text)
            + reply
                .tool_calls
                .iter()
                .map(|c| words(&c.args.to_string()) + 1)
                .sum::<u64>();
        events.push(super::test_model::word_usage(request, output_tokens));
        events.push(StreamEvent::Finish {
            reason: if reply.tool_calls.is_empty() {
                FinishReason::EndTurn
            } else {
                FinishReason::ToolUse
            },
        });
        events
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    fn price(&self) -> Option<Price> {
        Some(Price {
            input: 0.0,
            output: 0.0,
            cache_read: None,
            cache_write: None,
        })
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(reply) = self.replies.get(index) else {
            return Err(ModelError::Config(format!(
                "the worker asked the model for reply {} but the case scripts only {} \
                 (add a reply to its `model:` list)",
                index + 1,
                self.replies.len()
            )));
        };
        let events = Self::events(reply, index, request)
            .into_iter()
            .map(Ok)
            .collect::<Vec<_>>();
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::collect;
    use serde_json::json;

    fn request() -> ModelRequest {
        ModelRequest::new("", Vec::new(), Vec::new())
    }

    #[tokio::test]
    async fn plays_replies_in_order_then_fails_clearly() {
        let model = ScriptedModel::new(
            "case",
            vec![
                ScriptedReply {
                    text: String::new(),
                    tool_calls: vec![ScriptedCall {
                        name: "write_file".into(),
                        args: json!({"path": "/notes/a.md"}),
                    }],
                },
                ScriptedReply {
                    text: "done".into(),
                    tool_calls: vec![],
                },
            ],
        );
        let first = collect(
            model
                .stream(&request(), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(first.tool_calls.len(), 1);
        assert_eq!(first.tool_calls[0].name, "write_file");
        assert_eq!(first.tool_calls[0].arguments, r#"{"path":"/notes/a.md"}"#);
        let second = collect(
            model
                .stream(&request(), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(second.text, "done");
        assert!(second.usage.output_tokens > 0);
        let Err(err) = model.stream(&request(), CancellationToken::new()).await else {
            panic!("a third reply was played");
        };
        assert_eq!(
            err.to_string(),
            "the worker asked the model for reply 3 but the case scripts only 2 (add a reply \
             to its `model:` list)"
        );
        assert_eq!(model.requests(), 3);
        assert_eq!(model.spec().to_string(), "script:case");
    }
}
