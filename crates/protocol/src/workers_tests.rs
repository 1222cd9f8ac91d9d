//! Round trips of the live tree of workers and of budgets: ids on worker events and origins,
//! `workerProgress`, the remaining budget in `usage` and `sessionStatus`, and the
//! `budgetExceeded` outcome; events written before protocol 1.2 still read.

use serde_json::json;

use crate::roundtrip_tests::check;
use crate::{
    BudgetAmounts, BudgetStatus, DisplayEvent, SessionEndReason, TokenUsage, TurnStatus,
    WorkerOrigin, WorkerProgress,
};

fn tokens(input: u64, output: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: output,
        ..TokenUsage::default()
    }
}

#[test]
fn worker_events_carry_ids_and_budgets() {
    check(
        DisplayEvent::WorkerStarted {
            worker_id: "w2".into(),
            parent_id: Some("w1".into()),
            worker_name: "reviewer".into(),
            depth: 1,
            model: Some("test:default".into()),
            parent_tool_call_id: Some("call_1".into()),
            budget: Some(BudgetAmounts {
                tokens: Some(500),
                cost_usd: None,
                wall_seconds: Some(60.0),
                workers: Some(0),
            }),
            trace_context: None,
            trace_parent: None,
        },
        json!({"type": "workerStarted", "workerId": "w2", "parentId": "w1",
               "workerName": "reviewer", "depth": 1, "model": "test:default",
               "parentToolCallId": "call_1",
               "budget": {"tokens": 500, "wallSeconds": 60.0, "workers": 0}}),
    );
    check(
        DisplayEvent::WorkerStarted {
            worker_id: "w1".into(),
            parent_id: None,
            worker_name: "lead".into(),
            depth: 0,
            model: None,
            parent_tool_call_id: None,
            budget: None,
            trace_context: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            trace_parent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01".into()),
        },
        json!({"type": "workerStarted", "workerId": "w1", "workerName": "lead", "depth": 0,
               "traceContext": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
               "traceParent": "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"}),
    );
    check(
        DisplayEvent::WorkerFinished {
            worker_id: "w2".into(),
            worker_name: "reviewer".into(),
            depth: 1,
            success: true,
            duration_ms: 12,
            error: None,
            usage: Some(tokens(30, 4)),
            cost: Some(0.5),
        },
        json!({"type": "workerFinished", "workerId": "w2", "workerName": "reviewer",
               "depth": 1, "success": true, "durationMs": 12,
               "usage": {"inputTokens": 30, "outputTokens": 4}, "cost": 0.5}),
    );
}

#[test]
fn worker_progress() {
    check(
        DisplayEvent::WorkerProgress(WorkerProgress {
            worker_id: "w3".into(),
            parent_id: Some("w2".into()),
            worker_name: "writer".into(),
            depth: 2,
            model: Some("test:default".into()),
            usage: tokens(10, 2),
            cost: None,
            current_tool: Some("write_file".into()),
            awaiting_approval: true,
            budget: Some(BudgetAmounts {
                tokens: Some(88),
                ..BudgetAmounts::default()
            }),
        }),
        json!({"type": "workerProgress", "workerId": "w3", "parentId": "w2",
               "workerName": "writer", "depth": 2, "model": "test:default",
               "usage": {"inputTokens": 10, "outputTokens": 2},
               "currentTool": "write_file", "awaitingApproval": true,
               "budget": {"tokens": 88}}),
    );
}

#[test]
fn origins_and_usage_carry_the_worker_id_and_the_remaining_budget() {
    check(
        DisplayEvent::Usage {
            usage: tokens(10, 5),
            total: tokens(10, 5),
            model: None,
            cost: None,
            budget: Some(BudgetAmounts {
                tokens: Some(985),
                cost_usd: Some(0.25),
                ..BudgetAmounts::default()
            }),
            context: None,
            worker: Some(WorkerOrigin {
                name: "reviewer".into(),
                depth: 1,
                id: "w2".into(),
            }),
            call: None,
        },
        json!({"type": "usage",
               "usage": {"inputTokens": 10, "outputTokens": 5},
               "total": {"inputTokens": 10, "outputTokens": 5},
               "budget": {"tokens": 985, "costUsd": 0.25},
               "worker": {"name": "reviewer", "depth": 1, "id": "w2"}}),
    );
}

#[test]
fn budget_status_and_outcomes() {
    check(
        BudgetStatus {
            limits: BudgetAmounts {
                tokens: Some(1000),
                ..BudgetAmounts::default()
            },
            remaining: BudgetAmounts {
                tokens: Some(0),
                ..BudgetAmounts::default()
            },
        },
        json!({"limits": {"tokens": 1000}, "remaining": {"tokens": 0}}),
    );
    check(TurnStatus::BudgetExceeded, json!("budgetExceeded"));
    check(SessionEndReason::BudgetExceeded, json!("budgetExceeded"));
    assert!(BudgetAmounts::default().is_unlimited());
    assert!(
        !BudgetAmounts {
            workers: Some(0),
            ..BudgetAmounts::default()
        }
        .is_unlimited()
    );
}

#[test]
fn worker_events_of_protocol_1_1_still_read() {
    let started: DisplayEvent = serde_json::from_value(json!({"type": "workerStarted",
        "workerName": "summarizer", "depth": 1}))
    .unwrap();
    let DisplayEvent::WorkerStarted {
        worker_id,
        parent_id,
        budget,
        ..
    } = started
    else {
        panic!("not workerStarted: {started:?}");
    };
    assert_eq!((worker_id.as_str(), parent_id, budget), ("", None, None));
    let origin: WorkerOrigin =
        serde_json::from_value(json!({"name": "summarizer", "depth": 1})).unwrap();
    assert!(origin.id.is_empty());
}

#[test]
fn an_elision_reads_as_the_status_line_it_always_was() {
    assert_eq!(
        crate::workers::elision_line(71_000, 59_000, 100_000, 3, false),
        "context 71 % full: elided 3 old tool results (about 12000 tokens)"
    );
    assert_eq!(
        crate::workers::elision_line(8_500, 8_100, 10_000, 1, true),
        "context 85 % full and too little to compact: elided 1 more tool result (about 400 tokens)"
    );
}
