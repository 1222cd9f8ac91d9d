//! Wire-shape tests of the session actions (protocol 1.1) and their answers: each serializes to
//! the exact JSON documented in docs/protocol.md and reads back to the same value.

use serde_json::json;

use crate::approval::ApprovalMode;
use crate::events::*;
use crate::roundtrip_tests::check;
use crate::session::*;
use crate::workers::{CompactionReason, ContextFill, TokenUsage};

#[test]
fn session_actions() {
    check(
        ActionEvent::SetModel {
            request_id: Some("m1".into()),
            model: "openai:gpt-4o".into(),
        },
        json!({"type": "setModel", "requestId": "m1", "model": "openai:gpt-4o"}),
    );
    check(
        ActionEvent::SetApprovalMode {
            request_id: None,
            mode: ApprovalMode::Interactive,
        },
        json!({"type": "setApprovalMode", "mode": "interactive"}),
    );
    check(
        ActionEvent::NewSession { request_id: None },
        json!({"type": "newSession"}),
    );
    check(
        ActionEvent::ClearHistory {
            request_id: Some("c".into()),
        },
        json!({"type": "clearHistory", "requestId": "c"}),
    );
    check(
        ActionEvent::Compact {
            request_id: None,
            focus: None,
        },
        json!({"type": "compact"}),
    );
    check(
        ActionEvent::Compact {
            request_id: Some("k".into()),
            focus: Some("the failing tests".into()),
        },
        json!({"type": "compact", "requestId": "k", "focus": "the failing tests"}),
    );
    check(
        ActionEvent::Undo {
            request_id: None,
            turns: None,
            force: false,
        },
        json!({"type": "undo"}),
    );
    check(
        ActionEvent::Undo {
            request_id: Some("u".into()),
            turns: Some(2),
            force: true,
        },
        json!({"type": "undo", "requestId": "u", "turns": 2, "force": true}),
    );
    check(
        ActionEvent::ListManualTools { request_id: None },
        json!({"type": "listManualTools"}),
    );
    check(
        ActionEvent::ListApprovals { request_id: None },
        json!({"type": "listApprovals"}),
    );
    check(
        ActionEvent::ForgetApprovals {
            request_id: None,
            index: Some(2),
        },
        json!({"type": "forgetApprovals", "index": 2}),
    );
    check(
        ActionEvent::ForgetApprovals {
            request_id: None,
            index: None,
        },
        json!({"type": "forgetApprovals"}),
    );
    check(
        ActionEvent::GetStatus {
            request_id: Some("s".into()),
        },
        json!({"type": "getStatus", "requestId": "s"}),
    );
    check(
        ActionEvent::EndSession {
            reason: Some(SessionEndReason::Interrupted),
        },
        json!({"type": "endSession", "reason": "interrupted"}),
    );
    check(
        ActionEvent::EndSession { reason: None },
        json!({"type": "endSession"}),
    );
    // Requests, not answers: none of them answers a pending request.
    assert_eq!(
        ActionEvent::GetStatus {
            request_id: Some("s".into())
        }
        .answers_request(),
        None
    );
}

#[test]
fn session_answers() {
    check(
        DisplayEvent::TurnEnded {
            status: TurnStatus::Completed,
            response: Some("Done.".into()),
            error: None,
            output: None,
            usage: TokenUsage {
                input_tokens: 3,
                output_tokens: 1,
                ..TokenUsage::default()
            },
            cost: Some(0.5),
        },
        json!({"type": "turnEnded", "status": "completed", "response": "Done.",
               "usage": {"inputTokens": 3, "outputTokens": 1}, "cost": 0.5}),
    );
    check(
        DisplayEvent::TurnEnded {
            status: TurnStatus::Failed,
            response: None,
            error: Some("max iterations".into()),
            output: None,
            usage: TokenUsage::default(),
            cost: None,
        },
        json!({"type": "turnEnded", "status": "failed",
               "error": "max iterations", "usage": {"inputTokens": 0, "outputTokens": 0}}),
    );
    check(
        DisplayEvent::TurnEnded {
            status: TurnStatus::Completed,
            response: Some("{\"verdict\":\"ok\"}".into()),
            error: None,
            output: Some(json!({"verdict": "ok"})),
            usage: TokenUsage::default(),
            cost: None,
        },
        json!({"type": "turnEnded", "status": "completed", "response": "{\"verdict\":\"ok\"}",
               "output": {"verdict": "ok"}, "usage": {"inputTokens": 0, "outputTokens": 0}}),
    );
    check(
        DisplayEvent::ActionResult(ActionResult {
            request_id: Some("m1".into()),
            action: SessionAction::SetModel,
            ok: false,
            message: "cannot switch to x: unknown provider".into(),
        }),
        json!({"type": "actionResult", "requestId": "m1", "action": "setModel", "ok": false,
               "message": "cannot switch to x: unknown provider"}),
    );
    check(
        DisplayEvent::SessionStatus(SessionStatus {
            request_id: None,
            session_id: "20261123-170000-abcd".into(),
            worker: "greeter".into(),
            model: "test:default".into(),
            zones: vec![ZoneSummary {
                name: "out".into(),
                mode: "rw".into(),
            }],
            usage: TokenUsage::default(),
            cost: None,
            messages: 4,
            context: None,
            approvals_remembered: 1,
            approval_mode: None,
            busy: false,
            budget: None,
        }),
        json!({"type": "sessionStatus", "sessionId": "20261123-170000-abcd",
               "worker": "greeter", "model": "test:default",
               "zones": [{"name": "out", "mode": "rw"}],
               "usage": {"inputTokens": 0, "outputTokens": 0}, "messages": 4,
               "approvalsRemembered": 1, "busy": false}),
    );
    check(
        DisplayEvent::SessionStatus(SessionStatus {
            request_id: Some("s".into()),
            session_id: "20261123-170000-abcd".into(),
            worker: "greeter".into(),
            model: "test:default".into(),
            zones: Vec::new(),
            usage: TokenUsage::default(),
            cost: None,
            messages: 9,
            context: Some(ContextFill {
                used: 63_000,
                window: 100_000,
            }),
            approvals_remembered: 0,
            approval_mode: Some(ApprovalMode::ApproveAll),
            busy: true,
            budget: None,
        }),
        json!({"type": "sessionStatus", "requestId": "s", "sessionId": "20261123-170000-abcd",
               "worker": "greeter", "model": "test:default", "zones": [],
               "usage": {"inputTokens": 0, "outputTokens": 0}, "messages": 9,
               "context": {"used": 63000, "window": 100000},
               "approvalsRemembered": 0, "approvalMode": "approve_all", "busy": true}),
    );
    check(
        DisplayEvent::ActionResult(ActionResult {
            request_id: Some("a1".into()),
            action: SessionAction::SetApprovalMode,
            ok: true,
            message: "approval mode: auto_deny".into(),
        }),
        json!({"type": "actionResult", "requestId": "a1", "action": "setApprovalMode",
               "ok": true, "message": "approval mode: auto_deny"}),
    );
    check(
        DisplayEvent::ContextCompacted {
            reason: CompactionReason::Overflow,
            tokens_before: 190_000,
            tokens_after: 21_000,
            summary_tokens: 900,
            messages_replaced: 120,
            duration_ms: 2400,
            worker: None,
        },
        json!({"type": "contextCompacted", "reason": "overflow", "tokensBefore": 190000,
               "tokensAfter": 21000, "summaryTokens": 900, "messagesReplaced": 120,
               "durationMs": 2400}),
    );
    // A compaction written before protocol 1.15 has no duration.
    let old: DisplayEvent = serde_json::from_value(json!({"type": "contextCompacted",
        "reason": "threshold", "tokensBefore": 9, "tokensAfter": 3, "summaryTokens": 1,
        "messagesReplaced": 4}))
    .unwrap();
    assert!(matches!(
        old,
        DisplayEvent::ContextCompacted { duration_ms: 0, .. }
    ));
    check(
        DisplayEvent::ContextElided {
            tokens_before: 71_000,
            tokens_after: 59_000,
            window: 100_000,
            results: 3,
            harder: false,
            worker: Some(crate::workers::WorkerOrigin {
                name: "reader".into(),
                depth: 1,
                id: "w2".into(),
            }),
        },
        json!({"type": "contextElided", "tokensBefore": 71000, "tokensAfter": 59000,
               "window": 100000, "results": 3, "harder": false,
               "worker": {"name": "reader", "depth": 1, "id": "w2"}}),
    );
    check(
        DisplayEvent::ApprovalsRemembered {
            request_id: None,
            approvals: vec![
                RememberedApproval {
                    index: 1,
                    tool_name: "write_file".into(),
                    args: json!({"path": "/out/a"}),
                    scope: ApprovalScope::Session,
                },
                RememberedApproval {
                    index: 2,
                    tool_name: "write_file".into(),
                    args: json!({"path": {"glob": "/notes/**"}}),
                    scope: ApprovalScope::Project,
                },
            ],
        },
        json!({"type": "approvalsRemembered", "approvals": [
            {"index": 1, "toolName": "write_file", "args": {"path": "/out/a"}, "scope": "session"},
            {"index": 2, "toolName": "write_file", "args": {"path": {"glob": "/notes/**"}},
             "scope": "project"}]}),
    );
    // An older host's entry without a scope is a session one.
    let old: RememberedApproval =
        serde_json::from_value(json!({"index": 1, "toolName": "t", "args": {}})).unwrap();
    assert_eq!(old.scope, ApprovalScope::Session);
    // Unknown actions stay errors, and a bad reason is not mapped to a default.
    assert!(serde_json::from_value::<ActionEvent>(json!({"type": "reboot"})).is_err());
    assert!(
        serde_json::from_value::<ActionEvent>(json!({"type": "endSession", "reason": "bored"}))
            .is_err()
    );
}

#[test]
fn mixed_streams_tell_the_new_events_apart() {
    let action: ProtocolEvent =
        serde_json::from_value(json!({"type": "setModel", "model": "test"})).unwrap();
    assert!(matches!(action, ProtocolEvent::Action(_)));
    let display: ProtocolEvent = serde_json::from_value(
        json!({"type": "turnEnded", "status": "interrupted", "usage": {"inputTokens": 0, "outputTokens": 0}}),
    )
    .unwrap();
    assert!(matches!(display, ProtocolEvent::Display(_)));
}
