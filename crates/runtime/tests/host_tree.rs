//! The live tree of workers and the budget through the session host, with protocol messages
//! only: while an approval waits, `workerProgress` says which worker waits and for which tool;
//! `getStatus` carries the budget per turn and what is left, before, during and after a turn;
//! a new session forgets what the last turn left.

use golem_protocol::{ActionEvent, BudgetAmounts, DisplayEvent};
use golem_runtime::budget::BudgetLimits;
use golem_runtime::host::HostOptions;
use golem_testkit::openai;
use serde_json::json;

use crate::scenario::Scenario;

fn tokens(n: u64) -> BudgetAmounts {
    BudgetAmounts {
        tokens: Some(n),
        ..BudgetAmounts::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_shows_who_waits_and_the_status_shows_the_budget() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "hi\n"}),
        )]),
        openai::text("Saved it."),
    ])
    .ask_to_create()
    .build()
    .await;
    let options = HostOptions {
        budget: BudgetLimits {
            tokens: Some(1000),
            ..BudgetLimits::default()
        },
        ..program.options()
    };
    let mut s = program.start_with(options, true);

    let before = s.status().await;
    let budget = before.budget.expect("the turn has a budget");
    assert_eq!(
        (budget.limits, budget.remaining),
        (tokens(1000), tokens(1000))
    );

    s.input("save a note");
    let (asked, seen) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalRequired(_)))
        .await;
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    // Marked as waiting as the request goes out.
    let waiting = seen
        .iter()
        .rev()
        .find_map(|e| match e {
            DisplayEvent::WorkerProgress(p) => Some(p.clone()),
            _ => None,
        })
        .expect("workerProgress before the request");
    assert!(waiting.awaiting_approval, "{waiting:?}");
    assert_eq!(waiting.worker_name, "main");
    assert_eq!(waiting.depth, 0);
    assert_eq!(waiting.current_tool.as_deref(), Some("write_file"));
    assert_eq!(waiting.budget, Some(tokens(985)));
    let started = seen
        .iter()
        .find_map(|e| match e {
            DisplayEvent::WorkerStarted { worker_id, .. } => Some(worker_id.clone()),
            _ => None,
        })
        .expect("workerStarted");
    assert_eq!(waiting.worker_id, started);

    let during = s.status().await;
    assert_eq!(during.budget.map(|b| b.remaining), Some(tokens(985)));

    s.approve(&request.request_id);
    let (_, after_answer) = s
        .until(|e| matches!(e, DisplayEvent::ToolResult { .. }))
        .await;
    let (_, _) = s
        .until(|e| {
            matches!(e, DisplayEvent::WorkerProgress(p) if !p.awaiting_approval && p.current_tool.is_none())
        })
        .await;
    assert!(
        after_answer.iter().any(|e| matches!(
            e,
            DisplayEvent::WorkerProgress(p) if !p.awaiting_approval
        )),
        "the wait ends with the answer: {after_answer:#?}"
    );
    s.turn_ended().await;

    let after = s.status().await;
    assert_eq!(
        after.budget.map(|b| b.remaining),
        Some(tokens(970)),
        "what the last turn left"
    );
    s.send(ActionEvent::NewSession { request_id: None });
    s.action_result().await;
    let fresh = s.status().await;
    assert_eq!(fresh.budget.map(|b| b.remaining), Some(tokens(1000)));

    s.end_with(None).await;
    s.closed().await;
}
