//! What a call asks the client's user: an approval ([`crate::elicit`]), or a question a tool
//! asks while it runs (an `inputRequired` event, such as an MCP toolset's own elicitation).
//! Either becomes one elicitation request — asked inline, or carried by an input-required
//! result for a 2026-07-28 client — and the client's answer becomes the action that settles
//! it. A form question's message is its prompt prefixed by who asks; its requested schema is
//! a flat object with one primitive property per form field (text, number, integer, boolean,
//! or a choice of strings), its defaults and required fields; a question without fields is a
//! one-field text form. Accept sends the content back as the values (`inputResponse`, or the
//! `userInput` a plain text question takes); decline and cancel are passed on as such.

use std::collections::BTreeMap;

use golem_protocol::{
    ActionEvent, ApprovalRequest, DisplayEvent, FieldType, FormField, InputAction,
};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    PrimitiveSchemaDefinition,
};
use serde_json::{Map, Value, json};

use crate::elicit;

/// The field of a question asked without a form: the answer as text.
pub const ANSWER_FIELD: &str = "answer";

/// A question a tool asks while it runs (an `inputRequired` event).
#[derive(Debug, Clone, PartialEq)]
pub struct FormQuestion {
    /// The runtime's id of the question.
    pub request_id: String,
    /// What to ask.
    pub prompt: String,
    /// Who asks (e.g. "MCP server `everything`"), if not the runtime.
    pub source: Option<String>,
    /// The form; empty for a plain text question.
    pub fields: Vec<FormField>,
}

impl FormQuestion {
    /// The question of an `inputRequired` event; `None` for any other event.
    pub fn from_event(event: DisplayEvent) -> Option<Self> {
        match event {
            DisplayEvent::InputRequired {
                request_id,
                prompt,
                source,
                fields,
            } => Some(Self {
                request_id,
                prompt,
                source,
                fields,
            }),
            _ => None,
        }
    }

    /// The message: the prompt, prefixed by who asks.
    pub fn message(&self) -> String {
        match &self.source {
            Some(source) => format!("{source} asks: {}", self.prompt),
            None => self.prompt.clone(),
        }
    }

    /// The form asked for: one property per field (a single text field without fields).
    pub fn schema(&self) -> ElicitationSchema {
        if self.fields.is_empty() {
            let answer = property(&json!({"type": "string", "title": "Answer"}));
            let mut schema =
                ElicitationSchema::new(BTreeMap::from([(ANSWER_FIELD.to_owned(), answer)]));
            schema.required = Some(vec![ANSWER_FIELD.to_owned()]);
            return schema;
        }
        let properties: BTreeMap<String, PrimitiveSchemaDefinition> = self
            .fields
            .iter()
            .map(|field| (field.name.clone(), field_schema(field)))
            .collect();
        let mut schema = ElicitationSchema::new(properties);
        schema.property_order = Some(self.fields.iter().map(|f| f.name.clone()).collect());
        let required: Vec<String> = self
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.clone())
            .collect();
        schema.required = (!required.is_empty()).then_some(required);
        schema
    }

    /// The elicitation request asking it.
    pub fn request_params(&self) -> ElicitRequestParams {
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: self.message(),
            requested_schema: self.schema(),
        }
    }

    /// The action that answers it with the client's `answer`.
    pub fn response(&self, answer: &ElicitResult) -> ActionEvent {
        let action = match answer.action {
            ElicitationAction::Accept => InputAction::Accept,
            ElicitationAction::Decline => InputAction::Decline,
            _ => InputAction::Cancel,
        };
        let values = match (&answer.content, action) {
            (Some(Value::Object(values)), InputAction::Accept) => values.clone(),
            _ => Map::new(),
        };
        if self.fields.is_empty() && action == InputAction::Accept {
            let content = match values.get(ANSWER_FIELD) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            return ActionEvent::UserInput {
                request_id: Some(self.request_id.clone()),
                content,
            };
        }
        ActionEvent::InputResponse {
            request_id: self.request_id.clone(),
            action,
            values: (action == InputAction::Accept).then_some(values),
        }
    }

    /// The refusal given when the client could not ask its user.
    pub fn unavailable(&self) -> ActionEvent {
        ActionEvent::InputResponse {
            request_id: self.request_id.clone(),
            action: InputAction::Decline,
            values: None,
        }
    }
}

/// The schema of one field; what MCP cannot express (a choice of non-text values, a default
/// of the wrong type) is left out or asked as text, which the runtime types by the tool's own
/// schema.
fn field_schema(field: &FormField) -> PrimitiveSchemaDefinition {
    let mut schema = Map::new();
    schema.insert("title".into(), json!(field.name));
    if let Some(description) = &field.description {
        schema.insert("description".into(), json!(description));
    }
    let default = field.default.clone();
    match field.field_type {
        FieldType::Text => {
            schema.insert("type".into(), json!("string"));
            if let Some(default @ Value::String(_)) = default {
                schema.insert("default".into(), default);
            }
        }
        FieldType::Number if field.integer => {
            schema.insert("type".into(), json!("integer"));
            if let Some(default) = default.as_ref().and_then(Value::as_i64) {
                schema.insert("default".into(), json!(default));
            }
        }
        FieldType::Number => {
            schema.insert("type".into(), json!("number"));
            if let Some(default) = default.as_ref().and_then(Value::as_f64) {
                schema.insert("default".into(), json!(default));
            }
        }
        FieldType::Boolean => {
            schema.insert("type".into(), json!("boolean"));
            if let Some(default @ Value::Bool(_)) = default {
                schema.insert("default".into(), default);
            }
        }
        FieldType::Select => {
            schema.insert("type".into(), json!("string"));
            let choices: Vec<Value> = field
                .options
                .iter()
                .map(|option| json!({"const": as_text(&option.value), "title": option.label}))
                .collect();
            if !choices.is_empty() {
                schema.insert("oneOf".into(), Value::Array(choices));
            }
            if let Some(default) = default.filter(|d| !d.is_null()) {
                schema.insert("default".into(), json!(as_text(&default)));
            }
        }
    }
    let value = Value::Object(schema);
    let plain = json!({
        "type": "string",
        "title": field.name,
        "description": field.description,
    });
    serde_json::from_value(value).unwrap_or_else(|_| property(&plain))
}

/// A value as the text a choice stands for: a string as it is, anything else as JSON.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The property `value` describes, or a plain text property when it does not fit.
fn property(value: &Value) -> PrimitiveSchemaDefinition {
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        map.retain(|_, v| !v.is_null());
    }
    serde_json::from_value(value)
        .unwrap_or_else(|_| PrimitiveSchemaDefinition::String(rmcp::model::StringSchema::default()))
}

/// What a call asks its client's user.
#[derive(Debug, Clone)]
pub enum Question {
    /// A tool call waits for consent.
    Approval(Box<ApprovalRequest>),
    /// A tool asks for input.
    Form(Box<FormQuestion>),
}

impl Question {
    /// The runtime's id of the question.
    pub fn request_id(&self) -> &str {
        match self {
            Question::Approval(request) => &request.request_id,
            Question::Form(question) => &question.request_id,
        }
    }

    /// The key of the question in an input-required result's `inputRequests`.
    pub fn key(&self) -> &'static str {
        match self {
            Question::Approval(_) => "approval",
            Question::Form(_) => "input",
        }
    }

    /// What the call shows as progress while it waits.
    pub fn waiting(&self) -> String {
        match self {
            Question::Approval(request) => format!("waiting for approval: {}", request.tool_name),
            Question::Form(question) => format!("waiting for an answer: {}", question.message()),
        }
    }

    /// The elicitation request asking it, for a call of worker `worker`.
    pub fn request_params(&self, worker: &str) -> ElicitRequestParams {
        match self {
            Question::Approval(request) => elicit::request_params(worker, request),
            Question::Form(question) => question.request_params(),
        }
    }

    /// The action that settles it with the client's `answer`.
    pub fn response(&self, answer: &ElicitResult) -> ActionEvent {
        match self {
            Question::Approval(request) => {
                ActionEvent::ApprovalResponse(elicit::response(&request.request_id, answer))
            }
            Question::Form(question) => question.response(answer),
        }
    }

    /// The action that settles it when the client could not ask its user (`why`).
    pub fn unavailable(&self, why: &str) -> ActionEvent {
        match self {
            Question::Approval(request) => {
                ActionEvent::ApprovalResponse(elicit::unavailable(&request.request_id, why))
            }
            Question::Form(question) => question.unavailable(),
        }
    }
}

#[cfg(test)]
mod tests {
    use golem_protocol::FieldOption;

    use super::*;

    fn field(name: &str, field_type: FieldType) -> FormField {
        FormField {
            name: name.into(),
            field_type,
            required: false,
            default: None,
            description: None,
            options: Vec::new(),
            integer: false,
        }
    }

    fn question(fields: Vec<FormField>) -> FormQuestion {
        FormQuestion {
            request_id: "input-1".into(),
            prompt: "Who are you?".into(),
            source: Some("MCP server `everything`".into()),
            fields,
        }
    }

    #[test]
    fn the_form_is_a_flat_object_of_the_fields() {
        let name = FormField {
            required: true,
            description: Some("Your name".into()),
            ..field("name", FieldType::Text)
        };
        let age = FormField {
            integer: true,
            default: Some(json!(42)),
            ..field("age", FieldType::Number)
        };
        let ratio = FormField {
            default: Some(json!(2.5)),
            ..field("ratio", FieldType::Number)
        };
        let agree = FormField {
            default: Some(json!(true)),
            ..field("agree", FieldType::Boolean)
        };
        let pet = FormField {
            default: Some(json!("cat")),
            options: vec![
                FieldOption {
                    value: json!("cat"),
                    label: "Cats".into(),
                },
                FieldOption {
                    value: json!(2),
                    label: "Two".into(),
                },
            ],
            ..field("pet", FieldType::Select)
        };
        let question = question(vec![name, age, ratio, agree, pet]);
        assert_eq!(
            question.message(),
            "MCP server `everything` asks: Who are you?"
        );
        let schema = serde_json::to_value(question.schema()).unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "name", "description": "Your name"},
                    "age": {"type": "integer", "title": "age", "default": 42},
                    "ratio": {"type": "number", "title": "ratio", "default": 2.5},
                    "agree": {"type": "boolean", "title": "agree", "default": true},
                    "pet": {"type": "string", "title": "pet", "default": "cat", "oneOf": [
                        {"const": "cat", "title": "Cats"},
                        {"const": "2", "title": "Two"}
                    ]}
                },
                "required": ["name"]
            })
        );
        let order: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["name", "age", "ratio", "agree", "pet"]);
    }

    #[test]
    fn a_question_without_fields_is_one_text_field() {
        let plain = FormQuestion {
            source: None,
            ..question(Vec::new())
        };
        assert_eq!(plain.message(), "Who are you?");
        let schema = serde_json::to_value(plain.schema()).unwrap();
        assert_eq!(schema["properties"][ANSWER_FIELD]["type"], "string");
        assert_eq!(schema["required"], json!([ANSWER_FIELD]));
        let answer =
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": "Ada"}));
        assert_eq!(
            plain.response(&answer),
            ActionEvent::UserInput {
                request_id: Some("input-1".into()),
                content: "Ada".into()
            }
        );
    }

    #[test]
    fn answers_become_input_responses() {
        let form = question(vec![field("name", FieldType::Text)]);
        let accepted = ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"name": "Grace Hopper"}));
        let mut values = Map::new();
        values.insert("name".into(), json!("Grace Hopper"));
        assert_eq!(
            form.response(&accepted),
            ActionEvent::InputResponse {
                request_id: "input-1".into(),
                action: InputAction::Accept,
                values: Some(values),
            }
        );
        for (action, expected) in [
            (ElicitationAction::Decline, InputAction::Decline),
            (ElicitationAction::Cancel, InputAction::Cancel),
        ] {
            assert_eq!(
                form.response(&ElicitResult::new(action)),
                ActionEvent::InputResponse {
                    request_id: "input-1".into(),
                    action: expected,
                    values: None,
                }
            );
        }
        assert_eq!(
            form.unavailable(),
            ActionEvent::InputResponse {
                request_id: "input-1".into(),
                action: InputAction::Decline,
                values: None,
            }
        );
    }
}
