//! A recorded conversation told again as `session/update`s, for `session/load`: the user's
//! messages, the agent's answers, and each tool call with how it ended.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus,
    ToolCallUpdateFields,
};
use golem_llm::Message;
use serde_json::Value;

use crate::tool_call::{self, ZoneMap};
use crate::updates::message;

/// The updates that tell `history` again; `kind_of` says what kind of thing a tool does (the
/// session's tools say it).
pub fn replay(
    history: &[Message],
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
                    let (status, content) = match results.get(call.id.as_str()) {
                        Some((text, false)) => (ToolCallStatus::Completed, *text),
                        Some((text, true)) => (ToolCallStatus::Failed, *text),
                        None => (ToolCallStatus::Failed, "(no result was recorded)"),
                    };
                    let mut shown =
                        ToolCall::new(call.id.clone(), tool_call::title(&call.name, &args));
                    shown.update(
                        ToolCallUpdateFields::new()
                            .kind(tool_call::acp_kind(kind_of(&call.name)))
                            .status(status)
                            .locations(tool_call::locations(&args, zones))
                            .content(vec![tool_call::text(content)])
                            .raw_input(args),
                    );
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
        let updates =
            serde_json::to_value(replay(&history, &ZoneMap::default(), |name| match name {
                "write_file" => golem_protocol::ToolKind::Edit,
                _ => golem_protocol::ToolKind::Other,
            }))
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
}
