//! `RuntimeUI`: the high-level handle runtime code uses to talk to whatever UI is attached
//! (docs/protocol.md). Fire-and-forget display helpers, and the awaited exchanges:
//! asking for approval, asking for text, and asking for a form (a tool's question).
//!
//! It speaks only through the [`UiEventBus`]; it must not render, read a terminal, or decide
//! anything itself (the approval gate decides what a response means).

use std::time::Duration;

use golem_protocol::{
    ActionEvent, ApprovalRequest, ApprovalResponse, ChatMessage, DisplayEvent, FormField,
    InputAction, StatusLevel,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::bus::{RequestError, UiEventBus, action_type_name};

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// Filled it in: the values by field name.
    Accepted(Map<String, Value>),
    /// Refused to answer.
    Declined,
    /// Dismissed it, or an interrupt ended it.
    Cancelled,
}

/// The values of a text answer (`userInput`) to a form: the text itself when it is a JSON
/// object, else the value of the form's only field, else nothing.
pub fn answer_from_text(content: &str, fields: &[FormField]) -> Map<String, Value> {
    if let Ok(Value::Object(values)) = serde_json::from_str::<Value>(content.trim()) {
        return values;
    }
    let mut values = Map::new();
    if let [only] = fields {
        values.insert(only.name.clone(), Value::String(content.trim().to_owned()));
    }
    values
}

/// The runtime's handle on the UI. Cheap to clone; clones share the bus.
#[derive(Debug, Clone)]
pub struct RuntimeUI {
    bus: UiEventBus,
    request_timeout: Option<Duration>,
}

impl RuntimeUI {
    /// A handle on `bus`; awaited requests wait without a time limit (only cancellation ends
    /// them) until [`RuntimeUI::with_request_timeout`] says otherwise.
    pub fn new(bus: UiEventBus) -> Self {
        Self {
            bus,
            request_timeout: None,
        }
    }

    /// Sets how long awaited requests wait for an answer (`None`: no limit).
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The bus underneath.
    pub fn bus(&self) -> &UiEventBus {
        &self.bus
    }

    /// Emits any display event.
    pub fn emit(&self, event: DisplayEvent) {
        self.bus.emit(event);
    }

    /// Shows a complete message.
    pub fn show_message(&self, message: ChatMessage) {
        self.bus.emit(DisplayEvent::Message {
            message,
            worker: None,
        });
    }

    /// Shows a status line.
    pub fn show_status(&self, level: StatusLevel, message: impl Into<String>) {
        self.bus.emit(DisplayEvent::Status {
            level,
            message: message.into(),
        });
    }

    /// Shows a piece of streamed model text; `done: true` closes the stream `request_id`.
    pub fn show_streaming(&self, request_id: &str, delta: &str, done: bool) {
        self.bus.emit(DisplayEvent::Streaming {
            request_id: request_id.to_owned(),
            delta: delta.to_owned(),
            done,
            worker: None,
        });
    }

    /// Emits `approvalRequired` and waits for the `approvalResponse` with the same request id.
    ///
    /// Any other action carrying that id ends the request with
    /// [`RequestError::UnexpectedResponse`]; callers treat every error as "not approved".
    pub async fn request_approval(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> Result<ApprovalResponse, RequestError> {
        let request_id = request.request_id.clone();
        let answer = self
            .bus
            .request(
                DisplayEvent::ApprovalRequired(request),
                &request_id,
                self.request_timeout,
                cancel,
            )
            .await?;
        match answer {
            ActionEvent::ApprovalResponse(response) => Ok(response),
            // Any other action carrying this request's id answers it wrongly.
            other => Err(RequestError::UnexpectedResponse {
                request_id,
                action: action_type_name(&other),
            }),
        }
    }

    /// Emits `inputRequired` (with a fresh `input-N` id) and waits for the `userInput` that
    /// answers it; returns its text.
    pub async fn get_user_input(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<String, RequestError> {
        let request_id = self.bus.next_request_id("input");
        let event = DisplayEvent::InputRequired {
            request_id: request_id.clone(),
            prompt: prompt.to_owned(),
            source: None,
            fields: Vec::new(),
        };
        let answer = self
            .bus
            .request(event, &request_id, self.request_timeout, cancel)
            .await?;
        match answer {
            ActionEvent::UserInput { content, .. } => Ok(content),
            // Any other action carrying this request's id answers it wrongly.
            other => Err(RequestError::UnexpectedResponse {
                request_id,
                action: action_type_name(&other),
            }),
        }
    }

    /// Emits `inputRequired` with a form (`fields`, and `source`: who asks) under a fresh
    /// `input-N` id, waits for its answer, then emits `inputResolved`. An `inputResponse`
    /// accepts (with its values), declines or cancels; a `userInput` accepts, its content read
    /// as the values (see [`answer_from_text`]). Cancellation (an interrupt) ends the question
    /// as [`FormAnswer::Cancelled`]; other failures are errors (and resolve it as `cancel`).
    pub async fn get_form_input(
        &self,
        prompt: &str,
        source: Option<&str>,
        fields: Vec<FormField>,
        cancel: &CancellationToken,
    ) -> Result<FormAnswer, RequestError> {
        let request_id = self.bus.next_request_id("input");
        let answer = self
            .bus
            .request(
                DisplayEvent::InputRequired {
                    request_id: request_id.clone(),
                    prompt: prompt.to_owned(),
                    source: source.map(str::to_owned),
                    fields: fields.clone(),
                },
                &request_id,
                self.request_timeout,
                cancel,
            )
            .await;
        let answer = match answer {
            Ok(ActionEvent::InputResponse { action, values, .. }) => Ok(match action {
                InputAction::Accept => FormAnswer::Accepted(values.unwrap_or_default()),
                InputAction::Decline => FormAnswer::Declined,
                InputAction::Cancel => FormAnswer::Cancelled,
            }),
            Ok(ActionEvent::UserInput { content, .. }) => {
                Ok(FormAnswer::Accepted(answer_from_text(&content, &fields)))
            }
            // Any other action carrying this request's id answers it wrongly.
            Ok(other) => Err(RequestError::UnexpectedResponse {
                request_id: request_id.clone(),
                action: action_type_name(&other),
            }),
            Err(RequestError::Cancelled) => Ok(FormAnswer::Cancelled),
            Err(e) => Err(e),
        };
        let action = match &answer {
            Ok(FormAnswer::Accepted(_)) => InputAction::Accept,
            Ok(FormAnswer::Declined) => InputAction::Decline,
            Ok(FormAnswer::Cancelled) | Err(_) => InputAction::Cancel,
        };
        // A request refused before it was asked (a duplicate id) was never shown.
        if !matches!(answer, Err(RequestError::DuplicateId(_))) {
            self.bus
                .emit(DisplayEvent::InputResolved { request_id, action });
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{InvokedBy, RememberScope, Risk, Role};
    use serde_json::json;

    fn approval_request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            request_id: id.to_owned(),
            tool_call_id: format!("call-{id}"),
            tool_name: "write_file".to_owned(),
            tool_kind: golem_protocol::ToolKind::Other,
            args: json!({"path": "/out/a.txt", "content": "hi"}),
            description: "Write file /out/a.txt".to_owned(),
            risk: Risk::Medium,
            preview: None,
            invoked_by: InvokedBy::Model,
            worker: None,
            fields: Vec::new(),
            editable: true,
        }
    }

    /// A fake UI: approves every call with a note, answers input prompts with the prompt
    /// reversed, and stops at `sessionEnded` (it holds a bus clone, so the bus never closes).
    fn spawn_fake_ui(bus: &UiEventBus) -> tokio::task::JoinHandle<Vec<DisplayEvent>> {
        let mut sub = bus.subscribe();
        let bus = bus.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(event) = sub.recv().await {
                if let DisplayEvent::ApprovalRequired(request) = &event {
                    bus.send_action(ActionEvent::ApprovalResponse(ApprovalResponse {
                        remember: RememberScope::Session,
                        note: Some(format!("ok {}", request.tool_name)),
                        ..ApprovalResponse::approve(&request.request_id)
                    }));
                } else if let DisplayEvent::InputRequired {
                    request_id, prompt, ..
                } = &event
                {
                    bus.send_action(ActionEvent::UserInput {
                        request_id: Some(request_id.clone()),
                        content: prompt.chars().rev().collect(),
                    });
                }
                let done = matches!(event, DisplayEvent::SessionEnded { .. });
                seen.push(event);
                if done {
                    break;
                }
            }
            seen
        })
    }

    #[tokio::test]
    async fn fire_and_forget_helpers_emit_events() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let ui = RuntimeUI::new(bus.clone());
        ui.show_message(ChatMessage {
            role: Role::Assistant,
            content: "Hello!".to_owned(),
        });
        ui.show_status(StatusLevel::Warning, "careful");
        ui.show_streaming("r1", "tok", false);
        ui.emit(DisplayEvent::InputRequired {
            request_id: "x".into(),
            prompt: "p".into(),
            source: None,
            fields: Vec::new(),
        });
        assert_eq!(
            sub.try_recv(),
            Some(DisplayEvent::Message {
                message: ChatMessage {
                    role: Role::Assistant,
                    content: "Hello!".to_owned()
                },
                worker: None,
            })
        );
        assert_eq!(
            sub.try_recv(),
            Some(DisplayEvent::Status {
                level: StatusLevel::Warning,
                message: "careful".into()
            })
        );
        assert_eq!(
            sub.try_recv(),
            Some(DisplayEvent::Streaming {
                request_id: "r1".into(),
                delta: "tok".into(),
                done: false,
                worker: None,
            })
        );
        assert!(sub.try_recv().is_some());
        assert_eq!(sub.try_recv(), None);
    }

    #[tokio::test]
    async fn request_approval_end_to_end() {
        let bus = UiEventBus::new();
        let fake = spawn_fake_ui(&bus);
        let ui = RuntimeUI::new(bus.clone());
        let cancel = CancellationToken::new();
        let id = bus.next_request_id("approval");
        let response = ui
            .request_approval(approval_request(&id), &cancel)
            .await
            .unwrap();
        assert_eq!(response.request_id, id);
        assert!(response.approved);
        assert_eq!(response.remember, RememberScope::Session);
        assert_eq!(response.note.as_deref(), Some("ok write_file"));
        assert_eq!(bus.pending_requests(), 0);
        ui.emit(DisplayEvent::SessionEnded {
            cost: None,
            reason: golem_protocol::SessionEndReason::Completed,
            message: None,
            usage: None,
        });
        let seen = fake.await.unwrap();
        assert_eq!(
            seen[0],
            DisplayEvent::ApprovalRequired(approval_request(&id))
        );
    }

    #[tokio::test]
    async fn get_user_input_end_to_end() {
        let bus = UiEventBus::new();
        let fake = spawn_fake_ui(&bus);
        let ui = RuntimeUI::new(bus.clone());
        let cancel = CancellationToken::new();
        assert_eq!(
            ui.get_user_input("abc", &cancel).await,
            Ok("cba".to_owned())
        );
        assert_eq!(ui.get_user_input("xy", &cancel).await, Ok("yx".to_owned()));
        let end = DisplayEvent::SessionEnded {
            cost: None,
            reason: golem_protocol::SessionEndReason::Completed,
            message: None,
            usage: None,
        };
        ui.emit(end.clone());
        let seen = fake.await.unwrap();
        assert_eq!(
            seen,
            vec![
                DisplayEvent::InputRequired {
                    request_id: "input-1".into(),
                    prompt: "abc".into(),
                    source: None,
                    fields: Vec::new(),
                },
                DisplayEvent::InputRequired {
                    request_id: "input-2".into(),
                    prompt: "xy".into(),
                    source: None,
                    fields: Vec::new(),
                },
                end,
            ]
        );
    }

    #[tokio::test]
    async fn wrong_action_type_is_an_error() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let ui_bus = bus.clone();
        tokio::spawn(async move {
            while let Some(event) = sub.recv().await {
                if let DisplayEvent::ApprovalRequired(request) = &event {
                    ui_bus.send_action(ActionEvent::UserInput {
                        request_id: Some(request.request_id.clone()),
                        content: "yes".into(),
                    });
                } else if let DisplayEvent::InputRequired { request_id, .. } = &event {
                    ui_bus.send_action(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
                        request_id,
                    )));
                }
            }
        });
        let ui = RuntimeUI::new(bus.clone());
        let cancel = CancellationToken::new();
        assert_eq!(
            ui.request_approval(approval_request("a-9"), &cancel).await,
            Err(RequestError::UnexpectedResponse {
                request_id: "a-9".into(),
                action: "userInput"
            })
        );
        assert_eq!(
            ui.get_user_input("name?", &cancel).await,
            Err(RequestError::UnexpectedResponse {
                request_id: "input-1".into(),
                action: "approvalResponse"
            })
        );
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn request_timeout_applies() {
        let bus = UiEventBus::new();
        let ui = RuntimeUI::new(bus.clone()).with_request_timeout(Some(Duration::from_secs(60)));
        let cancel = CancellationToken::new();
        // Nobody answers; paused time auto-advances to the deadline.
        assert_eq!(
            ui.request_approval(approval_request("a-1"), &cancel).await,
            Err(RequestError::Timeout(Duration::from_secs(60)))
        );
        assert_eq!(
            ui.get_user_input("?", &cancel).await,
            Err(RequestError::Timeout(Duration::from_secs(60)))
        );
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn cancellation_ends_awaited_requests() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let ui = RuntimeUI::new(bus.clone());
        let cancel = CancellationToken::new();
        let waiter = {
            let ui = ui.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { ui.get_user_input("?", &cancel).await })
        };
        assert!(sub.recv().await.is_some());
        cancel.cancel();
        assert_eq!(waiter.await.unwrap(), Err(RequestError::Cancelled));
        assert_eq!(bus.pending_requests(), 0);
    }
}
