//! Tests of form questions: answered (typed, defaulted, checked), asked again after a misfit,
//! declined, cancelled, ended by an interrupt, answered by plain text, and the orchestrator
//! giving a tool a requester only while a front end can answer.

use std::sync::Arc;

use golem_protocol::{
    ActionEvent, DisplayEvent, FieldType, InputAction, ToolResultValue, ToolStatus,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::*;
use crate::approval::{ApprovalController, ApprovalMode, ApprovalRequirement};
use crate::bus::UiEventBus;
use crate::fn_tool::FnTool;
use crate::orchestrator::{ToolCall, ToolCallOrchestrator};
use crate::registry::ToolRegistry;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name"},
            "age": {"type": "integer", "minimum": 0},
            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
            "agree": {"type": "boolean"}
        },
        "required": ["name"]
    })
}

/// A front end that answers each form with the next action `answer` makes from its request
/// id, and reports every form event it saw.
fn front_end(
    bus: &UiEventBus,
    answers: Vec<fn(String) -> ActionEvent>,
) -> mpsc::UnboundedReceiver<DisplayEvent> {
    let mut events = bus.subscribe();
    let bus = bus.clone();
    let (seen, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut answers = answers.into_iter();
        while let Some(event) = events.recv().await {
            if let DisplayEvent::InputRequired { request_id, .. } = &event
                && let Some(answer) = answers.next()
            {
                bus.send_action(answer(request_id.clone()));
            }
            if matches!(
                event,
                DisplayEvent::InputRequired { .. } | DisplayEvent::InputResolved { .. }
            ) && seen.send(event).is_err()
            {
                break;
            }
        }
    });
    rx
}

fn accept(request_id: String, values: Value) -> ActionEvent {
    let Value::Object(values) = values else {
        unreachable!()
    };
    ActionEvent::InputResponse {
        request_id,
        action: InputAction::Accept,
        values: Some(values),
    }
}

fn requester(bus: &UiEventBus) -> InputRequester {
    InputRequester::new(RuntimeUI::new(bus.clone()))
}

#[tokio::test]
async fn accepted_values_are_typed_defaulted_and_checked() {
    let bus = UiEventBus::new();
    let mut seen = front_end(
        &bus,
        vec![|id| accept(id, json!({"name": "Ada", "age": "42", "agree": "yes"}))],
    );
    let answer = requester(&bus)
        .ask(
            "Who are you?",
            "MCP server `x`",
            &schema(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        answer,
        FormAnswer::Accepted(
            json!({"name": "Ada", "age": 42, "agree": true, "color": "red"})
                .as_object()
                .cloned()
                .unwrap()
        )
    );
    let Some(DisplayEvent::InputRequired {
        request_id,
        prompt,
        source,
        fields,
    }) = seen.recv().await
    else {
        panic!("no inputRequired")
    };
    assert_eq!(prompt, "Who are you?");
    assert_eq!(source.as_deref(), Some("MCP server `x`"));
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "age", "color", "agree"]);
    assert_eq!(fields[2].field_type, FieldType::Select);
    assert!(fields[0].required);
    assert_eq!(
        seen.recv().await,
        Some(DisplayEvent::InputResolved {
            request_id,
            action: InputAction::Accept
        })
    );
    assert_eq!(bus.pending_requests(), 0);
}

#[tokio::test]
async fn a_misfit_is_asked_again_with_the_reason() {
    let bus = UiEventBus::new();
    let mut seen = front_end(
        &bus,
        vec![
            |id| accept(id, json!({"age": "many"})),
            |id| accept(id, json!({"age": "-3", "name": "Bo"})),
            |id| accept(id, json!({"name": "Bo", "age": 3})),
        ],
    );
    let answer = requester(&bus)
        .ask("Age?", "s", &schema(), &CancellationToken::new())
        .await;
    assert_eq!(
        answer,
        FormAnswer::Accepted(
            json!({"name": "Bo", "age": 3, "color": "red"})
                .as_object()
                .cloned()
                .unwrap()
        )
    );
    let mut prompts = Vec::new();
    while let Ok(event) = seen.try_recv() {
        if let DisplayEvent::InputRequired { prompt, .. } = event {
            prompts.push(prompt);
        }
    }
    assert_eq!(prompts.len(), 3);
    assert_eq!(prompts[0], "Age?");
    assert!(
        prompts[1].contains("not accepted") && prompts[1].contains("many"),
        "{}",
        prompts[1]
    );
    assert!(prompts[2].contains("minimum"), "{}", prompts[2]);
}

#[tokio::test]
async fn decline_and_cancel_are_the_users_answers() {
    for (action, expected) in [
        (InputAction::Decline, FormAnswer::Declined),
        (InputAction::Cancel, FormAnswer::Cancelled),
    ] {
        let bus = UiEventBus::new();
        let mut events = bus.subscribe();
        let ui_bus = bus.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let DisplayEvent::InputRequired { request_id, .. } = event {
                    ui_bus.send_action(ActionEvent::InputResponse {
                        request_id,
                        action,
                        values: None,
                    });
                }
            }
        });
        let mut resolved = bus.subscribe();
        let answer = requester(&bus)
            .ask("?", "s", &schema(), &CancellationToken::new())
            .await;
        assert_eq!(answer, expected);
        let mut last = None;
        while let Some(event) = resolved.try_recv() {
            last = Some(event);
        }
        assert_eq!(
            last,
            Some(DisplayEvent::InputResolved {
                request_id: "input-1".into(),
                action
            })
        );
    }
}

#[tokio::test]
async fn an_interrupt_cancels_a_pending_question() {
    let bus = UiEventBus::new();
    let mut events = bus.subscribe();
    let cancel = CancellationToken::new();
    let asking = {
        let requester = requester(&bus);
        let cancel = cancel.clone();
        tokio::spawn(async move { requester.ask("?", "s", &schema(), &cancel).await })
    };
    assert!(matches!(
        events.recv().await,
        Some(DisplayEvent::InputRequired { .. })
    ));
    assert_eq!(bus.pending_requests(), 1);
    cancel.cancel();
    assert_eq!(asking.await.unwrap(), FormAnswer::Cancelled);
    assert_eq!(
        events.recv().await,
        Some(DisplayEvent::InputResolved {
            request_id: "input-1".into(),
            action: InputAction::Cancel
        })
    );
    assert_eq!(bus.pending_requests(), 0);
    // A late answer goes nowhere.
    bus.send_action(ActionEvent::InputResponse {
        request_id: "input-1".into(),
        action: InputAction::Accept,
        values: None,
    });
}

#[tokio::test]
async fn a_text_answer_fills_a_one_field_form_or_reads_as_json() {
    let one = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let bus = UiEventBus::new();
    let _seen = front_end(
        &bus,
        vec![|id| ActionEvent::UserInput {
            request_id: Some(id),
            content: " 7 ".into(),
        }],
    );
    let answer = requester(&bus)
        .ask("n?", "s", &one, &CancellationToken::new())
        .await;
    assert_eq!(
        answer,
        FormAnswer::Accepted(json!({"n": 7}).as_object().cloned().unwrap())
    );
    let fields = crate::fields::derive_fields_from_schema(&schema());
    assert_eq!(
        answer_from_text("{\"name\": \"Ada\"}", &fields),
        json!({"name": "Ada"}).as_object().cloned().unwrap()
    );
    assert!(answer_from_text("Ada", &fields).is_empty());
}

#[tokio::test]
async fn a_tool_may_ask_only_while_a_front_end_can_answer() {
    let tool = FnTool::new(
        "asks",
        "asks the user",
        json!({"type": "object"}),
        |_args, ctx: crate::tool::ToolContext| async move {
            let Some(input) = ctx.input else {
                return Ok(ToolResultValue::text("nobody to ask: declined"));
            };
            let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
            let answer = input.ask("x?", "test", &schema, &ctx.cancel).await;
            Ok(ToolResultValue::text(format!("{answer:?}")))
        },
    )
    .with_static_approval(ApprovalRequirement::PreApproved);
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(tool)).unwrap();
    let bus = UiEventBus::new();
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(registry),
        ApprovalController::new(ApprovalMode::ApproveAll),
        RuntimeUI::new(bus.clone()),
    );
    let cancel = CancellationToken::new();
    let headless = orchestrator
        .call(ToolCall::from_model("c1", "asks", json!({})), &cancel)
        .await;
    assert_eq!(headless.status, ToolStatus::Success);
    assert_eq!(
        headless.value,
        ToolResultValue::text("nobody to ask: declined")
    );

    let answerer = bus.register_input_answerer();
    let _seen = front_end(&bus, vec![|id| accept(id, json!({"x": "hi"}))]);
    let asked = orchestrator
        .call(ToolCall::from_model("c2", "asks", json!({})), &cancel)
        .await;
    assert_eq!(
        asked.value,
        ToolResultValue::text("Accepted({\"x\": String(\"hi\")})")
    );
    drop(answerer);
    assert!(!bus.has_input_answerer());
}

#[test]
fn answers_that_do_not_fit_say_why_field_by_field() {
    let schema = schema();
    let fields = derive_fields_from_schema(&schema);
    let values = |v: Value| v.as_object().cloned().unwrap();
    let untyped = check_values(&schema, &fields, values(json!({"age": "many"}))).unwrap_err();
    assert!(matches!(untyped, AnswerError::Untyped(_)), "{untyped:?}");
    let broken = check_values(&schema, &fields, values(json!({"age": -3}))).unwrap_err();
    let AnswerError::DoesNotFit { problems } = &broken else {
        panic!("not a misfit: {broken:?}");
    };
    assert_eq!(
        problems,
        &[
            "\"name\" is a required property".to_owned(),
            "age: -3 is less than the minimum of 0".to_owned()
        ]
    );
    assert_eq!(broken.to_string(), problems.join("; "));
}
