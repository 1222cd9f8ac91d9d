//! Tab completion at the chat prompt: slash-command and manual-tool names after `/`, tool
//! names after `/tool ` and `/t `, and a tool's `--option` names after its name.

use reedline::{Completer, CompletionResult, Span, Suggestion};

use super::command::BuiltinCommand;

/// A manual tool as completion knows it.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The tool's name.
    pub name: String,
    /// Its label or description, shown beside the suggestion.
    pub description: String,
    /// Its option names (schema properties).
    pub options: Vec<String>,
}

/// Completes slash commands, tool names and option names.
#[derive(Debug, Clone)]
pub struct ChatCompleter {
    tools: Vec<ToolEntry>,
}

impl ChatCompleter {
    /// A completer over the built-in commands and `tools`.
    pub fn new(tools: Vec<ToolEntry>) -> Self {
        Self { tools }
    }

    /// Suggestions for `line` with the cursor at its end (`pos` bytes).
    pub fn suggestions(&self, line: &str) -> Vec<Suggestion> {
        let Some(rest) = line.strip_prefix('/') else {
            return Vec::new();
        };
        let words: Vec<&str> = rest.split(' ').collect();
        let current = words.last().copied().unwrap_or("");
        let start = line.len() - current.len();
        let span = Span::new(start, line.len());
        let suggest = |value: String, description: Option<String>| Suggestion {
            value,
            description,
            span,
            append_whitespace: true,
            ..Suggestion::default()
        };
        match words.as_slice() {
            [_] => {
                let builtins = BuiltinCommand::ALL
                    .iter()
                    .map(|c| (c.name().to_owned(), c.summary().to_owned()));
                let tools = self
                    .tools
                    .iter()
                    .map(|t| (t.name.clone(), t.description.clone()));
                builtins
                    .chain([("tool".to_owned(), "run a manual tool".to_owned())])
                    .chain(tools)
                    .filter(|(name, _)| name.starts_with(current))
                    .map(|(name, description)| suggest(name, Some(description)))
                    .collect()
            }
            ["tool" | "t", _] => self
                .tools
                .iter()
                .filter(|t| t.name.starts_with(current))
                .map(|t| suggest(t.name.clone(), Some(t.description.clone())))
                .collect(),
            [first, ..] => {
                let tool_name = match words.as_slice() {
                    ["tool" | "t", name, ..] => *name,
                    _ => *first,
                };
                let Some(tool) = self.tools.iter().find(|t| t.name == tool_name) else {
                    return Vec::new();
                };
                if !current.starts_with('-') {
                    return Vec::new();
                }
                let typed = current.trim_start_matches('-');
                tool.options
                    .iter()
                    .filter(|option| option.starts_with(typed))
                    .map(|option| suggest(format!("--{option}"), None))
                    .collect()
            }
            [] => Vec::new(),
        }
    }
}

impl Completer for ChatCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        let line = line.get(..pos).unwrap_or(line);
        CompletionResult::fresh(self.suggestions(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completer() -> ChatCompleter {
        ChatCompleter::new(vec![ToolEntry {
            name: "read_file".into(),
            description: "Read a file".into(),
            options: vec!["path".into(), "offset".into(), "limit".into()],
        }])
    }

    fn values(line: &str) -> Vec<String> {
        completer()
            .suggestions(line)
            .into_iter()
            .map(|s| s.value)
            .collect()
    }

    #[test]
    fn completes_commands_tools_and_options() {
        assert_eq!(values("/to"), ["tools", "tool"]);
        assert_eq!(values("/re"), ["read_file"]);
        assert_eq!(values("/tool r"), ["read_file"]);
        assert_eq!(values("/read_file --p"), ["--path"]);
        assert_eq!(values("/t read_file /x --l"), ["--limit"]);
        assert!(values("hello").is_empty());
        assert!(values("/nope --p").is_empty());
    }

    #[test]
    fn the_span_covers_only_the_word_being_completed() {
        let suggestions = completer().suggestions("/read_file --o");
        assert_eq!(suggestions[0].span, Span::new(11, 14));
    }
}
