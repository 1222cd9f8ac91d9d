//! Tests of reading prompts: text, attachments and mentions, commands and manual tools, and
//! what is refused.

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResource, EmbeddedResourceResource, ImageContent, ResourceLink,
    TextContent, TextResourceContents,
};
use golem_protocol::{ExecutionMode, FieldType, FormField, ManualToolInfo};
use serde_json::json;

use super::*;

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t))
}

fn tool(fields: &[&str]) -> ManualToolInfo {
    ManualToolInfo {
        name: "deploy".into(),
        label: "Deploy".into(),
        description: "Deploys".into(),
        category: None,
        mode: ExecutionMode::Manual,
        fields: fields
            .iter()
            .map(|name| FormField {
                name: (*name).into(),
                field_type: FieldType::Text,
                required: true,
                default: None,
                description: None,
                options: Vec::new(),
                integer: false,
            })
            .collect(),
    }
}

#[test]
fn words_mentions_and_attachments_make_one_input() {
    let blocks = [
        text("look at"),
        ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///p/a.rs")),
        ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                "fn main() {}\n",
                "file:///p/b.rs",
            )),
        )),
    ];
    assert_eq!(
        prompt_text(&blocks).unwrap(),
        "look at @a.rs (/p/a.rs)\n\nAttached files:\n<attachment path=\"/p/b.rs\">\nfn \
         main() {}\n</attachment>"
    );
}

#[test]
fn images_and_empty_prompts_are_refused() {
    let image = ContentBlock::Image(ImageContent::new("AAAA", "image/png"));
    assert_eq!(
        prompt_text(&[image]),
        Err(PromptError::Unsupported("image"))
    );
    assert_eq!(prompt_text(&[text("  ")]), Err(PromptError::Empty));
}

#[test]
fn commands_and_manual_tools_are_read_and_other_slashes_are_turns() {
    let tools = [tool(&["target"])];
    let read = |t: &str| read_prompt(&[text(t)], &tools);
    assert_eq!(read("/clear").unwrap(), PromptAction::Clear);
    assert_eq!(
        read("/compact keep the plan").unwrap(),
        PromptAction::Compact(Some("keep the plan".into()))
    );
    assert_eq!(read("/undo 2").unwrap(), PromptAction::Undo(2));
    assert!(matches!(read("/undo two"), Err(PromptError::Command(_))));
    assert!(matches!(read("/model"), Err(PromptError::Command(_))));
    assert_eq!(
        read("/deploy prod eu").unwrap(),
        PromptAction::Tool {
            name: "deploy".into(),
            args: json!({"target": "prod eu"})
        }
    );
    assert_eq!(
        read("/deploy {\"target\": \"x\"}").unwrap(),
        PromptAction::Tool {
            name: "deploy".into(),
            args: json!({"target": "x"})
        }
    );
    assert_eq!(
        read("/etc/hosts is odd").unwrap(),
        PromptAction::Turn("/etc/hosts is odd".into())
    );
    let two = [tool(&["a", "b"])];
    assert!(matches!(
        read_prompt(&[text("/deploy x")], &two),
        Err(PromptError::Command(_))
    ));
}

#[test]
fn the_commands_advertised_are_the_sessions_then_the_tools() {
    let names: Vec<String> = available_commands(&[tool(&["target"])])
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(
        names,
        [
            "clear",
            "compact",
            "undo",
            "model",
            "status",
            "approvals",
            "deploy"
        ]
    );
}
