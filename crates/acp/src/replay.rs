//! A recorded conversation told again as `session/update`s, for `session/load`: the user's
//! messages, the agent's answers, and each tool call with how it ended. A call is shown from
//! its transcript record (the result value front ends saw), so it comes back with the same
//! content kinds as it had live — a diff as a diff; only a call with no recorded value (older
//! transcripts) falls back to the text the model was given. The session's cost so far is the
//! sum of its recorded `usage` events.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus,
    ToolCallUpdateFields,
};
use golem_llm::Message;
use golem_protocol::{DisplayEvent, ToolResultValue, ToolStatus};
use golem_session::TranscriptEntry;
use serde_json::Value;

use crate::tool_call::{self, ZoneMap};
use crate::updates::{call_status, message};

/// What a transcript keeps beyond the conversation: each settled call's status and result
/// value, and what the session has cost.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// By call id.
    pub calls: HashMap<String, (ToolStatus, ToolResultValue)>,
    /// The sum of the recorded `usage` events' costs in US dollars; `None` when none had a
    /// price.
    pub cost: Option<f64>,
}

impl Recorded {
    /// What `entries` (a transcript's lines, in order) record.
    pub fn from_entries(entries: &[TranscriptEntry]) -> Self {
        let mut recorded = Self::default();
        for entry in entries {
            match entry {
                TranscriptEntry::ToolCall(record) => {
                    if let Some(value) = &record.value {
                        recorded
                            .calls
                            .insert(record.tool_call_id.clone(), (record.status, value.clone()));
                    }
                }
                TranscriptEntry::Event {
                    event:
                        DisplayEvent::Usage {
                            cost: Some(cost), ..
                        },
                } => recorded.cost = Some(recorded.cost.unwrap_or(0.0) + cost),
                TranscriptEntry::Meta(_)
                | TranscriptEntry::Event { .. }
                | TranscriptEntry::Message { .. }
                | TranscriptEntry::Compacted { .. }
                | TranscriptEntry::Cleared
                | TranscriptEntry::Input { .. }
                | TranscriptEntry::Ended { .. } => {}
            }
        }
        recorded
    }
}

/// The updates that tell `history` again, each call from `recorded` where it has it;
/// `kind_of` says what kind of thing a tool does (the session's tools say it).
pub fn replay(
    history: &[Message],
    recorded: &Recorded,
    zones: &ZoneMap,
    kind_of: impl Fn(&str) -> golem_protocol::ToolKind,
) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    // Results by call id, so that each call is told once, with its outcome.
    let results: HashMap<&str, (&str, bool)> = history
        .iter()
        .flat_map(|m| match m {
            Message::Tool { results } => results.as_slice(),
            Message::User { .. } | Message::Assistant { .. } => &[],
        })
        .map(|r| (r.tool_call_id.as_str(), (r.content.as_str(), r.is_error)))
        .collect();
    for entry in history {
        match entry {
            Message::User { content } => {
                updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    ContentBlock::Text(TextContent::new(content.clone())),
                )));
            }
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    updates.push(message(text.clone()));
                }
                for call in tool_calls {
                    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                    let mut fields = ToolCallUpdateFields::new()
                        .kind(tool_call::acp_kind(kind_of(&call.name)))
                        .locations(tool_call::locations(&call.name, &args, zones));
                    fields = match recorded.calls.get(&call.id) {
                        Some((status, value)) => {
                            let changed = tool_call::changed_locations(value, zones);
                            if !changed.is_empty() {
                                fields = fields.locations(changed);
                            }
                            fields
                                .status(call_status(*status))
                                .content(tool_call::content(value, zones))
                                .raw_output(serde_json::to_value(value).unwrap_or(Value::Null))
                        }
                        None => {
                            let (status, content) = match results.get(call.id.as_str()) {
                                Some((text, false)) => (ToolCallStatus::Completed, *text),
                                Some((text, true)) => (ToolCallStatus::Failed, *text),
                                None => (ToolCallStatus::Failed, "(no result was recorded)"),
                            };
                            fields
                                .status(status)
                                .content(vec![tool_call::text(content)])
                        }
                    };
                    let mut shown =
                        ToolCall::new(call.id.clone(), tool_call::title(&call.name, &args));
                    shown.update(fields.raw_input(args));
                    updates.push(SessionUpdate::ToolCall(shown));
                }
            }
            Message::Tool { .. } => {}
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_llm::message::{ModelToolCall, ToolResultMessage};

    #[test]
    fn a_conversation_is_told_in_order_with_each_call_once() {
        let history = vec![
            Message::user("save it"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ModelToolCall {
                    id: "c1".into(),
                    name: "write_file".into(),
                    arguments: r#"{"path":"/out/a.txt","content":"x"}"#.into(),
                }],
            },
            Message::Tool {
                results: vec![ToolResultMessage {
                    tool_call_id: "c1".into(),
                    tool_name: "write_file".into(),
                    content: "wrote 1 byte".into(),
                    is_error: false,
                }],
            },
            Message::Assistant {
                text: "Saved.".into(),
                tool_calls: Vec::new(),
            },
        ];
        let updates = serde_json::to_value(replay(
            &history,
            &Recorded::default(),
            &ZoneMap::default(),
            |name| match name {
                "write_file" => golem_protocol::ToolKind::Edit,
                _ => golem_protocol::ToolKind::Other,
            },
        ))
        .unwrap();
        let kinds: Vec<_> = updates
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds,
            ["user_message_chunk", "tool_call", "agent_message_chunk"]
        );
        assert_eq!(updates[1]["status"], "completed");
        assert_eq!(updates[1]["kind"], "edit");
        assert_eq!(updates[2]["content"]["text"], "Saved.");
    }

    #[test]
    fn a_recorded_change_comes_back_as_a_diff_with_its_line_and_the_cost_is_summed() {
        use golem_protocol::result::{DiffData, DiffHunk};
        use std::path::PathBuf;
        let change = ToolResultValue::diff(DiffData {
            path: "/out/a.txt".into(),
            original: Some("a\nb\n".into()),
            modified: "a\nc\n".into(),
            is_new: false,
            bytes_written: Some(4),
            hunks: Some(vec![DiffHunk {
                old_start: 2,
                old_lines: 1,
                new_start: 2,
                new_lines: 1,
                lines: vec!["-b".into(), "+c".into()],
            }]),
        });
        let line = |entry: serde_json::Value| -> TranscriptEntry {
            serde_json::from_value(entry).unwrap()
        };
        let entries = vec![
            line(serde_json::json!({"kind": "toolCall", "toolCallId": "c1",
                "toolName": "edit_file", "invokedBy": "model", "status": "success",
                "proposedArgs": {}, "value": change})),
            line(
                serde_json::json!({"kind": "event", "event": {"type": "usage",
                "usage": {"inputTokens": 1, "outputTokens": 1},
                "total": {"inputTokens": 1, "outputTokens": 1}, "cost": 0.0011}}),
            ),
            line(
                serde_json::json!({"kind": "event", "event": {"type": "usage",
                "usage": {"inputTokens": 1, "outputTokens": 1},
                "total": {"inputTokens": 1, "outputTokens": 1}, "cost": 0.0022}}),
            ),
        ];
        let recorded = Recorded::from_entries(&entries);
        assert!(
            (recorded.cost.unwrap() - 0.0033).abs() < 1e-12,
            "{recorded:?}"
        );
        let history = vec![
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ModelToolCall {
                    id: "c1".into(),
                    name: "edit_file".into(),
                    arguments: r#"{"path":"/out/a.txt","old":"b","new":"c"}"#.into(),
                }],
            },
            Message::Tool {
                results: vec![ToolResultMessage {
                    tool_call_id: "c1".into(),
                    tool_name: "edit_file".into(),
                    content: "Changed /out/a.txt".into(),
                    is_error: false,
                }],
            },
        ];
        let zones = ZoneMap::new([("out".to_owned(), PathBuf::from("/project/./out"))]);
        let updates = serde_json::to_value(replay(&history, &recorded, &zones, |_| {
            golem_protocol::ToolKind::Edit
        }))
        .unwrap();
        let call = &updates[0];
        assert_eq!(call["status"], "completed");
        assert_eq!(
            call["content"],
            serde_json::json!([{"type": "diff", "path": "/project/out/a.txt",
                "oldText": "a\nb\n", "newText": "a\nc\n"}])
        );
        assert_eq!(
            call["locations"],
            serde_json::json!([{"path": "/project/out/a.txt", "line": 2}])
        );
        assert_eq!(call["rawOutput"]["kind"], "diff");
    }
}
