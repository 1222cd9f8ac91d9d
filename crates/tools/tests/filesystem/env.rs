//! The test environment: a temporary worker directory with four zones, a sandbox over them,
//! the filesystem tools in a registry, and an orchestrator whose approval callback records
//! every request and answers as told.
//!
//! | zone | mode | create | write | delete |
//! | --- | --- | --- | --- | --- |
//! | `input` | ro | ask | ask | ask |
//! | `scratch` | rw | (write) | preApproved | preApproved |
//! | `output` | rw | preApproved | ask | blocked |
//! | `docs` | rw | ask | ask | ask |

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use golem_core::approval::{
    ApprovalCallback, ApprovalController, ApprovalDecisionType, ApprovalMode,
};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{
    ApprovalRequest, ApprovalResponse, ToolErrorCode, ToolResultValue, ToolStatus,
};
use golem_sandbox::{Sandbox, ZoneApproval, ZoneConfig, ZoneMode};
use golem_tools::filesystem::{FilesystemLimits, filesystem_tools_with};
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// What the approval callback does besides answering.
pub type OnAsk = Arc<dyn Fn(&ApprovalRequest) + Send + Sync>;

/// A sandbox with four zones and the filesystem tools behind an orchestrator.
pub struct Env {
    /// The worker directory; zones are its subdirectories.
    pub dir: TempDir,
    orchestrator: ToolCallOrchestrator,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
    approve: Arc<Mutex<bool>>,
    modify: Arc<Mutex<Option<Value>>>,
    on_ask: Arc<Mutex<Option<OnAsk>>>,
    calls: AtomicUsize,
}

fn approval(create: Option<&str>, write: &str, delete: &str) -> ZoneApproval {
    let decision = |s: &str| -> ApprovalDecisionType {
        serde_json::from_value(Value::String(s.to_owned())).unwrap()
    };
    ZoneApproval {
        create: create.map(decision),
        write: decision(write),
        delete: decision(delete),
    }
}

impl Env {
    /// The environment with the default limits.
    pub fn new() -> Env {
        Env::with_limits(FilesystemLimits::default())
    }

    /// The environment with custom limits.
    pub fn with_limits(limits: FilesystemLimits) -> Env {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("input/sub")).unwrap();
        fs::write(dir.path().join("input/notes.txt"), "one\ntwo\nthree\n").unwrap();
        fs::write(dir.path().join("input/sub/deep.md"), "# deep\n").unwrap();
        let zones = vec![
            ZoneConfig::new("input", ZoneMode::Ro),
            ZoneConfig::new("scratch", ZoneMode::Rw).with_approval(approval(
                None,
                "preApproved",
                "preApproved",
            )),
            ZoneConfig::new("output", ZoneMode::Rw).with_approval(approval(
                Some("preApproved"),
                "ask",
                "blocked",
            )),
            ZoneConfig::new("docs", ZoneMode::Rw),
        ];
        let sandbox = Sandbox::open(dir.path(), &zones).unwrap();
        let mut registry = ToolRegistry::new();
        for tool in filesystem_tools_with(sandbox, limits) {
            registry.register(tool).unwrap();
        }
        let asked = Arc::new(Mutex::new(Vec::new()));
        let approve = Arc::new(Mutex::new(true));
        let modify: Arc<Mutex<Option<Value>>> = Arc::new(Mutex::new(None));
        let on_ask: Arc<Mutex<Option<OnAsk>>> = Arc::new(Mutex::new(None));
        let callback: ApprovalCallback = {
            let (asked, approve, modify, on_ask) = (
                asked.clone(),
                approve.clone(),
                modify.clone(),
                on_ask.clone(),
            );
            Arc::new(move |request: ApprovalRequest, _cancel| {
                if let Some(hook) = on_ask.lock().unwrap().as_ref() {
                    hook(&request);
                }
                let response = if *approve.lock().unwrap() {
                    ApprovalResponse {
                        modified_args: modify.lock().unwrap().clone(),
                        ..ApprovalResponse::approve(&request.request_id)
                    }
                } else {
                    ApprovalResponse::deny(&request.request_id, Some("not now".to_owned()))
                };
                asked.lock().unwrap().push(request);
                Box::pin(async move { Ok(response) })
            })
        };
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        let orchestrator = ToolCallOrchestrator::new(
            Arc::new(registry),
            controller,
            RuntimeUI::new(UiEventBus::new()),
        );
        Env {
            dir,
            orchestrator,
            asked,
            approve,
            modify,
            on_ask,
            calls: AtomicUsize::new(0),
        }
    }

    /// Runs one model call through the orchestrator.
    pub async fn call(&self, tool: &str, args: Value) -> CallOutcome {
        let id = format!("call-{}", self.calls.fetch_add(1, Ordering::SeqCst));
        self.orchestrator
            .call(
                ToolCall::from_model(id, tool, args),
                &CancellationToken::new(),
            )
            .await
    }

    /// Runs a call that must succeed and returns its value.
    pub async fn ok(&self, tool: &str, args: Value) -> ToolResultValue {
        let outcome = self.call(tool, args).await;
        assert_eq!(
            outcome.status,
            ToolStatus::Success,
            "{tool} failed: {:?}",
            outcome.error
        );
        outcome.value
    }

    /// Runs a call that must fail with `code` and returns its message.
    pub async fn err(&self, tool: &str, args: Value, code: ToolErrorCode) -> String {
        let outcome = self.call(tool, args).await;
        let error = outcome
            .error
            .unwrap_or_else(|| panic!("{tool} succeeded: {:?}", outcome.value));
        assert_eq!(error.code, code, "{tool}: {}", error.message);
        error.message
    }

    /// Whether approvals are granted (the default) or denied.
    pub fn set_approve(&self, approve: bool) {
        *self.approve.lock().unwrap() = approve;
    }

    /// Approves with these arguments instead of the proposed ones.
    pub fn set_modified_args(&self, args: Value) {
        *self.modify.lock().unwrap() = Some(args);
    }

    /// Runs `hook` inside the approval callback, before it answers.
    pub fn on_ask(&self, hook: OnAsk) {
        *self.on_ask.lock().unwrap() = Some(hook);
    }

    /// The approval requests made so far.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }

    /// The host path of `rel` in the worker directory.
    pub fn host(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a host file (creating parents).
    pub fn put(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.host(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// Reads a host file as text.
    pub fn text(&self, rel: &str) -> String {
        fs::read_to_string(self.host(rel)).unwrap()
    }

    /// The names in a host directory, sorted.
    pub fn names(&self, rel: &str) -> Vec<String> {
        names(&self.host(rel))
    }
}

/// The names in a directory, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
