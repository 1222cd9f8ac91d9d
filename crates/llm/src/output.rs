//! A structured final answer: the JSON Schema a worker's answer must meet
//! ([`OutputFormat`]), and what each wire needs to ask for it natively — OpenAI's `strict`
//! flag, and the `final_result` tool that stands for the answer on the Anthropic wire.
//!
//! Whether an answer meets the schema is the runtime's to check; nothing here validates.

use golem_protocol::ToolDefinition;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The name of the tool the Anthropic wire offers for the final answer: the model answers by
/// calling it, and the call's input is the answer (never run as a tool).
pub const FINAL_RESULT_TOOL: &str = "final_result";

/// The key under which a schema that does not describe an object is wrapped for the
/// `final_result` tool, whose input must be an object.
const WRAPPED_KEY: &str = "result";

/// What the Anthropic wire adds to the system prompt when it offers [`FINAL_RESULT_TOOL`].
pub const FINAL_RESULT_INSTRUCTION: &str = "When you have your final answer, give it by calling \
the `final_result` tool with the answer as its input, and do nothing else in that message.";

/// The final answer as a JSON value valid against `schema`, asked of the model natively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputFormat {
    /// A name for the schema (`[a-zA-Z0-9_-]{1,64}`, what OpenAI's `json_schema.name` takes):
    /// the worker's name.
    pub name: String,
    /// The JSON Schema the answer must be valid against.
    pub schema: Value,
}

impl OutputFormat {
    /// The format `schema`, named `name` (characters OpenAI refuses become `_`, and it is cut
    /// to 64 characters; an empty name becomes `output`).
    pub fn new(name: &str, schema: Value) -> Self {
        let mut name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if name.is_empty() {
            name.push_str("output");
        }
        Self { name, schema }
    }

    /// Whether the schema meets the rules of OpenAI's strict structured outputs, so that it
    /// may be sent with `strict: true`: an object at the root; every object closed
    /// (`additionalProperties: false`) with every property required; only the keywords strict
    /// mode supports. Any other schema is sent with `strict: false` (the model is then
    /// guided, not constrained, and the runtime's validation is what holds).
    pub fn strict(&self) -> bool {
        is_object_schema(&self.schema) && strict_node(&self.schema)
    }

    /// The `input_schema` of the `final_result` tool: the schema itself when it describes an
    /// object, else an object whose one required property `result` is the schema.
    pub fn tool_input_schema(&self) -> Value {
        if is_object_schema(&self.schema) {
            self.schema.clone()
        } else {
            json!({
                "type": "object",
                "properties": { WRAPPED_KEY: self.schema },
                "required": [WRAPPED_KEY],
            })
        }
    }

    /// The answer carried by a `final_result` call's `input`: the input itself, or its
    /// `result` when the schema was wrapped (see [`Self::tool_input_schema`]); an input
    /// without `result` is returned as it is, for validation to refuse.
    pub fn answer_from_tool_input(&self, input: Value) -> Value {
        if is_object_schema(&self.schema) {
            return input;
        }
        match input {
            Value::Object(mut map) if map.contains_key(WRAPPED_KEY) => {
                map.remove(WRAPPED_KEY).unwrap_or(Value::Null)
            }
            other => other,
        }
    }

    /// The `final_result` tool offered on the Anthropic wire.
    pub fn final_result_tool(&self) -> ToolDefinition {
        ToolDefinition {
            name: FINAL_RESULT_TOOL.to_owned(),
            description: "Give your final answer. Its input is the answer; call it once, when \
                          you are done."
                .to_owned(),
            input_schema: self.tool_input_schema(),
        }
    }
}

/// Whether `schema` describes an object: `type: object` (alone or first of a list).
fn is_object_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(_) | None => false,
    }
}

/// Keywords OpenAI's strict mode supports (its "supported schemas" list).
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$defs",
    "definitions",
    "$ref",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Whether one schema node, and every node under it, meets strict mode's rules.
fn strict_node(node: &Value) -> bool {
    let Value::Object(map) = node else {
        // `true`/`false` schemas are not accepted in strict mode.
        return false;
    };
    if map
        .keys()
        .any(|key| !STRICT_KEYWORDS.contains(&key.as_str()))
    {
        return false;
    }
    let describes_object = is_object_schema(node) || map.contains_key("properties");
    if describes_object && !closed_and_all_required(map) {
        return false;
    }
    let children_ok = |key: &str| match map.get(key) {
        None => true,
        Some(Value::Object(children)) => children.values().all(strict_node),
        Some(_) => false,
    };
    let list_ok = |key: &str| match map.get(key) {
        None => true,
        Some(Value::Array(items)) => items.iter().all(strict_node),
        Some(_) => false,
    };
    let items_ok = match map.get("items") {
        None => true,
        Some(items) => strict_node(items),
    };
    children_ok("properties")
        && children_ok("$defs")
        && children_ok("definitions")
        && list_ok("anyOf")
        && items_ok
}

/// `additionalProperties: false`, and every property listed in `required`.
fn closed_and_all_required(map: &Map<String, Value>) -> bool {
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        Some(_) => return false,
        None => Vec::new(),
    };
    match map.get("properties") {
        None => true,
        Some(Value::Object(properties)) => properties
            .keys()
            .all(|name| required.contains(&name.as_str())),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_only_for_closed_objects_with_every_property_required() {
        let strict = json!({"type": "object", "additionalProperties": false,
            "properties": {"verdict": {"enum": ["ok", "bad"]},
                           "reasons": {"type": "array", "items": {"type": "string"}}},
            "required": ["verdict", "reasons"]});
        assert!(OutputFormat::new("w", strict).strict());
        let open = json!({"type": "object", "properties": {"verdict": {"enum": ["ok"]}},
            "required": ["verdict"]});
        assert!(!OutputFormat::new("w", open).strict());
        let optional = json!({"type": "object", "additionalProperties": false,
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"]});
        assert!(!OutputFormat::new("w", optional).strict());
        let nested_open = json!({"type": "object", "additionalProperties": false,
            "properties": {"a": {"type": "object", "properties": {"x": {"type": "string"}},
                                 "required": ["x"]}},
            "required": ["a"]});
        assert!(!OutputFormat::new("w", nested_open).strict());
        let unsupported = json!({"type": "object", "additionalProperties": false,
            "properties": {}, "not": {"type": "null"}});
        assert!(!OutputFormat::new("w", unsupported).strict());
        assert!(!OutputFormat::new("w", json!({"type": "array"})).strict());
    }

    #[test]
    fn a_schema_that_is_not_an_object_is_wrapped_for_the_tool() {
        let format = OutputFormat::new("w", json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(
            format.tool_input_schema()["properties"]["result"]["type"],
            "array"
        );
        assert_eq!(
            format.answer_from_tool_input(json!({"result": ["a"]})),
            json!(["a"])
        );
        let object = OutputFormat::new("w", json!({"type": "object"}));
        assert_eq!(object.tool_input_schema(), json!({"type": "object"}));
        assert_eq!(
            object.answer_from_tool_input(json!({"a": 1})),
            json!({"a": 1})
        );
    }

    #[test]
    fn names_are_made_acceptable() {
        assert_eq!(
            OutputFormat::new("my worker.v2", json!({})).name,
            "my_worker_v2"
        );
        assert_eq!(OutputFormat::new("", json!({})).name, "output");
    }
}
