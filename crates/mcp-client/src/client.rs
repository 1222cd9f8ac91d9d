//! The MCP client's handler for one server: it always declares the elicitation capability
//! (form mode, with schema validation), so that tools a server offers only to clients that
//! can ask the user are listed, and it answers a server's elicitation request by asking the
//! user through the tool call in progress on that server ([`AskSlot`], held by
//! `McpTool::execute` for the duration of the call). The requested schema becomes the form's
//! fields (`golem_core::input`, which also types and checks the values against it). Declined
//! on the user's behalf: a request while no front end can answer (a headless run) or outside a
//! call, and every URL-mode request (we open no browser for a server).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use golem_core::input::{FormAnswer, InputRequester};
use golem_core::tool::ToolContext;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, FormElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Who can answer a question of the server now: the requester and interrupt of the call in
/// progress, if there is one.
#[derive(Default, Clone)]
struct Asker {
    requester: Option<InputRequester>,
    cancel: CancellationToken,
}

/// The call in progress on one server, shared by its tools and its client handler.
#[derive(Default, Clone)]
pub struct AskSlot {
    current: Arc<Mutex<Vec<(u64, Asker)>>>,
    next: Arc<std::sync::atomic::AtomicU64>,
}

/// Holds a call's requester in its server's slot; dropped when the call ends.
pub struct Holding {
    slot: AskSlot,
    id: u64,
}

impl Drop for Holding {
    fn drop(&mut self) {
        let id = self.id;
        self.slot.lock().retain(|(held, _)| *held != id);
    }
}

impl AskSlot {
    fn lock(&self) -> MutexGuard<'_, Vec<(u64, Asker)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts the call of `ctx` in the slot until the returned guard is dropped. With calls
    /// overlapping on one server, the latest one answers.
    pub fn hold(&self, ctx: &ToolContext) -> Holding {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push((
            id,
            Asker {
                requester: ctx.input.clone(),
                cancel: ctx.cancel.clone(),
            },
        ));
        Holding {
            slot: self.clone(),
            id,
        }
    }

    /// The call that answers a question now, if any.
    fn current(&self) -> Option<Asker> {
        self.lock().last().map(|(_, asker)| asker.clone())
    }
}

/// The handler of one server's connection.
pub struct Client {
    /// Who asks, as the user sees it: "MCP server `name`".
    source: String,
    slot: AskSlot,
}

impl Client {
    /// The handler of the server `name`, answering through `slot`.
    pub fn new(name: &str, slot: AskSlot) -> Client {
        Client {
            source: format!("MCP server `{name}`"),
            slot,
        }
    }

    /// The answer to a form request: the user's, or a decline when nobody can answer.
    async fn ask_form(&self, message: &str, schema: Value) -> ElicitResult {
        let Some(Asker {
            requester: Some(requester),
            cancel,
        }) = self.slot.current()
        else {
            tracing::debug!(source = %self.source, "elicitation declined: no one can answer");
            return ElicitResult::new(ElicitationAction::Decline);
        };
        match requester.ask(message, &self.source, &schema, &cancel).await {
            FormAnswer::Accepted(values) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(values))
            }
            FormAnswer::Declined => ElicitResult::new(ElicitationAction::Decline),
            FormAnswer::Cancelled => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

/// What we tell every server: the elicitation capability in form mode, with the values
/// checked against the requested schema before they are sent.
fn client_config() -> ClientConfig {
    let mut config = ClientConfig::default();
    config.capabilities.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::new().with_schema_validation(true)),
    );
    config
}

impl ClientHandler for Client {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(&requested_schema).map_err(|e| {
                    ErrorData::internal_error(format!("the requested schema: {e}"), None)
                })?;
                Ok(self.ask_form(&message, schema).await)
            }
            ElicitRequestParams::UrlElicitationParams { .. } => {
                tracing::debug!(source = %self.source, "URL elicitation declined");
                Ok(ElicitResult::new(ElicitationAction::Decline))
            }
            // A mode this client does not know (the enum is non-exhaustive).
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }

    fn get_info(&self) -> ClientConfig {
        client_config()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_capability_is_always_declared() {
        let config = serde_json::to_value(Client::new("x", AskSlot::default()).get_info())
            .unwrap_or_default();
        assert_eq!(
            config["capabilities"]["elicitation"],
            serde_json::json!({"form": {"schemaValidation": true}})
        );
    }

    #[tokio::test]
    async fn without_a_call_or_a_front_end_the_server_is_declined() {
        let slot = AskSlot::default();
        let client = Client::new("x", slot.clone());
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let answer = client.ask_form("?", schema.clone()).await;
        assert_eq!(answer.action, ElicitationAction::Decline);
        // A headless call: held, but with no requester.
        let held = slot.hold(&ToolContext::for_model("c1"));
        assert_eq!(
            client.ask_form("?", schema.clone()).await.action,
            ElicitationAction::Decline
        );
        drop(held);
        assert!(slot.current().is_none());
    }
}
