//! Slash commands typed in the chat: parsing (`/tool git_push --branch main`) and classifying
//! (built-in, manual tool, unknown with a suggestion). Typing a tool command's options by the
//! tool's JSON Schema is `golem_core::coerce` (forms type their answers the same way); running
//! the commands is `super::slash`.

mod classify;
mod parser;

pub use classify::{BuiltinCommand, CommandKind, classify_command};
pub use parser::{ParsedCommand, is_command, parse_command};

#[cfg(test)]
mod tests {
    use golem_core::coerce::options_to_args;
    use serde_json::{Value, json};

    use super::*;

    fn push_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "branch": {"type": "string", "description": "Target branch"},
                "remote": {"type": "string", "enum": ["origin", "upstream"], "default": "origin"},
                "force": {"type": "boolean", "default": false},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "env": {"type": "object"}
            },
            "required": ["branch"]
        })
    }

    /// A line parsed, classified and typed, as the chat does with `/tool NAME …`.
    #[test]
    fn a_line_is_parsed_classified_and_typed() -> Result<(), Box<dyn std::error::Error>> {
        let line = "/tool git_push --branch main --force";
        assert!(is_command(line));
        let parsed = parse_command(line)?;
        let CommandKind::Tool {
            tool_name, parsed, ..
        } = classify_command(&parsed, &["git_push"])
        else {
            panic!("not a tool command")
        };
        assert_eq!(tool_name, "git_push");
        let schema = json!({"type": "object", "properties": {
            "branch": {"type": "string"}, "force": {"type": "boolean"}}});
        let args = options_to_args(&parsed.args, &parsed.options, &schema)?;
        assert_eq!(json!(args), json!({"branch": "main", "force": true}));
        Ok(())
    }

    #[test]
    fn seed_example_types_options() {
        let parsed = match parse_command("/git_push --branch main --force") {
            Ok(parsed) => parsed,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            options_to_args(&parsed.args, &parsed.options, &push_schema())
                .map(Value::Object)
                .ok(),
            Some(json!({"branch": "main", "force": true}))
        );
        let line = match parse_command("/tool git_push --branch main --force -i") {
            Ok(parsed) => parsed,
            Err(e) => panic!("{e}"),
        };
        let CommandKind::Tool {
            parsed: invocation, ..
        } = classify_command(&line, &["git_push"])
        else {
            panic!("not a tool command");
        };
        let typed = options_to_args(&invocation.args, &invocation.options, &push_schema())
            .map(Value::Object)
            .ok();
        assert_eq!(typed, Some(json!({"branch": "main", "force": true})));
    }
}
