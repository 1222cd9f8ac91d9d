//! The runtime's own overhead per tool-call turn: a zero-latency in-process model asks for one
//! pre-approved no-op tool call, then answers; one run = two model turns and one tool call,
//! with events flowing to one subscriber that drains them.
//!
//! `one_turn_through_the_host` measures one text turn from a front end's side of the session host
//! (the offline `test` model, a transcript written to disk).
//!
//! Run with `cargo bench -p golem-runtime --bench turn`.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "benchmark setup: a failure is a bug in the benchmark"
)]

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::approval::{ApprovalController, ApprovalMode, ApprovalRequirement};
use golem_core::bus::UiEventBus;
use golem_core::fn_tool::FnTool;
use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::ToolCallOrchestrator;
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_llm::{
    EventStream, FinishReason, Message, Model, ModelError, ModelRequest, ModelSpec, StreamEvent,
};
use golem_protocol::{TokenUsage, ToolResultValue};
use golem_runtime::runner::{RuntimeParts, WorkerRuntime};
use golem_runtime::tree::{TreeSlot, WorkerTree};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

/// Calls `noop` when the last message is the user's, answers otherwise.
struct ZeroLatencyModel(ModelSpec);

#[async_trait]
impl Model for ZeroLatencyModel {
    fn spec(&self) -> &ModelSpec {
        &self.0
    }
    async fn stream(
        &self,
        request: &ModelRequest,
        _cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let usage = StreamEvent::Usage {
            usage: TokenUsage {
                input_tokens: 100,
                output_tokens: 10,
                ..TokenUsage::default()
            },
        };
        let events = match request.messages.last() {
            Some(Message::User { .. }) => vec![
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "c1".into(),
                    name: "noop".into(),
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: r#"{"path": "/work/a.txt"}"#.into(),
                },
                StreamEvent::ToolCallEnd { index: 0 },
                usage,
                StreamEvent::Finish {
                    reason: FinishReason::ToolUse,
                },
            ],
            _ => vec![
                StreamEvent::TextDelta {
                    text: "Done.".into(),
                },
                usage,
                StreamEvent::Finish {
                    reason: FinishReason::EndTurn,
                },
            ],
        };
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }
}

#[divan::bench]
fn one_tool_call_run(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(
            FnTool::new(
                "noop",
                "does nothing",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                |_, _| async { Ok(ToolResultValue::text("ok")) },
            )
            .with_static_approval(ApprovalRequirement::PreApproved),
        ))
        .unwrap();
    let bus = UiEventBus::new();
    let mut events = bus.subscribe();
    let ui = RuntimeUI::new(bus);
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(registry),
        ApprovalController::new(ApprovalMode::Interactive),
        ui.clone(),
    );
    let mut runtime = WorkerRuntime::new(RuntimeParts {
        worker_name: "bench".into(),
        instructions: "Be quick.".into(),
        keeps_history: false,
        depth: 0,
        max_iterations: 5,
        context: golem_runtime::context_settings::ContextPolicy::default(),
        model: Arc::new(ZeroLatencyModel(ModelSpec {
            provider: "test".into(),
            model: "zero".into(),
        })),
        orchestrator,
        tree: TreeSlot::new(WorkerTree::new(ui.clone())),
        ui,
        interrupt: InterruptSignal::new(),
        observer: None,
    });
    bencher.bench_local(|| {
        rt.block_on(async {
            let outcome = runtime.run("go").await;
            while events.try_recv().is_some() {}
            divan::black_box(outcome)
        })
    });
}

/// One turn through the session host, as a front end sees it: `userInput` sent, `turnEnded`
/// read, with the offline `test` model answering in text, a transcript written to disk and
/// one attached front end reading every event.
#[divan::bench]
fn one_turn_through_the_host(bencher: divan::Bencher) {
    use golem_protocol::{ActionEvent, DisplayEvent};
    use golem_runtime::host::{HostOptions, HostWorker, SessionHost};

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("golem-forge.config.yaml"), "{}\n").unwrap();
    let worker = dir.path().join("main.worker");
    std::fs::write(
        &worker,
        "---\nname: main\ndescription: bench\nmodel: test:default\n---\nBe quick.\n",
    )
    .unwrap();
    let (mut ui, running) = rt.block_on(async {
        let host = SessionHost::open(HostOptions::new(HostWorker::File(worker))).unwrap();
        let ui = host.attach(true);
        (ui, host.start())
    });
    bencher.bench_local(|| {
        rt.block_on(async {
            ui.send(ActionEvent::UserInput {
                request_id: None,
                content: "go".into(),
            });
            while let Some(event) = ui.recv().await {
                if matches!(event, DisplayEvent::TurnEnded { .. }) {
                    return divan::black_box(event);
                }
            }
            unreachable!("the session ended")
        })
    });
    rt.block_on(async {
        ui.send(ActionEvent::EndSession { reason: None });
        running.closed().await;
    });
}
