//! Our approval gate as the editor's permission dialog: an `approvalRequired` becomes a
//! `session/request_permission` with four options whose ids are fixed, and the option chosen
//! becomes the `approvalResponse`. A tool's question (an MCP server's elicitation) becomes the
//! same kind of choice where it fits one: a confirmation, a yes/no, or one pick from a list.

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
};
use golem_protocol::{ApprovalRequest, ApprovalResponse, FieldType, FormField, RememberScope};
use serde_json::{Map, Value};

/// Allow this call.
pub const ALLOW_ONCE: &str = "allow_once";
/// Allow identical calls for the rest of the session.
pub const ALLOW_SESSION: &str = "allow_session";
/// Allow matching calls in this project from now on (a project rule).
pub const ALLOW_PROJECT: &str = "allow_project";
/// Decline this call; the model is told the user declined.
pub const REJECT_ONCE: &str = "reject_once";

/// The note the model gets when the user declines in the editor. The gate puts it after its
/// own "The user denied TOOL: ", so it says only what that sentence does not.
pub const DECLINED: &str = "rejected in the editor";

/// The options of an approval request. Consent for what a jailed program did (`editable:
/// false`) is about one set of effects, so it is allowed once or rejected.
pub fn options(request: &ApprovalRequest) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if request.editable {
        options.push(PermissionOption::new(
            ALLOW_SESSION,
            "Allow for this session",
            PermissionOptionKind::AllowAlways,
        ));
        options.push(PermissionOption::new(
            ALLOW_PROJECT,
            "Allow in this project",
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The answer to `request` for the editor's `outcome`; `None` for an outcome the editor could
/// not give (the request failed), which denies with `why`.
pub fn answer(
    request: &ApprovalRequest,
    outcome: Result<RequestPermissionOutcome, String>,
) -> ApprovalResponse {
    let id = request.request_id.clone();
    let chosen = match outcome {
        Ok(RequestPermissionOutcome::Selected(selected)) => selected.option_id.0.to_string(),
        Ok(RequestPermissionOutcome::Cancelled) => {
            return ApprovalResponse::deny(
                id,
                Some("the turn was cancelled in the editor".to_owned()),
            );
        }
        Ok(_) => String::new(),
        Err(why) => {
            return ApprovalResponse::deny(id, Some(format!("the editor could not ask ({why})")));
        }
    };
    let remember = match chosen.as_str() {
        ALLOW_ONCE => RememberScope::None,
        ALLOW_SESSION if request.editable => RememberScope::Session,
        ALLOW_PROJECT if request.editable => RememberScope::Project,
        REJECT_ONCE => return ApprovalResponse::deny(id, Some(DECLINED.to_owned())),
        other => {
            return ApprovalResponse::deny(
                id,
                Some(format!(
                    "the editor answered with an unknown option `{other}`"
                )),
            );
        }
    };
    ApprovalResponse {
        remember,
        ..ApprovalResponse::approve(id)
    }
}

/// A tool's question put as a choice: the options and, for each, the values it accepts with.
/// `None` when the form does not fit one choice (it is declined instead).
pub fn question_choices(
    fields: &[FormField],
) -> Option<Vec<(PermissionOption, Map<String, Value>)>> {
    let accept = |id: String, name: String, values: Map<String, Value>| {
        (
            PermissionOption::new(id, name, PermissionOptionKind::AllowOnce),
            values,
        )
    };
    let mut choices = match fields {
        [field] => match field.field_type {
            FieldType::Boolean => vec![
                accept(
                    "yes".into(),
                    "Yes".into(),
                    Map::from_iter([(field.name.clone(), Value::Bool(true))]),
                ),
                accept(
                    "no".into(),
                    "No".into(),
                    Map::from_iter([(field.name.clone(), Value::Bool(false))]),
                ),
            ],
            FieldType::Select if !field.options.is_empty() => field
                .options
                .iter()
                .enumerate()
                .map(|(index, option)| {
                    accept(
                        format!("option_{index}"),
                        option.label.clone(),
                        Map::from_iter([(field.name.clone(), option.value.clone())]),
                    )
                })
                .collect(),
            FieldType::Text | FieldType::Number | FieldType::Select => return None,
        },
        _ => return None,
    };
    choices.push((
        PermissionOption::new("decline", "Decline", PermissionOptionKind::RejectOnce),
        Map::new(),
    ));
    Some(choices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
    use golem_protocol::{InvokedBy, Risk};
    use serde_json::json;

    fn request(editable: bool) -> ApprovalRequest {
        ApprovalRequest {
            request_id: "r1".into(),
            tool_call_id: "c1".into(),
            tool_name: "write_file".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            args: json!({"path": "/out/a.txt"}),
            description: "write".into(),
            risk: Risk::Medium,
            preview: None,
            invoked_by: InvokedBy::Model,
            worker: None,
            fields: Vec::new(),
            editable,
        }
    }

    fn chose(id: &str) -> Result<RequestPermissionOutcome, String> {
        Ok(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.to_owned()),
        ))
    }

    #[test]
    fn the_four_options_have_fixed_ids_and_kinds() {
        let ids: Vec<_> = options(&request(true))
            .into_iter()
            .map(|o| (o.option_id.0.to_string(), o.kind))
            .collect();
        assert_eq!(
            ids,
            [
                (ALLOW_ONCE.to_owned(), PermissionOptionKind::AllowOnce),
                (ALLOW_SESSION.to_owned(), PermissionOptionKind::AllowAlways),
                (ALLOW_PROJECT.to_owned(), PermissionOptionKind::AllowAlways),
                (REJECT_ONCE.to_owned(), PermissionOptionKind::RejectOnce),
            ]
        );
        assert_eq!(options(&request(false)).len(), 2);
    }

    #[test]
    fn each_option_is_the_matching_answer() {
        let r = request(true);
        assert_eq!(answer(&r, chose(ALLOW_ONCE)).remember, RememberScope::None);
        assert_eq!(
            answer(&r, chose(ALLOW_SESSION)).remember,
            RememberScope::Session
        );
        assert_eq!(
            answer(&r, chose(ALLOW_PROJECT)).remember,
            RememberScope::Project
        );
        let rejected = answer(&r, chose(REJECT_ONCE));
        assert!(!rejected.approved);
        assert_eq!(rejected.note.as_deref(), Some(DECLINED));
        assert!(!answer(&r, Ok(RequestPermissionOutcome::Cancelled)).approved);
        assert!(!answer(&r, chose("made_up")).approved);
        assert!(!answer(&r, Err("gone".into())).approved);
        // Consent for effects is never remembered, whatever the editor sends.
        assert!(!answer(&request(false), chose(ALLOW_SESSION)).approved);
    }

    #[test]
    fn a_denial_note_does_not_repeat_the_sentence_the_gate_puts_before_it() {
        // The gate writes "The user denied TOOL: NOTE".
        let r = request(true);
        for outcome in [
            chose(REJECT_ONCE),
            Ok(RequestPermissionOutcome::Cancelled),
            Err("gone".into()),
            chose("made_up"),
        ] {
            let note = answer(&r, outcome).note.unwrap();
            let told = format!("The user denied write_file: {note}");
            assert_eq!(told.matches("The user").count(), 1, "{told}");
            assert!(!note.starts_with(char::is_uppercase), "{note}");
        }
    }

    #[test]
    fn questions_that_fit_one_choice_become_options() {
        let yes_no = FormField {
            name: "ok".into(),
            field_type: FieldType::Boolean,
            required: true,
            default: None,
            description: None,
            options: Vec::new(),
            integer: false,
        };
        let choices = question_choices(std::slice::from_ref(&yes_no)).unwrap();
        assert_eq!(choices.len(), 3);
        assert_eq!(choices[0].1.get("ok"), Some(&Value::Bool(true)));
        let text = FormField {
            field_type: FieldType::Text,
            ..yes_no
        };
        assert!(question_choices(&[text]).is_none());
    }
}
