//! Tab completion at the chat prompt: slash-command and manual-tool names after `/`, tool
//! names after `/tool ` and `/t `, a tool's `--option` names after its name, zone paths for a
//! tool's path arguments (positional or `--path value`, `--path=value`), and zone paths after
//! an `@` in a message. Paths come from the worker's zones (`zones.rs`), are quoted as the
//! chat parser reads words back (`shell_word`), and a directory ends in `/` so that Tab goes
//! on into it. The menu ([`completion_menu`]) closes instead of showing an empty list, and
//! leaves the prompt as it is.

use std::collections::HashMap;

use golem_core::registry::ToolRegistry;
use reedline::{
    ColumnarMenu, Completer, CompletionResult, Editor, Menu, MenuBuilder, MenuEvent, MenuSettings,
    Painter, ReedlineMenu, Span, Suggestion,
};
use serde_json::Value;

use super::attach::mention_at_end;
use super::command::{BuiltinCommand, is_command};
use super::words::{Word, split, word_at};
use super::zones::{Kinds, PathEntry, ZoneFiles};
use crate::shell_word::shell_word;

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

/// Which of a tool's arguments take zone paths, and where positional words go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PathArgs {
    /// Properties that take a path, by the schema: a string (or list of strings) named `path`,
    /// `paths`, `from`, `to`, `file`, `dir`, `directory`, or ending in `_path`, `_paths`,
    /// `_file`, `_dir`; or one whose description speaks of a path.
    paths: Vec<String>,
    /// The required properties in schema order: the slots positional words fill, as
    /// `golem_core::coerce::options_to_args` fills them.
    required: Vec<String>,
    /// Every property, to map an option as typed (`--create-dirs`) to its name.
    properties: Vec<String>,
}

impl PathArgs {
    fn of(schema: &Value) -> PathArgs {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return PathArgs::default();
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        PathArgs {
            paths: properties
                .iter()
                .filter(|(name, property)| is_path_property(name, property))
                .map(|(name, _)| name.clone())
                .collect(),
            required: properties
                .keys()
                .filter(|name| required.contains(&name.as_str()))
                .cloned()
                .collect(),
            properties: properties.keys().cloned().collect(),
        }
    }

    /// The property an option key names, matched as `options_to_args` matches it (exactly,
    /// else ignoring case and `-` against `_`).
    fn property(&self, key: &str) -> Option<&str> {
        let wanted = normalize(key);
        self.properties
            .iter()
            .find(|name| *name == key)
            .or_else(|| {
                self.properties
                    .iter()
                    .find(|name| normalize(name) == wanted)
            })
            .map(String::as_str)
    }

    fn is_path(&self, property: &str) -> bool {
        self.paths.iter().any(|p| p == property)
    }
}

fn normalize(key: &str) -> String {
    key.to_lowercase().replace('-', "_")
}

/// Whether a schema property takes a zone path (see [`PathArgs::paths`]).
fn is_path_property(name: &str, property: &Value) -> bool {
    let types = |schema: &Value| -> Vec<String> {
        match schema.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(Into::into)
                .collect(),
            _ => Vec::new(),
        }
    };
    let variants: Vec<&Value> = match property.get("anyOf").and_then(Value::as_array) {
        Some(options) => options.iter().collect(),
        None => vec![property],
    };
    let stringy = variants.iter().any(|variant| {
        let ts = types(variant);
        ts.iter().any(|t| t == "string")
            || (ts.iter().any(|t| t == "array")
                && variant
                    .get("items")
                    .is_some_and(|items| types(items).iter().any(|t| t == "string")))
    });
    if !stringy {
        return false;
    }
    let named = matches!(
        name,
        "path" | "paths" | "from" | "to" | "file" | "dir" | "directory"
    ) || ["_path", "_paths", "_file", "_dir"]
        .iter()
        .any(|end| name.ends_with(end));
    let described = property
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|text| {
            text.split(|c: char| !c.is_alphanumeric())
                .any(|word| word.eq_ignore_ascii_case("path"))
        });
    named || described
}

/// Completes slash commands, tool names, option names and zone paths.
#[derive(Debug, Clone)]
pub struct ChatCompleter {
    tools: Vec<ToolEntry>,
    path_args: HashMap<String, PathArgs>,
    zones: ZoneFiles,
}

impl ChatCompleter {
    /// A completer over the built-in commands and `tools` (no paths).
    pub fn new(tools: Vec<ToolEntry>) -> Self {
        Self {
            tools,
            path_args: HashMap::new(),
            zones: ZoneFiles::default(),
        }
    }

    /// Also completes paths in `zones`: for the path arguments of the tools (their schemas
    /// from `registry`) and after `@` in a message.
    pub fn with_paths(mut self, registry: &ToolRegistry, zones: ZoneFiles) -> Self {
        self.path_args = self
            .tools
            .iter()
            .filter_map(|tool| {
                let schema = registry.get(&tool.name)?.input_schema();
                Some((tool.name.clone(), PathArgs::of(schema)))
            })
            .collect();
        self.zones = zones;
        self
    }

    /// The tool `typed` names: exactly, else ignoring case (as the chat runs it).
    fn tool(&self, typed: &str) -> Option<&ToolEntry> {
        self.tools.iter().find(|t| t.name == typed).or_else(|| {
            let lowered = typed.to_lowercase();
            self.tools.iter().find(|t| t.name.to_lowercase() == lowered)
        })
    }

    /// Suggestions for `line` with the cursor at its end.
    pub fn suggestions(&self, line: &str) -> Vec<Suggestion> {
        let command =
            line.starts_with('/') && (is_command(line) || !line.contains(char::is_whitespace));
        if !command {
            return match mention_at_end(line) {
                Some(mention) => self.paths(
                    &mention.word.text,
                    Kinds::Readable,
                    mention.at,
                    line.len(),
                    "@",
                ),
                None => Vec::new(),
            };
        }
        let words = split(line);
        let (current, before) = match words.split_last() {
            Some((last, before)) if last.end == line.len() => (last.clone(), before),
            Some(_) | None => (
                Word {
                    start: line.len(),
                    end: line.len(),
                    text: String::new(),
                    plain: true,
                    open: None,
                },
                words.as_slice(),
            ),
        };
        let span = Span::new(current.start, line.len());
        let suggest = |value: String, description: Option<String>| word(value, description, span);
        let Some(first) = before.first() else {
            // The name after the `/`, which stays.
            let typed = current.text.strip_prefix('/').unwrap_or(&current.text);
            let span = Span::new((current.start + 1).min(line.len()), line.len());
            let suggest =
                |value: String, description: Option<String>| word(value, description, span);
            let builtins = BuiltinCommand::ALL
                .iter()
                .map(|c| (c.name().to_owned(), c.summary().to_owned()));
            let tools = self
                .tools
                .iter()
                .map(|t| (t.name.clone(), t.description.clone()));
            return builtins
                .chain([("tool".to_owned(), "run a manual tool".to_owned())])
                .chain(tools)
                .filter(|(name, _)| name.starts_with(typed))
                .map(|(name, description)| suggest(name, Some(description)))
                .collect();
        };
        let head = first.text.strip_prefix('/').unwrap_or(&first.text);
        let via_tool = matches!(head.to_lowercase().as_str(), "tool" | "t");
        if via_tool && before.len() == 1 {
            return self
                .tools
                .iter()
                .filter(|t| t.name.starts_with(&current.text))
                .map(|t| suggest(t.name.clone(), Some(t.description.clone())))
                .collect();
        }
        let (tool_name, skip) = if via_tool {
            (before.get(1).map_or("", |w| w.text.as_str()), 2)
        } else {
            (head, 1)
        };
        let Some(tool) = self.tool(tool_name) else {
            return Vec::new();
        };
        let args = self.path_args.get(&tool.name);
        if current.is_option() {
            if let Some(eq) = current.text.find('=') {
                let key = current.text[..eq].trim_start_matches('-');
                let is_path = args.is_some_and(|a| a.property(key).is_some_and(|p| a.is_path(p)));
                let raw_eq = line[current.start..]
                    .find('=')
                    .map(|i| current.start + i + 1);
                return match (is_path, raw_eq) {
                    (true, Some(value_start)) => {
                        let value = word_at(line, value_start);
                        self.paths(&value.text, Kinds::Any, value_start, line.len(), "")
                    }
                    (true, None) | (false, _) => Vec::new(),
                };
            }
            let typed = current.text.trim_start_matches('-');
            return tool
                .options
                .iter()
                .filter(|option| option.starts_with(typed))
                .map(|option| suggest(format!("--{option}"), None))
                .collect();
        }
        let Some(args) = args else {
            return Vec::new();
        };
        match path_slot(&before[skip.min(before.len())..], args) {
            Some(property) if args.is_path(&property) => {
                self.paths(&current.text, Kinds::Any, current.start, line.len(), "")
            }
            Some(_) | None => Vec::new(),
        }
    }

    /// Zone entries for `typed`, each replacing `start..end` with `prefix` and the path as
    /// the parser reads it back; a file is followed by a space, a directory is not.
    fn paths(
        &self,
        typed: &str,
        kinds: Kinds,
        start: usize,
        end: usize,
        prefix: &str,
    ) -> Vec<Suggestion> {
        self.zones
            .entries(typed, kinds)
            .into_iter()
            .map(|PathEntry { path, name, dir }| Suggestion {
                value: format!("{prefix}{}", shell_word(&path)),
                display_override: Some(name),
                span: Span::new(start, end),
                append_whitespace: !dir,
                ..Suggestion::default()
            })
            .collect()
    }
}

/// A suggestion of a whole word (a name or an option) replacing `span`, then a space.
fn word(value: String, description: Option<String>, span: Span) -> Suggestion {
    Suggestion {
        value,
        description,
        span,
        append_whitespace: true,
        ..Suggestion::default()
    }
}

/// The property the word after `words` (a tool's words after its name) fills: the value of an
/// option left without one, else the next positional slot (the required properties no option
/// gave, in schema order).
fn path_slot(words: &[Word], args: &PathArgs) -> Option<String> {
    let mut given: Vec<String> = Vec::new();
    let mut positional = 0;
    let mut after_terminator = false;
    let mut pending: Option<&str> = None;
    for word in words {
        if pending.take().is_some() && !word.is_option() {
            continue;
        }
        if after_terminator || !word.is_option() {
            positional += 1;
            continue;
        }
        if word.text == "--" {
            after_terminator = true;
            continue;
        }
        let body = word.text.trim_start_matches('-');
        let (key, has_value) = match body.split_once('=') {
            Some((key, _)) => (key, true),
            None => (body, false),
        };
        let long = word.text.starts_with("--");
        if long || key.chars().count() == 1 {
            if let Some(property) = args.property(key) {
                given.push(property.to_owned());
            }
            if !has_value {
                pending = Some(key);
            }
        }
    }
    if let Some(key) = pending {
        return args.property(key).map(str::to_owned);
    }
    args.required
        .iter()
        .filter(|name| !given.contains(name))
        .nth(positional)
        .cloned()
}

impl Completer for ChatCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        let line = line.get(..pos).unwrap_or(line);
        CompletionResult::fresh(self.suggestions(line))
    }
}

/// The chat's completion menu (named `completion_menu`): reedline's columnar menu without
/// its marker (the prompt stays as it is while it is open), closed at once when there is
/// nothing to offer instead of showing the library's placeholder.
pub fn completion_menu() -> ReedlineMenu {
    let menu = ColumnarMenu::default()
        .with_name("completion_menu")
        .with_marker("");
    ReedlineMenu::EngineCompleter(Box::new(QuietMenu(menu)))
}

/// A columnar menu that deactivates itself when its values come back empty.
struct QuietMenu(ColumnarMenu);

impl QuietMenu {
    /// Closes the menu when its (final) values are empty.
    fn close_if_empty(&mut self) {
        if self.0.is_active() && self.0.get_values().is_empty() && !self.0.results_are_provisional()
        {
            self.0.menu_event(MenuEvent::Deactivate);
        }
    }
}

impl Menu for QuietMenu {
    fn settings(&self) -> &MenuSettings {
        self.0.settings()
    }

    fn is_active(&self) -> bool {
        self.0.is_active()
    }

    fn set_active(&mut self, active: bool) {
        self.0.set_active(active);
    }

    fn clear_input(&mut self) {
        self.0.clear_input();
    }

    fn on_activate(&mut self) {
        self.0.on_activate();
    }

    fn on_deactivate(&mut self) {
        self.0.on_deactivate();
    }

    fn menu_event(&mut self, event: MenuEvent) {
        self.0.menu_event(event);
    }

    fn can_quick_complete(&self) -> bool {
        self.0.can_quick_complete()
    }

    fn can_partially_complete(
        &mut self,
        values_updated: bool,
        editor: &mut Editor,
        completer: &mut dyn Completer,
    ) -> bool {
        let done = self
            .0
            .can_partially_complete(values_updated, editor, completer);
        self.close_if_empty();
        done
    }

    fn update_values(&mut self, editor: &mut Editor, completer: &mut dyn Completer) {
        self.0.update_values(editor, completer);
        self.close_if_empty();
    }

    fn reset_position(&mut self) {
        self.0.reset_position();
    }

    fn update_working_details(
        &mut self,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        painter: &Painter,
    ) {
        self.0.update_working_details(editor, completer, painter);
        self.close_if_empty();
    }

    fn replace_in_buffer(&self, editor: &mut Editor) {
        self.0.replace_in_buffer(editor);
    }

    fn menu_required_lines(&self, terminal_columns: u16) -> u16 {
        self.0.menu_required_lines(terminal_columns)
    }

    fn menu_string(&self, available_lines: u16, use_ansi_coloring: bool) -> String {
        self.0.menu_string(available_lines, use_ansi_coloring)
    }

    fn min_rows(&self) -> u16 {
        self.0.min_rows()
    }

    fn get_values(&self) -> &[Suggestion] {
        self.0.get_values()
    }

    fn results_are_provisional(&self) -> bool {
        self.0.results_are_provisional()
    }

    fn is_awaiting_first_answer(&self) -> bool {
        self.0.is_awaiting_first_answer()
    }

    fn set_cursor_pos(&mut self, pos: (u16, u16)) {
        self.0.set_cursor_pos(pos);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_file_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file."},
                "encoding": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "offset": {"type": ["integer", "null"]},
                "limit": {"type": ["integer", "null"]}
            },
            "required": ["path"]
        })
    }

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
        // A command name is completed after its `/`, which stays.
        let suggestions = completer().suggestions("/re");
        assert_eq!(suggestions[0].span, Span::new(1, 3));
        let suggestions = completer().suggestions("/tool re");
        assert_eq!(suggestions[0].span, Span::new(6, 8));
    }

    #[test]
    fn path_properties_are_read_from_the_schema() {
        let args = PathArgs::of(&read_file_schema());
        assert_eq!(args.paths, ["path"]);
        assert_eq!(args.required, ["path"]);
        let moved = PathArgs::of(&json!({"properties": {
            "from": {"type": "string"}, "to": {"type": "string"},
            "overwrite": {"type": "boolean"},
            "scope": {"type": "string", "description": "Only changes under this path."},
            "paths": {"type": "array", "items": {"type": "string"}},
            "to_count": {"type": "integer"},
            "message": {"type": "string", "description": "The commit message."}
        }}));
        assert_eq!(moved.paths, ["from", "to", "scope", "paths"]);
    }

    #[test]
    fn the_slot_of_the_next_word_follows_the_parser() {
        let args = PathArgs::of(&json!({
            "properties": {
                "path": {"type": "string"}, "old": {"type": "string"},
                "count": {"type": "integer"}, "recursive": {"type": "boolean"}
            },
            "required": ["path", "old"]
        }));
        let slot = |typed: &str| path_slot(&split(typed), &args);
        assert_eq!(slot("").as_deref(), Some("path"));
        assert_eq!(slot("/a").as_deref(), Some("old"));
        assert_eq!(slot("/a b").as_deref(), None);
        assert_eq!(slot("--path /a").as_deref(), Some("old"));
        assert_eq!(slot("--count").as_deref(), Some("count"));
        assert_eq!(slot("--PATH").as_deref(), Some("path"));
        assert_eq!(slot("--count=3").as_deref(), Some("path"));
        assert_eq!(slot("--recursive --path").as_deref(), Some("path"));
        assert_eq!(slot("-- --x").as_deref(), Some("old"));
    }

    #[test]
    fn quoting_is_what_the_parser_reads_back() {
        use super::super::command::parse_command;
        for path in [
            "/notes/a.md",
            "/notes/my file.md",
            "/notes/it's here",
            "/n/a\"b\\c",
        ] {
            let line = format!("/read_file {}", shell_word(path));
            let parsed = parse_command(&line).map_err(|e| e.to_string());
            assert_eq!(parsed.map(|p| p.args), Ok(vec![path.to_owned()]), "{line}");
            let typed = split(&line);
            assert_eq!(typed[1].text, path, "{line}");
        }
    }

    #[test]
    fn without_zones_paths_complete_to_nothing_and_never_to_the_host() {
        assert!(values("/read_file ").is_empty());
        assert!(values("/read_file /").is_empty());
        assert!(values("see @/").is_empty());
    }
}
