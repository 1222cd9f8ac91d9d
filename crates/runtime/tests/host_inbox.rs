//! Parked calls through the session host (approval mode `defer`): the notify command at once,
//! parking again before an answer, and the same session going on once the call is answered in
//! the inbox.

use std::time::Duration;

use golem_protocol::{ActionEvent, DisplayEvent, RememberScope, TurnStatus};
use golem_runtime::host::HostOptions;
use golem_testkit::openai;
use serde_json::json;

use crate::host::write_call;
use crate::scenario::{Program, Scenario, WAIT};
/// `options` of `program` in the `defer` approval mode.
fn deferring(program: &Program) -> HostOptions {
    HostOptions {
        approval: Some(golem_core::approval::ApprovalMode::Defer),
        keeps_history: true,
        ..program.options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_call_notifies_at_once_and_continues_in_the_same_session_once_answered() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[
            ("call_1", "read_file", json!({"path": "/out/missing.txt"})),
            ("call_2", "write_file", write_call("parked\n")),
        ]),
        openai::text("Written after the answer."),
    ])
    .ask_to_create()
    .build()
    .await;
    // Parked calls nudge at once, whatever `after_seconds` says.
    let log = program.path("notified.txt");
    program.append_config(&format!(
        "notify:\n  command: [sh, -c, 'echo \"$GOLEM_FORGE_TOOL $GOLEM_FORGE_INBOX_ID\" >> {}']\n  after_seconds: 3600\n",
        log.display()
    ));
    let mut s = program.start_with(deferring(&program), true);
    s.input("write it");
    let (ended, seen) = s.turn_ended().await;
    assert!(
        matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::WaitingApproval, error: Some(e), .. } if e.contains("entry 1")),
        "{ended:?}"
    );
    assert!(
        seen.iter().any(|e| matches!(e, DisplayEvent::ApprovalDeferred { inbox_id: Some(1), request } if request.tool_call_id == "call_2")),
        "{seen:#?}"
    );
    // The other call of the message was settled; nothing went back to the model.
    assert!(seen.iter().any(
        |e| matches!(e, DisplayEvent::ToolResult { tool_call_id, .. } if tool_call_id == "call_1")
    ));
    assert_eq!(program.server.requests().len(), 1);
    let deadline = std::time::Instant::now() + WAIT;
    while std::fs::read_to_string(&log).unwrap_or_default() != "write_file 1\n" {
        assert!(
            std::time::Instant::now() < deadline,
            "no nudge for the parked call"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Continuing before an answer parks it again, under the same number, without a model call.
    s.send(ActionEvent::ContinueTurn {});
    let (ended, seen) = s.turn_ended().await;
    assert!(matches!(
        ended,
        DisplayEvent::TurnEnded {
            status: TurnStatus::WaitingApproval,
            ..
        }
    ));
    assert!(seen.iter().any(|e| matches!(
        e,
        DisplayEvent::ApprovalDeferred {
            inbox_id: Some(1),
            ..
        }
    )));
    assert_eq!(program.server.requests().len(), 1);

    // Answered in the inbox (by another process), the same session goes on.
    let inbox = golem_runtime::inbox::InboxStore::new(program.dir.path());
    inbox.answer(1, true, RememberScope::None, None).unwrap();
    s.send(ActionEvent::ContinueTurn {});
    let (ended, seen) = s.turn_ended().await;
    assert!(
        matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::Completed, response: Some(r), .. } if r == "Written after the answer."),
        "{ended:?}"
    );
    assert!(seen.iter().any(|e| matches!(e, DisplayEvent::ApprovalResolved(r) if r.tool_call_id == "call_2" && r.approved && r.decided_by == golem_protocol::DecidedBy::User)));
    assert_eq!(
        std::fs::read_to_string(program.path("out/a.txt")).unwrap(),
        "parked\n"
    );
    // Both results of the parked message reach the model, in the order of its calls.
    let second = program.server.requests()[1].body.to_string();
    let (one, two) = (
        second.find("call_1").unwrap(),
        second.find("call_2").unwrap(),
    );
    assert!(one < two, "{second}");
    assert!(
        inbox.list().unwrap().is_empty(),
        "the settled entry is gone"
    );
    // Nothing waits any more.
    s.send(ActionEvent::ContinueTurn {});
    let (ended, _) = s.turn_ended().await;
    assert!(
        matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::Failed, error: Some(e), .. } if e.contains("nothing to continue")),
        "{ended:?}"
    );
    s.end().await;
}
