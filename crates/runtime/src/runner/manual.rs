//! What an interactive front end does to a running conversation besides sending input: run a
//! tool the user invoked (through the same orchestrator and approval path as the model's
//! calls, marked `invokedBy: user`, and told to the model as part of the conversation), switch
//! the model, and look at the tools and approvals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use golem_core::approval::ApprovalController;
use golem_core::orchestrator::{CallOutcome, ToolCall};
use golem_core::registry::ToolRegistry;
use golem_llm::{Message, Model};
use golem_protocol::ToolStatus;
use serde_json::Value;

use super::WorkerRuntime;

/// Longest result text copied into the conversation for a manual call.
const MAX_NOTE_CHARS: usize = 20_000;

impl WorkerRuntime {
    /// Replaces the model (a chat's `/model NAME`); the conversation is kept.
    pub fn set_model(&mut self, model: Arc<dyn Model>) {
        self.parts.model = model;
    }

    /// The worker's tools.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.parts.orchestrator.registry()
    }

    /// The approval controller (and its session memory).
    pub fn controller(&self) -> &ApprovalController {
        self.parts.orchestrator.controller()
    }

    /// The worker's name.
    pub fn worker_name(&self) -> &str {
        &self.parts.worker_name
    }

    /// Runs `name(args)` for the user: validated, approved and executed like a model's call,
    /// recorded in the transcript, and added to the conversation (when it is kept) so the
    /// model knows what the user did and saw.
    pub async fn invoke_manual(&mut self, name: &str, args: Value) -> CallOutcome {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = format!("user_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.invoke_manual_as(id, name, args).await
    }

    /// [`WorkerRuntime::invoke_manual`] with the call id `id` (a `manualToolInvoke`'s
    /// `requestId`, so the front end can tell its `toolResult`).
    pub async fn invoke_manual_as(&mut self, id: String, name: &str, args: Value) -> CallOutcome {
        self.parts.interrupt.reset();
        let cancel = self.parts.interrupt.token();
        let outcome = self
            .parts
            .orchestrator
            .call(ToolCall::from_user(id, name, args.clone()), &cancel)
            .await;
        if let Some(observer) = &self.parts.observer {
            observer.tool_call(&outcome);
        }
        self.add_note(&manual_call_note(name, &args, &outcome));
        outcome
    }
}

impl WorkerRuntime {
    /// Tells the model something the user did outside a turn (a tool they ran, a turn's file
    /// changes undone): a user message in the conversation, when it is kept, and so in the
    /// transcript.
    pub fn add_note(&mut self, note: &str) {
        if self.parts.keeps_history {
            let message = Message::user(note);
            if let Some(observer) = self.root_observer() {
                observer.message(&message);
            }
            self.history.push(message);
        }
    }
}

/// How a manual call is told to the model.
fn manual_call_note(name: &str, args: &Value, outcome: &CallOutcome) -> String {
    let status = match outcome.status {
        ToolStatus::Success => "it succeeded",
        ToolStatus::Error => "it failed",
        ToolStatus::Denied => "it was denied",
        ToolStatus::Blocked => "it was blocked",
        ToolStatus::Interrupted => "it was interrupted",
    };
    let mut result = outcome.model_text();
    if result.chars().count() > MAX_NOTE_CHARS {
        result = result.chars().take(MAX_NOTE_CHARS).collect::<String>() + "\n[… cut]";
    }
    format!("[The user ran the tool `{name}` with {args}; {status}. Result:]\n{result}")
}
