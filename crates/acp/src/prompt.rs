//! What an editor's prompt becomes: the text of a `userInput`, or one of the slash commands
//! the agent advertises. Text blocks are the words; an embedded resource (a file the user
//! attached) is appended as an attachment that names its path; a resource link (a file the
//! user mentioned) is named so the worker can read it through its zones. Images and audio are
//! not accepted (the agent does not advertise them).

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, EmbeddedResourceResource,
    UnstructuredCommandInput,
};
use golem_protocol::ManualToolInfo;
use serde_json::{Map, Value};

/// Why a prompt cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// A block of a kind the agent did not advertise.
    #[error("{0} content is not accepted: send text, resource links or embedded text resources")]
    Unsupported(&'static str),
    /// Nothing to say.
    #[error("the prompt is empty")]
    Empty,
    /// A slash command that could not be read.
    #[error("{0}")]
    Command(String),
}

/// The session's own commands, as the editor offers them (the manual tools follow).
pub const BUILTIN_COMMANDS: [(&str, &str, Option<&str>); 6] = [
    (
        "clear",
        "Forget the conversation (the transcript keeps it)",
        None,
    ),
    (
        "compact",
        "Summarise the conversation to free context",
        Some("what the summary should keep"),
    ),
    (
        "undo",
        "Put back the files the last turn changed",
        Some("turns"),
    ),
    ("model", "Switch the model", Some("provider:model")),
    (
        "status",
        "Show the session: model, usage, context, approvals",
        None,
    ),
    ("approvals", "List the approvals remembered", None),
];

/// What a prompt asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAction {
    /// A turn with this input.
    Turn(String),
    /// `/clear`.
    Clear,
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// `/undo [N]`.
    Undo(u32),
    /// `/model NAME`.
    Model(String),
    /// `/status`.
    Status,
    /// `/approvals`.
    Approvals,
    /// A manual tool with its arguments.
    Tool {
        /// The tool.
        name: String,
        /// Its arguments.
        args: Value,
    },
}

/// Reads a prompt: a slash command when its text starts with `/name` of a command or manual
/// tool, else a turn.
pub fn read_prompt(
    blocks: &[ContentBlock],
    tools: &[ManualToolInfo],
) -> Result<PromptAction, PromptError> {
    let text = prompt_text(blocks)?;
    if let Some(command) = text.strip_prefix('/')
        && let Some(action) = read_command(command, tools)?
    {
        return Ok(action);
    }
    Ok(PromptAction::Turn(text))
}

/// The text of a turn: the blocks in order, attachments after the words.
pub fn prompt_text(blocks: &[ContentBlock]) -> Result<String, PromptError> {
    let mut words = Vec::new();
    let mut attached = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => words.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => {
                words.push(format!("@{} ({})", link.name, display_uri(&link.uri)));
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(file) => {
                    attached.push(format!(
                        "<attachment path=\"{}\">\n{}\n</attachment>",
                        display_uri(&file.uri),
                        file.text.trim_end_matches('\n')
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(_) => {
                    return Err(PromptError::Unsupported("binary resource"));
                }
                _ => return Err(PromptError::Unsupported("this resource")),
            },
            ContentBlock::Image(_) => return Err(PromptError::Unsupported("image")),
            ContentBlock::Audio(_) => return Err(PromptError::Unsupported("audio")),
            _ => return Err(PromptError::Unsupported("this")),
        }
    }
    let mut text = words.join(" ").trim().to_owned();
    if !attached.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("Attached files:\n");
        text.push_str(&attached.join("\n"));
    }
    if text.is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(text)
}

/// A `file://` address as the path it names; any other address as it is.
fn display_uri(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

/// `command` (after the `/`) as an action, or `None` when it names no command (the text is
/// then a turn like any other).
fn read_command(
    command: &str,
    tools: &[ManualToolInfo],
) -> Result<Option<PromptAction>, PromptError> {
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (command.trim(), ""),
    };
    let argument = (!rest.is_empty()).then(|| rest.to_owned());
    let action = match name {
        "clear" => PromptAction::Clear,
        "compact" => PromptAction::Compact(argument),
        "undo" => PromptAction::Undo(match argument {
            None => 1,
            Some(n) => n.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                PromptError::Command(format!("/undo takes a number of turns, not `{n}`"))
            })?,
        }),
        "model" => PromptAction::Model(argument.ok_or_else(|| {
            PromptError::Command("/model needs a model, as provider:model".to_owned())
        })?),
        "status" => PromptAction::Status,
        "approvals" => PromptAction::Approvals,
        _ => match tools.iter().find(|tool| tool.name == name) {
            Some(tool) => PromptAction::Tool {
                name: tool.name.clone(),
                args: tool_args(tool, rest)?,
            },
            None => return Ok(None),
        },
    };
    Ok(Some(action))
}

/// A manual tool's arguments: a JSON object, or the text as the value of its only field.
fn tool_args(tool: &ManualToolInfo, rest: &str) -> Result<Value, PromptError> {
    if rest.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    if rest.starts_with('{') {
        return match serde_json::from_str::<Value>(rest) {
            Ok(args @ Value::Object(_)) => Ok(args),
            Ok(_) | Err(_) => Err(PromptError::Command(format!(
                "/{}: the arguments are not a JSON object",
                tool.name
            ))),
        };
    }
    match tool.fields.as_slice() {
        [only] => Ok(Value::Object(Map::from_iter([(
            only.name.clone(),
            Value::String(rest.to_owned()),
        )]))),
        fields => Err(PromptError::Command(format!(
            "/{} takes its arguments as a JSON object ({})",
            tool.name,
            fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The commands to advertise: the session's own, then the manual tools.
pub fn available_commands(tools: &[ManualToolInfo]) -> Vec<AvailableCommand> {
    let builtin = BUILTIN_COMMANDS.iter().map(|(name, description, hint)| {
        let command = AvailableCommand::new(*name, *description);
        match hint {
            Some(hint) => command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(*hint),
            )),
            None => command,
        }
    });
    let manual = tools.iter().map(|tool| {
        let command = AvailableCommand::new(tool.name.clone(), tool.description.clone());
        if tool.fields.is_empty() {
            command
        } else {
            let hint = match tool.fields.as_slice() {
                [only] => only.name.clone(),
                _ => "a JSON object of arguments".to_owned(),
            };
            command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint),
            ))
        }
    });
    builtin.chain(manual).collect()
}

#[cfg(test)]
mod tests;
