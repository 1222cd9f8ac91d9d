//! The approval mode switched during a session (`setApprovalMode`): the next call is decided
//! by the new mode, the status says which mode is in force, and the switch is answered.

use golem_protocol::{
    ActionEvent, ApprovalMode, DecidedBy, DisplayEvent, SessionAction, ToolStatus,
};

use crate::host::write_call;
use crate::scenario::Scenario;
use golem_testkit::openai;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switched_mode_decides_the_next_call_and_the_status_says_so() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("one\n"))]),
        openai::text("Denied."),
        openai::tool_calls(&[("call_2", "write_file", write_call("two\n"))]),
        openai::text("Written."),
    ])
    .ask_to_create()
    .build()
    .await;
    let mut options = program.options();
    options.approval = Some(ApprovalMode::AutoDeny);
    let mut s = program.start_with(options, false);

    s.input("save one");
    let (result, _) = s
        .until(|e| matches!(e, DisplayEvent::ToolResult { .. }))
        .await;
    assert!(
        matches!(
            result,
            DisplayEvent::ToolResult {
                status: ToolStatus::Denied,
                ..
            }
        ),
        "{result:?}"
    );
    s.until(|e| matches!(e, DisplayEvent::TurnEnded { .. }))
        .await;

    s.send(ActionEvent::SetApprovalMode {
        request_id: Some("m".into()),
        mode: ApprovalMode::ApproveAll,
    });
    let (answer, _) = s
        .until(|e| matches!(e, DisplayEvent::ActionResult(_)))
        .await;
    let DisplayEvent::ActionResult(answer) = answer else {
        unreachable!()
    };
    assert_eq!(answer.action, SessionAction::SetApprovalMode);
    assert_eq!(answer.request_id.as_deref(), Some("m"));
    assert!(answer.ok, "{answer:?}");

    s.send(ActionEvent::GetStatus { request_id: None });
    let (status, _) = s
        .until(|e| matches!(e, DisplayEvent::SessionStatus(_)))
        .await;
    let DisplayEvent::SessionStatus(status) = status else {
        unreachable!()
    };
    assert_eq!(status.approval_mode, Some(ApprovalMode::ApproveAll));

    s.input("save two");
    let (resolved, _) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalResolved(_)))
        .await;
    let DisplayEvent::ApprovalResolved(resolved) = resolved else {
        unreachable!()
    };
    assert!(resolved.approved, "{resolved:?}");
    assert_eq!(resolved.decided_by, DecidedBy::Mode);
    s.until(|e| matches!(e, DisplayEvent::TurnEnded { .. }))
        .await;
    assert_eq!(
        std::fs::read_to_string(program.path("out/a.txt")).unwrap(),
        "two\n"
    );
    s.end().await;
}
