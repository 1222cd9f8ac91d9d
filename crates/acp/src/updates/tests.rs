//! Tests of the translation of display events: a call announced once and updated after, text
//! streamed once (not again with the message), the turn's end and a command's answer as steps.

use golem_protocol::{ChatMessage, InvokedBy, Risk, ToolResultValue};
use serde_json::json;

use super::*;

fn kinds(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|step| match step {
            Step::Update(update) => serde_json::to_value(update).unwrap()["sessionUpdate"]
                .as_str()
                .unwrap()
                .to_owned(),
            Step::Ask(_) => "ask".into(),
            Step::Question { .. } => "question".into(),
            Step::TurnEnded { .. } => "turnEnded".into(),
            Step::Answer { .. } => "answer".into(),
        })
        .collect()
}

#[test]
fn a_call_is_announced_once_then_updated_and_its_end_answers_a_manual_call() {
    let mut t = Translator::default();
    let request = ApprovalRequest {
        request_id: "r1".into(),
        tool_call_id: "c1".into(),
        tool_name: "write_file".into(),
        tool_kind: golem_protocol::ToolKind::Edit,
        args: json!({"path": "/out/a.txt", "content": "x"}),
        description: "write".into(),
        risk: Risk::Medium,
        preview: None,
        invoked_by: InvokedBy::Model,
        worker: None,
        fields: Vec::new(),
        editable: true,
    };
    let asked = t.steps(&DisplayEvent::ApprovalRequired(request.clone()));
    assert_eq!(kinds(&asked), ["tool_call", "ask"]);
    let Step::Update(announced) = &asked[0] else {
        unreachable!()
    };
    // The kind comes from the event (the tool says it), not from a table of names here.
    assert_eq!(serde_json::to_value(announced).unwrap()["kind"], "edit");
    let started = t.steps(&DisplayEvent::ToolStarted {
        tool_call_id: "c1".into(),
        tool_name: "write_file".into(),
        tool_kind: golem_protocol::ToolKind::Edit,
        args: request.args.clone(),
        invoked_by: InvokedBy::Model,
        worker: None,
    });
    assert_eq!(kinds(&started), ["tool_call_update"]);
    let ended = t.steps(&DisplayEvent::ToolResult {
        tool_call_id: "c1".into(),
        tool_name: "write_file".into(),
        tool_kind: golem_protocol::ToolKind::Edit,
        status: ToolStatus::Error,
        args: None,
        value: ToolResultValue::text("no space"),
        duration_ms: 1,
        invoked_by: InvokedBy::Model,
        worker: None,
    });
    assert_eq!(kinds(&ended), ["tool_call_update", "answer"]);
    let Step::Update(update) = &ended[0] else {
        unreachable!()
    };
    let json = serde_json::to_value(update).unwrap();
    assert_eq!(json["status"], "failed");
    assert_eq!(json["content"][0]["content"]["text"], "no space");
}

#[test]
fn streamed_text_is_not_sent_again_with_its_message() {
    let mut t = Translator::default();
    let delta = |d: &str| DisplayEvent::Streaming {
        request_id: "s".into(),
        delta: d.into(),
        done: false,
        worker: None,
    };
    let message = DisplayEvent::Message {
        message: ChatMessage {
            role: Role::Assistant,
            content: "Hello".into(),
        },
        worker: None,
    };
    assert_eq!(kinds(&t.steps(&delta("Hel"))), ["agent_message_chunk"]);
    assert_eq!(kinds(&t.steps(&delta("lo"))), ["agent_message_chunk"]);
    assert!(t.steps(&message).is_empty());
    // A message that was not streamed is sent whole.
    assert_eq!(kinds(&t.steps(&message)), ["agent_message_chunk"]);
}

#[test]
fn a_warning_is_shown_and_the_turn_end_is_a_step() {
    let mut t = Translator::default();
    let warning = t.steps(&DisplayEvent::Status {
        level: StatusLevel::Warning,
        message: "slow".into(),
    });
    assert_eq!(kinds(&warning), ["agent_message_chunk"]);
    let end = t.steps(&DisplayEvent::TurnEnded {
        status: TurnStatus::Completed,
        response: None,
        error: None,
        output: None,
        usage: Default::default(),
        cost: None,
    });
    assert_eq!(kinds(&end), ["turnEnded"]);
}

#[test]
fn an_elision_is_the_thought_its_info_status_was() {
    let shown = |event: &DisplayEvent| -> Vec<serde_json::Value> {
        Translator::default()
            .steps(event)
            .iter()
            .map(|step| match step {
                Step::Update(update) => serde_json::to_value(update).unwrap(),
                other => panic!("{:?}", kinds(std::slice::from_ref(other))),
            })
            .collect()
    };
    let elided = shown(&DisplayEvent::ContextElided {
        tokens_before: 7_100,
        tokens_after: 5_900,
        window: 10_000,
        results: 1,
        harder: false,
        worker: None,
    });
    let status = shown(&DisplayEvent::Status {
        level: StatusLevel::Info,
        message: "context 71 % full: elided 1 old tool result (about 1200 tokens)".into(),
    });
    assert_eq!(elided, status);
    assert_eq!(elided[0]["sessionUpdate"], "agent_thought_chunk");
}

#[test]
fn a_file_read_is_its_text_in_a_block_and_the_value_is_the_raw_output() {
    let mut t = Translator::default();
    let value = ToolResultValue::file_content(golem_protocol::result::FileContentData {
        path: "/input/about.txt".into(),
        content: "Golem Forge\nruns workers\n".into(),
        size: 25,
        encoding: Some("utf-8".into()),
    })
    .with_summary("/input/about.txt (25 bytes, 2 lines)");
    let ended = t.steps(&DisplayEvent::ToolResult {
        tool_call_id: "c1".into(),
        tool_name: "read_file".into(),
        tool_kind: golem_protocol::ToolKind::Read,
        status: ToolStatus::Success,
        args: None,
        value: value.clone(),
        duration_ms: 1,
        invoked_by: InvokedBy::Model,
        worker: None,
    });
    let Step::Update(update) = &ended[0] else {
        unreachable!()
    };
    let json = serde_json::to_value(update).unwrap();
    assert_eq!(
        json["content"],
        json!([{"type": "content", "content": {"type": "text",
                "text": "```txt\nGolem Forge\nruns workers\n```"}}])
    );
    assert_eq!(json["rawOutput"], serde_json::to_value(&value).unwrap());
}

#[test]
fn a_call_that_never_started_is_announced_with_its_arguments() {
    let mut t = Translator::default();
    let args = json!({"path": "/out/a.txt"});
    let ended = t.steps(&DisplayEvent::ToolResult {
        tool_call_id: "c9".into(),
        tool_name: "delete_file".into(),
        tool_kind: golem_protocol::ToolKind::Delete,
        status: ToolStatus::Blocked,
        args: Some(args.clone()),
        value: ToolResultValue::text("deleting is blocked in /out"),
        duration_ms: 0,
        invoked_by: InvokedBy::Model,
        worker: None,
    });
    assert_eq!(kinds(&ended), ["tool_call", "answer"]);
    let Step::Update(update) = &ended[0] else {
        unreachable!()
    };
    let json = serde_json::to_value(update).unwrap();
    assert_eq!(json["rawInput"], args, "{json}");
    assert!(
        json["title"].as_str().unwrap().contains("/out/a.txt"),
        "{json}"
    );
    assert_eq!(json["status"], "failed", "{json}");
}

#[test]
fn the_cost_is_the_sessions_total_from_what_was_spent_before_and_rounded() {
    let mut t = Translator::default().with_cost(Some(0.0012));
    let usage = |cost: f64| DisplayEvent::Usage {
        usage: Default::default(),
        total: Default::default(),
        model: None,
        cost: Some(cost),
        budget: None,
        context: Some(golem_protocol::ContextFill {
            used: 10,
            window: 100,
        }),
        worker: None,
        call: None,
    };
    let mut last = Value::Null;
    for cost in [0.0011, 0.0006551000000000004, 0.0000000000000001] {
        let steps = t.steps(&usage(cost));
        let Step::Update(update) = &steps[0] else {
            unreachable!()
        };
        last = serde_json::to_value(update).unwrap();
    }
    assert_eq!(last["cost"], json!({"amount": 0.002955, "currency": "USD"}));
    assert_eq!(rounded_cost(0.0029551000000000004).to_string(), "0.002955");
}
