//! The interactive form of `/tool NAME -i`: one prompt per field of the tool's input schema
//! (its type, whether it is required, its default, its choices and description), typed with
//! the same rules as command-line options.

use golem_core::coerce::field_value;
use golem_core::fields::derive_fields_from_schema;
use golem_protocol::{FieldType, FormField};
use serde_json::{Map, Value};

use crate::frontend::ask::{Input, ask};

/// How a field is asked for: `path (text, required)› `.
pub fn field_prompt(field: &FormField) -> String {
    let kind = match field.field_type {
        FieldType::Text => "text",
        FieldType::Number if field.integer => "integer",
        FieldType::Number => "number",
        FieldType::Boolean => "yes/no",
        FieldType::Select => "choice",
    };
    let mut parts = vec![
        kind.to_owned(),
        if field.required {
            "required"
        } else {
            "optional"
        }
        .to_owned(),
    ];
    if let Some(default) = &field.default {
        parts.push(format!("default {}", plain(default)));
    }
    if !field.options.is_empty() {
        let choices: Vec<String> = field.options.iter().map(|o| plain(&o.value)).collect();
        parts.push(format!("one of {}", choices.join("|")));
    }
    format!("{} ({})› ", field.name, parts.join(", "))
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Asks for every field of `schema`; `print` shows descriptions and errors. `None` when the
/// user gave up (Ctrl+C / Ctrl+D).
pub fn fill(schema: &Value, print: &mut dyn FnMut(&str)) -> Option<Map<String, Value>> {
    let fields = derive_fields_from_schema(schema);
    let mut options = Map::new();
    for field in &fields {
        if let Some(description) = &field.description {
            print(&format!("  {description}"));
        }
        loop {
            let answer = match ask(&field_prompt(field), "") {
                Input::Line(line) => line.trim().to_owned(),
                Input::CtrlC | Input::CtrlD => return None,
            };
            if answer.is_empty() {
                if field.required && field.default.is_none() {
                    print(&format!("  {} is required", field.name));
                    continue;
                }
                break;
            }
            // Type the answer now, so a mistake is asked again at once; the error names the
            // field, as the form does (not `--field`: a form has no options).
            match field_value(schema, &field.name, &answer) {
                Ok(value) => {
                    options.insert(field.name.clone(), value);
                    break;
                }
                Err(e) => print(&format!("  {e}")),
            }
        }
    }
    // The fields come in the schema's property order, as the arguments go.
    Some(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompts_name_the_type_requirement_default_and_choices() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "where"},
                "limit": {"type": "integer", "default": 10},
                "mode": {"enum": ["fast", "slow"]},
                "all": {"type": "boolean"}
            },
            "required": ["path"]
        });
        let prompts: Vec<String> = derive_fields_from_schema(&schema)
            .iter()
            .map(field_prompt)
            .collect();
        assert_eq!(
            prompts,
            [
                "path (text, required)› ",
                "limit (integer, optional, default 10)› ",
                "mode (choice, optional, one of fast|slow)› ",
                "all (yes/no, optional)› ",
            ]
        );
    }
}
