//! Wire-shape tests of the 1.4 forms: `inputRequired` with `source` and `fields`, and the
//! `inputResponse` that accepts, declines or cancels it; 1.3 shapes still read.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::events::*;
use crate::form::*;
use crate::roundtrip_tests::check;

fn name_field() -> FormField {
    FormField {
        name: "name".into(),
        field_type: FieldType::Text,
        required: true,
        default: None,
        description: Some("Your full name".into()),
        options: Vec::new(),
        integer: false,
    }
}

#[test]
fn input_required_with_a_form() {
    check(
        DisplayEvent::InputRequired {
            request_id: "input-3".into(),
            prompt: "Who are you?".into(),
            source: Some("MCP server `everything`".into()),
            fields: vec![name_field()],
        },
        json!({"type": "inputRequired", "requestId": "input-3", "prompt": "Who are you?",
               "source": "MCP server `everything`",
               "fields": [{"name": "name", "type": "text", "required": true,
                           "description": "Your full name"}]}),
    );
}

#[test]
fn input_resolved() {
    check(
        DisplayEvent::InputResolved {
            request_id: "input-3".into(),
            action: InputAction::Decline,
        },
        json!({"type": "inputResolved", "requestId": "input-3", "action": "decline"}),
    );
}

#[test]
fn a_plain_question_keeps_its_1_3_shape() {
    let old = json!({"type": "inputRequired", "requestId": "i1", "prompt": "Name?"});
    let event: DisplayEvent = serde_json::from_value(old.clone()).unwrap();
    assert_eq!(
        event,
        DisplayEvent::InputRequired {
            request_id: "i1".into(),
            prompt: "Name?".into(),
            source: None,
            fields: Vec::new(),
        }
    );
    assert_eq!(serde_json::to_value(&event).unwrap(), old);
}

#[test]
fn input_responses() {
    let mut values = serde_json::Map::new();
    values.insert("name".into(), json!("Ada"));
    values.insert("check".into(), json!(true));
    check(
        ActionEvent::InputResponse {
            request_id: "input-3".into(),
            action: InputAction::Accept,
            values: Some(values),
        },
        json!({"type": "inputResponse", "requestId": "input-3", "action": "accept",
               "values": {"name": "Ada", "check": true}}),
    );
    for (action, name) in [
        (InputAction::Decline, "decline"),
        (InputAction::Cancel, "cancel"),
    ] {
        check(
            ActionEvent::InputResponse {
                request_id: "i".into(),
                action,
                values: None,
            },
            json!({"type": "inputResponse", "requestId": "i", "action": name}),
        );
        assert_eq!(action.as_str(), name);
    }
    // `action` defaults to accept.
    let bare: ActionEvent =
        serde_json::from_value(json!({"type": "inputResponse", "requestId": "i", "values": {}}))
            .unwrap();
    assert_eq!(
        bare,
        ActionEvent::InputResponse {
            request_id: "i".into(),
            action: InputAction::Accept,
            values: Some(serde_json::Map::new()),
        }
    );
    assert_eq!(bare.answers_request(), Some("i"));
    // An unknown action is refused, not read as accept.
    assert!(
        serde_json::from_value::<ActionEvent>(
            json!({"type": "inputResponse", "requestId": "i", "action": "maybe"})
        )
        .is_err()
    );
}
