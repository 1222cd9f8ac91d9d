//! Approvals as MCP elicitation: an `approvalRequired` event becomes a form the client shows
//! its user — the tool, what the call will do, its risk and the preview as text in the
//! message; a choice of accept, accept for this session or decline, and a note for the
//! worker — and the user's answer becomes the `approvalResponse` that settles the call.

use golem_protocol::{ApprovalRequest, ApprovalResponse, RememberScope, Risk};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use serde_json::{Value, json};

/// The most characters of a preview put into an elicitation message.
const PREVIEW_LIMIT: usize = 6_000;

/// The answer that approves once.
pub const ACCEPT: &str = "accept";
/// The answer that approves identical calls for the rest of the call's session.
pub const ACCEPT_FOR_SESSION: &str = "accept_for_session";
/// The answer that denies.
pub const DECLINE: &str = "decline";

/// The elicitation request asking the client's user about `request`, made by worker `worker`.
pub fn request_params(worker: &str, request: &ApprovalRequest) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(worker, request),
        requested_schema: schema(),
    }
}

/// The message: who asks, for what, how risky, and what will change.
pub fn message(worker: &str, request: &ApprovalRequest) -> String {
    let who = match &request.worker {
        Some(sub) => format!("Worker `{}` (called by `{worker}`)", sub.name),
        None => format!("Worker `{worker}`"),
    };
    let mut text = format!(
        "{who} asks to run {}: {}\nRisk: {}.",
        request.tool_name,
        request.description,
        risk_name(request.risk)
    );
    if let Some(preview) = &request.preview {
        let preview = golem_protocol::text::fold(&preview.to_model_text(), PREVIEW_LIMIT);
        text.push_str("\n\n");
        text.push_str(&preview);
    } else if let Ok(args) = serde_json::to_string_pretty(&request.args) {
        text.push_str("\n\nArguments:\n");
        text.push_str(&golem_protocol::text::fold(&args, PREVIEW_LIMIT));
    }
    text
}

fn risk_name(risk: Risk) -> &'static str {
    match risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    }
}

/// The form: a decision (accept / accept for this session / decline) and a note.
pub fn schema() -> ElicitationSchema {
    let value = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": [
                    {"const": ACCEPT, "title": "Accept"},
                    {"const": ACCEPT_FOR_SESSION, "title": "Accept for this session"},
                    {"const": DECLINE, "title": "Decline"}
                ],
                "default": ACCEPT
            },
            "note": {
                "type": "string",
                "title": "Note for the worker",
                "description": "Why you decline, or what to do instead (optional)."
            }
        },
        "required": ["decision"]
    });
    serde_json::from_value(value).unwrap_or_else(|_| ElicitationSchema::new(Default::default()))
}

/// The `approvalResponse` for `request_id` from the user's answer.
pub fn response(request_id: &str, answer: &ElicitResult) -> ApprovalResponse {
    let content = answer.content.as_ref();
    let field = |name: &str| {
        content
            .and_then(|c| c.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let note = field("note");
    match answer.action {
        ElicitationAction::Accept => match field("decision").as_deref() {
            None | Some(ACCEPT) => ApprovalResponse {
                note,
                ..ApprovalResponse::approve(request_id)
            },
            Some(ACCEPT_FOR_SESSION) => ApprovalResponse {
                remember: RememberScope::Session,
                note,
                ..ApprovalResponse::approve(request_id)
            },
            Some(DECLINE) => ApprovalResponse::deny(
                request_id,
                Some(note.unwrap_or_else(|| "the user declined".to_owned())),
            ),
            Some(other) => ApprovalResponse::deny(
                request_id,
                Some(format!(
                    "the MCP client answered with an unknown decision `{other}`"
                )),
            ),
        },
        ElicitationAction::Decline => ApprovalResponse::deny(
            request_id,
            Some(note.unwrap_or_else(|| "the user declined".to_owned())),
        ),
        ElicitationAction::Cancel => ApprovalResponse::deny(
            request_id,
            Some("the user dismissed the approval request".to_owned()),
        ),
        _ => ApprovalResponse::deny(
            request_id,
            Some("the MCP client answered the approval request with an unknown action".to_owned()),
        ),
    }
}

/// The denial given when the client could not ask its user (`why`).
pub fn unavailable(request_id: &str, why: &str) -> ApprovalResponse {
    ApprovalResponse::deny(
        request_id,
        Some(format!(
            "the MCP client could not ask its user for approval ({why}), so the call was denied"
        )),
    )
}

#[cfg(test)]
mod tests {
    use golem_protocol::result::DiffData;
    use golem_protocol::{InvokedBy, ToolResultValue, WorkerOrigin};

    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            request_id: "req-1".into(),
            tool_call_id: "call-1".into(),
            tool_name: "write_file".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            args: json!({"path": "/out/a.txt", "content": "hello\n"}),
            description: "Create /out/a.txt".into(),
            risk: Risk::Medium,
            preview: None,
            invoked_by: InvokedBy::Model,
            worker: None,
            fields: Vec::new(),
            editable: true,
        }
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let result = ElicitResult::new(action);
        match content {
            Some(content) => result.with_content(content),
            None => result,
        }
    }

    #[test]
    fn the_message_names_the_tool_the_risk_and_shows_the_preview() {
        let mut request = request();
        let text = message("main", &request);
        assert!(text.starts_with("Worker `main` asks to run write_file: Create /out/a.txt"));
        assert!(text.contains("Risk: medium."), "{text}");
        assert!(text.contains("\"path\": \"/out/a.txt\""), "{text}");
        request.preview = Some(ToolResultValue::diff(DiffData {
            path: "/out/a.txt".into(),
            original: None,
            modified: "hello\n".into(),
            is_new: true,
            bytes_written: None,
            hunks: None,
        }));
        request.worker = Some(WorkerOrigin {
            name: "helper".into(),
            depth: 1,
            id: "w".into(),
        });
        let text = message("main", &request);
        assert!(
            text.starts_with("Worker `helper` (called by `main`)"),
            "{text}"
        );
        assert!(text.contains("/out/a.txt"), "{text}");
    }

    #[test]
    fn the_form_offers_three_decisions_and_a_note() {
        let value = serde_json::to_value(schema()).unwrap();
        assert_eq!(value["type"], "object");
        let options: Vec<_> = value["properties"]["decision"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["const"].as_str().unwrap())
            .collect();
        assert_eq!(options, [ACCEPT, ACCEPT_FOR_SESSION, DECLINE]);
        assert_eq!(value["properties"]["note"]["type"], "string");
        assert_eq!(value["required"], json!(["decision"]));
    }

    #[test]
    fn answers_become_approval_responses() {
        let accept = response(
            "r",
            &answer(
                ElicitationAction::Accept,
                Some(json!({"decision": "accept"})),
            ),
        );
        assert!(accept.approved);
        assert_eq!(accept.remember, RememberScope::None);
        let bare = response("r", &answer(ElicitationAction::Accept, None));
        assert!(bare.approved);
        let session = response(
            "r",
            &answer(
                ElicitationAction::Accept,
                Some(json!({"decision": "accept_for_session"})),
            ),
        );
        assert!(session.approved);
        assert_eq!(session.remember, RememberScope::Session);
        let declined = response(
            "r",
            &answer(
                ElicitationAction::Accept,
                Some(json!({"decision": "decline", "note": "write to /out/b.txt instead"})),
            ),
        );
        assert!(!declined.approved);
        assert_eq!(
            declined.note.as_deref(),
            Some("write to /out/b.txt instead")
        );
        let refused = response("r", &answer(ElicitationAction::Decline, None));
        assert!(!refused.approved);
        assert_eq!(refused.note.as_deref(), Some("the user declined"));
        let dismissed = response("r", &answer(ElicitationAction::Cancel, None));
        assert!(!dismissed.approved);
        let odd = response(
            "r",
            &answer(
                ElicitationAction::Accept,
                Some(json!({"decision": "maybe"})),
            ),
        );
        assert!(!odd.approved);
    }
}
