//! Benchmarks of the hot path: one pre-approved no-op tool call through the whole orchestrator
//! (lookup → validate → approve → execute → events), its parts, and event-bus publishing.
//!
//! Run with `cargo bench -p golem-core --bench hot_path`.

#![allow(
    clippy::expect_used,
    reason = "benchmark setup: a failure is a bug in the benchmark"
)]

use std::sync::Arc;

use golem_core::approval::{ApprovalController, ApprovalMode, ApprovalRequirement};
use golem_core::bus::UiEventBus;
use golem_core::fn_tool::FnTool;
use golem_core::orchestrator::{ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{DisplayEvent, StatusLevel, ToolResultValue};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    let noop = FnTool::new(
        "noop",
        "does nothing",
        json!({"type": "object", "properties": {"path": {"type": "string"},
               "count": {"type": "integer", "minimum": 0}},
               "required": ["path"], "additionalProperties": false}),
        |_, _| async { Ok(ToolResultValue::text("ok")) },
    )
    .with_static_approval(ApprovalRequirement::PreApproved);
    registry
        .register(Arc::new(noop))
        .expect("bench tool registers");
    Arc::new(registry)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A whole pre-approved no-op call, with one UI subscriber draining events.
#[divan::bench]
fn orchestrated_preapproved_noop_call(bencher: divan::Bencher) {
    let rt = runtime();
    let bus = UiEventBus::new();
    let mut events = bus.subscribe();
    let orchestrator = ToolCallOrchestrator::new(
        registry(),
        ApprovalController::new(ApprovalMode::Interactive),
        RuntimeUI::new(bus),
    );
    let cancel = CancellationToken::new();
    let args = json!({"path": "/work/a.txt", "count": 3});
    bencher.bench_local(|| {
        rt.block_on(async {
            let outcome = orchestrator
                .call(ToolCall::from_model("c1", "noop", args.clone()), &cancel)
                .await;
            while events.try_recv().is_some() {}
            divan::black_box(outcome)
        })
    });
}

/// Argument validation alone (compiled schema).
#[divan::bench]
fn validate_arguments(bencher: divan::Bencher) {
    let registry = registry();
    let args = json!({"path": "/work/a.txt", "count": 3});
    bencher.bench_local(|| divan::black_box(registry.validate("noop", &args)));
}

/// Publishing one display event with no subscriber.
#[divan::bench]
fn bus_emit_no_subscriber(bencher: divan::Bencher) {
    let bus = UiEventBus::new();
    bencher.bench_local(|| {
        bus.emit(DisplayEvent::Status {
            level: StatusLevel::Info,
            message: String::new(),
        })
    });
}

/// Publishing one streaming event to one subscriber that drains it.
#[divan::bench]
fn bus_emit_and_receive_one_subscriber(bencher: divan::Bencher) {
    let bus = UiEventBus::new();
    let mut sub = bus.subscribe();
    bencher.bench_local(|| {
        bus.emit(DisplayEvent::Streaming {
            request_id: String::new(),
            delta: String::new(),
            done: false,
            worker: None,
        });
        divan::black_box(sub.try_recv())
    });
}
