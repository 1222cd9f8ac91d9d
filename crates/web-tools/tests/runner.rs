//! The web toolset through the real orchestrator, against HTTP servers the tests start on
//! `127.0.0.1` (`server.rs`) and never any other address: `web_fetch`'s approval by `allow`,
//! its refusals of private addresses (IP literals in every notation, `localhost`, redirects),
//! its limits and its results (`fetch.rs`); `web_search` against a fake of each backend's API
//! (`search.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

mod fetch;
mod search;
mod server;

use std::sync::{Arc, Mutex};

use golem_core::approval::{ApprovalCallback, ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, ApprovalResponse, ToolError};
use golem_web_tools::{HostPattern, PrivateHost, WebToolsetConfig, web_tools};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The web tools behind an orchestrator whose prompt records each request and answers it.
pub struct Env {
    orchestrator: ToolCallOrchestrator,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Env {
    /// Prompts are denied.
    pub fn new(config: WebToolsetConfig) -> Env {
        Env::answering(config, None, false)
    }

    /// Prompts are denied; `key` is the search backend's API key.
    pub fn with_key(config: WebToolsetConfig, key: Option<&str>) -> Env {
        Env::answering(config, key, false)
    }

    /// Prompts are approved.
    pub fn approving(config: WebToolsetConfig) -> Env {
        Env::answering(config, None, true)
    }

    fn answering(config: WebToolsetConfig, key: Option<&str>, approve: bool) -> Env {
        let mut registry = ToolRegistry::new();
        for tool in web_tools(&config, key.map(str::to_owned)).unwrap() {
            registry.register(tool).unwrap();
        }
        let asked = Arc::new(Mutex::new(Vec::new()));
        let callback: ApprovalCallback = {
            let asked = asked.clone();
            Arc::new(move |request: ApprovalRequest, _cancel| {
                let response = if approve {
                    ApprovalResponse::approve(&request.request_id)
                } else {
                    ApprovalResponse::deny(&request.request_id, None)
                };
                asked.lock().unwrap().push(request);
                Box::pin(async move { Ok(response) })
            })
        };
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        Env {
            orchestrator: ToolCallOrchestrator::new(
                Arc::new(registry),
                controller,
                RuntimeUI::new(UiEventBus::new()),
            ),
            asked,
        }
    }

    /// A model's call of `tool`.
    pub async fn call(&self, tool: &str, args: Value) -> CallOutcome {
        self.call_with(tool, args, &CancellationToken::new()).await
    }

    /// A model's call of `tool` that `cancel` may interrupt.
    pub async fn call_with(
        &self,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        self.orchestrator
            .call(ToolCall::from_model("c1", tool, args), cancel)
            .await
    }

    /// The approval requests so far.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }
}

/// Options with `allow` and `private_hosts` as written.
pub fn options(allow: &[String], private: &[&str]) -> WebToolsetConfig {
    WebToolsetConfig {
        allow: allow
            .iter()
            .map(|a| HostPattern::parse(a).unwrap())
            .collect(),
        private_hosts: private
            .iter()
            .map(|p| PrivateHost::parse(p).unwrap())
            .collect(),
        ..WebToolsetConfig::default()
    }
}

/// The error of a call that must have failed.
pub fn error_of(outcome: &CallOutcome) -> ToolError {
    outcome
        .error
        .clone()
        .unwrap_or_else(|| panic!("succeeded: {:?}", outcome.value))
}
