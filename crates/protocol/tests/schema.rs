//! The committed JSON Schema of the event protocol must match the types. Run with
//! `GOLEM_UPDATE_SCHEMA=1` to rewrite it after an intended change.

use std::path::PathBuf;

#[test]
fn committed_schema_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/events.schema.json");
    let generated = golem_protocol::schema::protocol_schema_json();
    if std::env::var_os("GOLEM_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the protocol types; run \
         `GOLEM_UPDATE_SCHEMA=1 cargo test -p golem-protocol --test schema` and commit it",
        path.display()
    );
}

#[test]
fn schema_names_every_event_type() {
    let schema: serde_json::Value =
        serde_json::from_str(&golem_protocol::schema::protocol_schema_json()).unwrap();
    let text = schema.to_string();
    for name in [
        "sessionStarted",
        "message",
        "streaming",
        "toolStarted",
        "toolResult",
        "approvalRequired",
        "approvalResolved",
        "inputRequired",
        "inputResolved",
        "status",
        "manualToolsAvailable",
        "workerStarted",
        "workerFinished",
        "usage",
        "sessionEnded",
        "userInput",
        "inputResponse",
        "approvalResponse",
        "interrupt",
        "manualToolInvoke",
        "batchStarted",
        "itemStarted",
        "itemFinished",
        "batchProgress",
        "batchEnded",
        "testStarted",
        "testFinished",
        "testsEnded",
    ] {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "schema lacks event type {name}"
        );
    }
    assert_eq!(
        schema["x-protocol-version"],
        golem_protocol::PROTOCOL_VERSION
    );
}

#[test]
fn schema_accepts_real_events_and_rejects_malformed_ones() {
    use golem_protocol::*;
    use serde_json::json;
    let schema: serde_json::Value =
        serde_json::from_str(&golem_protocol::schema::protocol_schema_json()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = [
        serde_json::to_value(DisplayEvent::ToolResult {
            tool_call_id: "t".into(),
            tool_name: "x".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            status: ToolStatus::Denied,
            args: None,
            value: ToolError::new(ToolErrorCode::Denied, "no").to_result_value(),
            duration_ms: 1,
            invoked_by: InvokedBy::Model,
            worker: None,
        })
        .unwrap(),
        serde_json::to_value(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
            "a",
        )))
        .unwrap(),
        json!({"type": "interrupt"}),
        json!({"type": "streaming", "requestId": "r", "delta": "", "done": true}),
        json!({"type": "inputRequired", "requestId": "i", "prompt": "Name?",
               "source": "MCP server `everything`",
               "fields": [{"name": "name", "type": "text", "required": true}]}),
        json!({"type": "inputResponse", "requestId": "i", "action": "accept",
               "values": {"name": "Ada"}}),
        json!({"type": "inputResponse", "requestId": "i", "action": "decline"}),
        serde_json::to_value(BatchEvent::ItemStarted {
            id: "a".into(),
            attempt: 1,
        })
        .unwrap(),
        json!({"type": "batchProgress", "total": 3, "completed": 1, "failed": 0, "other": 0,
               "running": 2, "waitingApproval": 0, "tokens": 15, "cost": 0.01}),
    ];
    for event in &good {
        assert!(validator.is_valid(event), "schema rejected {event}");
    }
    let bad = [
        json!({"type": "streaming", "requestId": "r", "delta": 1, "done": true}),
        json!({"type": "toolResult", "toolCallId": "t"}),
        json!({"type": "approvalResponse", "requestId": "a", "approved": true,
               "remember": "forever"}),
        json!({"kind": "text"}),
        json!({"type": "inputResponse", "requestId": "i", "action": "maybe"}),
        json!({"type": "inputResponse", "requestId": "i", "values": ["Ada"]}),
        json!({"type": "batchEnded", "completed": 1}),
        json!({"type": "itemFinished", "result": {"id": "a", "status": "done"}}),
    ];
    for event in &bad {
        assert!(!validator.is_valid(event), "schema accepted {event}");
    }
}
