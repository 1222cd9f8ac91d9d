//! The live tree of workers and the budget through the session host, with protocol messages
//! only: while an approval waits, `workerProgress` says which worker waits and for which tool;
//! `getStatus` carries the budget per turn and what is left, before, during and after a turn;
//! a new session forgets what the last turn left.

use golem_protocol::{ActionEvent, ApprovalResponse, BudgetAmounts, DisplayEvent};
use golem_runtime::budget::BudgetLimits;
use golem_runtime::host::{Attachment, HostOptions, SessionHost};
use golem_testkit::mock::MockServer;
use golem_testkit::openai;
use serde_json::json;

use crate::host::{options, program, until};

async fn status(ui: &mut Attachment) -> golem_protocol::SessionStatus {
    ui.send(ActionEvent::GetStatus { request_id: None });
    match until(ui, |e| matches!(e, DisplayEvent::SessionStatus(_)))
        .await
        .0
    {
        DisplayEvent::SessionStatus(status) => status,
        _ => unreachable!(),
    }
}

fn tokens(n: u64) -> BudgetAmounts {
    BudgetAmounts {
        tokens: Some(n),
        ..BudgetAmounts::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_shows_who_waits_and_the_status_shows_the_budget() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "hi\n"}),
        )]),
        openai::text("Saved it."),
    ])
    .await;
    let (_dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(HostOptions {
        budget: BudgetLimits {
            tokens: Some(1000),
            ..BudgetLimits::default()
        },
        ..options(&worker)
    })
    .unwrap();
    let mut ui = host.attach(true);
    let running = host.start();

    let before = status(&mut ui).await;
    let budget = before.budget.expect("the turn has a budget");
    assert_eq!(
        (budget.limits, budget.remaining),
        (tokens(1000), tokens(1000))
    );

    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save a note".into(),
    });
    let (asked, seen) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
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

    let during = status(&mut ui).await;
    assert_eq!(during.budget.map(|b| b.remaining), Some(tokens(985)));

    ui.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
        request.request_id,
    )));
    let (_, after_answer) = until(&mut ui, |e| matches!(e, DisplayEvent::ToolResult { .. })).await;
    let (_, _) = until(&mut ui, |e| {
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
    until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;

    let after = status(&mut ui).await;
    assert_eq!(
        after.budget.map(|b| b.remaining),
        Some(tokens(970)),
        "what the last turn left"
    );
    ui.send(ActionEvent::NewSession { request_id: None });
    until(&mut ui, |e| matches!(e, DisplayEvent::ActionResult(_))).await;
    let fresh = status(&mut ui).await;
    assert_eq!(fresh.budget.map(|b| b.remaining), Some(tokens(1000)));

    ui.send(ActionEvent::EndSession { reason: None });
    until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
    running.closed().await;
}
