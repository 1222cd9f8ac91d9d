//! Form fields derived from a tool's JSON Schema, for the manual-tool UI (browser forms,
//! interactive `/tool NAME -i`).
//!
//! Also home of the small JSON Schema reading helpers the slash-command coercion shares: local
//! `$ref` resolution (`#/$defs/...`, `#/definitions/...`, any local JSON pointer), unwrapping of
//! `Option<T>`-style nullable unions, and sorting a property schema into a [`Kind`].

use golem_protocol::form::{FieldOption, FieldType, FormField};
use serde_json::Value;

/// How many `$ref`/wrapper hops (and nested unions) are followed before giving up on a schema.
const MAX_DEPTH: usize = 32;

/// Derives one form field per property of an object schema, in property order.
///
/// `string` → text, `number` → number, `integer` → number with `integer`, `boolean` → boolean,
/// `enum` or a union of `const` branches → select, arrays and objects → text (the description
/// says what to type). Local `$ref`s are followed, nullable unions unwrapped (such fields are not
/// required), and `default` / `description` copied from the property or its definition (a `null`
/// default is left out). A schema without `properties` gives no fields.
pub fn derive_fields_from_schema(schema: &Value) -> Vec<FormField> {
    let root = resolve(schema, schema).schema;
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required = required_names(root);
    properties
        .iter()
        .map(|(name, property)| {
            field_for(schema, name, property, required.contains(&name.as_str()))
        })
        .collect()
}

/// Builds the form field for one property.
fn field_for(root: &Value, name: &str, property: &Value, listed_required: bool) -> FormField {
    let view = resolve(root, property);
    let mut field = FormField {
        name: name.to_owned(),
        field_type: FieldType::Text,
        required: listed_required && !view.nullable,
        default: view.default.cloned(),
        description: view.description.map(str::to_owned),
        options: Vec::new(),
        integer: false,
    };
    let note = match kind(root, view.schema) {
        Kind::Text | Kind::Any | Kind::AnyOf(_) => None,
        Kind::Integer => {
            field.field_type = FieldType::Number;
            field.integer = true;
            None
        }
        Kind::Number => {
            field.field_type = FieldType::Number;
            None
        }
        Kind::Boolean => {
            field.field_type = FieldType::Boolean;
            None
        }
        Kind::Enum(choices) => {
            field.field_type = FieldType::Select;
            field.options = choices
                .iter()
                .map(|choice| FieldOption {
                    value: choice.value.clone(),
                    label: choice
                        .label
                        .map_or_else(|| value_text(choice.value), str::to_owned),
                })
                .collect();
            None
        }
        Kind::Array(_) => Some("comma-separated values or a JSON array"),
        Kind::Object => Some("a JSON object"),
    };
    if let Some(note) = note {
        field.description = Some(match field.description {
            Some(description) => format!("{description} ({note})"),
            None => capitalize(note),
        });
    }
    field
}

/// `text` with its first letter in upper case.
fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A choice's value as plain text: strings without quotes, anything else as JSON.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The names in an object schema's `required` list.
pub(crate) fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A schema after following `$ref`s and wrappers, with what was collected on the way.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved<'a> {
    /// The schema finally reached.
    pub(crate) schema: &'a Value,
    /// Whether `null` is allowed (an `Option<T>`-style union, or `null` among the types).
    pub(crate) nullable: bool,
    /// The first `description` met, outermost first.
    pub(crate) description: Option<&'a str>,
    /// The first `title` met, outermost first.
    pub(crate) title: Option<&'a str>,
    /// The first non-null `default` met, outermost first.
    pub(crate) default: Option<&'a Value>,
}

/// Follows local `$ref`s, single-element `allOf` wrappers and unions with one non-null branch.
pub(crate) fn resolve<'a>(root: &'a Value, schema: &'a Value) -> Resolved<'a> {
    let mut view = Resolved {
        schema,
        nullable: false,
        description: None,
        title: None,
        default: None,
    };
    for _ in 0..MAX_DEPTH {
        let current = view.schema;
        view.description = view
            .description
            .or_else(|| current.get("description").and_then(Value::as_str));
        view.title = view
            .title
            .or_else(|| current.get("title").and_then(Value::as_str));
        view.default = view
            .default
            .or_else(|| current.get("default").filter(|value| !value.is_null()));
        if let Some(target) = current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| lookup_ref(root, reference))
        {
            view.schema = target;
            continue;
        }
        if let Some([only]) = current
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            view.schema = only;
            continue;
        }
        if let Some(branches) = union_branches(current) {
            let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null_schema(b)).collect();
            view.nullable |= non_null.len() < branches.len();
            if let [only] = non_null.as_slice() {
                view.schema = only;
                continue;
            }
        }
        let null_type = match current.get("type") {
            Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
            _ => false,
        };
        let null_choice = current
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(Value::is_null));
        view.nullable |= null_type || null_choice;
        break;
    }
    view
}

/// Looks up a local reference (`#`, `#/$defs/Name`, `#/definitions/Name`, any `#/pointer`).
fn lookup_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// The branches of an `anyOf` or `oneOf`, if the schema is one.
fn union_branches(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
}

/// Whether a schema only admits `null`.
fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
        || schema.get("const").is_some_and(Value::is_null)
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_null))
}

/// One allowed value of an enumeration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Choice<'a> {
    /// The value itself.
    pub(crate) value: &'a Value,
    /// A human label (a `const` branch's title or description), if the schema gives one.
    pub(crate) label: Option<&'a str>,
}

/// What sort of value a (resolved) property schema takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind<'a> {
    /// `type: string`.
    Text,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
    /// `enum`, `const`, or a union whose branches are all `const`/`enum`; nulls left out.
    Enum(Vec<Choice<'a>>),
    /// `type: array`, with its `items` schema if given.
    Array(Option<&'a Value>),
    /// `type: object`.
    Object,
    /// Several possible shapes (a union, or several types), in schema order.
    AnyOf(Vec<Kind<'a>>),
    /// No usable type information.
    Any,
}

/// Sorts a resolved schema (see [`resolve`]) into a [`Kind`].
pub(crate) fn kind<'a>(root: &'a Value, schema: &'a Value) -> Kind<'a> {
    let mut budget = MAX_KIND_NODES;
    kind_at(root, schema, &mut budget)
}

/// How many schemas one [`kind`] call may look at (guards self-referencing and huge unions).
const MAX_KIND_NODES: usize = 256;

/// [`kind`] with a budget shared by all nested unions.
fn kind_at<'a>(root: &'a Value, schema: &'a Value, budget: &mut usize) -> Kind<'a> {
    if *budget == 0 {
        return Kind::Any;
    }
    *budget -= 1;
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Kind::Enum(plain_choices(values));
    }
    if let Some(value) = schema.get("const").filter(|value| !value.is_null()) {
        return Kind::Enum(vec![Choice { value, label: None }]);
    }
    if let Some(branches) = union_branches(schema) {
        let branches: Vec<Resolved<'a>> = branches
            .iter()
            .filter(|branch| !is_null_schema(branch))
            .map(|branch| resolve(root, branch))
            .collect();
        let all_choices = !branches.is_empty()
            && branches
                .iter()
                .all(|b| b.schema.get("const").is_some() || b.schema.get("enum").is_some());
        if all_choices {
            let mut choices = Vec::new();
            for branch in &branches {
                match (
                    branch.schema.get("const"),
                    branch.schema.get("enum").and_then(Value::as_array),
                ) {
                    (Some(value), _) if !value.is_null() => choices.push(Choice {
                        value,
                        label: branch.title.or(branch.description),
                    }),
                    (_, Some(values)) => choices.extend(plain_choices(values)),
                    _ => {}
                }
            }
            return Kind::Enum(choices);
        }
        return Kind::AnyOf(
            branches
                .iter()
                .map(|branch| kind_at(root, branch.schema, budget))
                .collect(),
        );
    }
    match schema.get("type") {
        Some(Value::String(name)) => simple_kind(name, schema),
        Some(Value::Array(names)) => {
            let mut kinds: Vec<Kind<'a>> = names
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| *name != "null")
                .map(|name| simple_kind(name, schema))
                .collect();
            match kinds.len() {
                0 => Kind::Any,
                1 => kinds.swap_remove(0),
                _ => Kind::AnyOf(kinds),
            }
        }
        _ if schema.get("properties").is_some() => Kind::Object,
        _ if schema.get("items").is_some() => Kind::Array(schema.get("items")),
        _ => Kind::Any,
    }
}

/// The non-null values of an `enum`, without labels.
fn plain_choices(values: &[Value]) -> Vec<Choice<'_>> {
    values
        .iter()
        .filter(|value| !value.is_null())
        .map(|value| Choice { value, label: None })
        .collect()
}

/// The kind for one JSON Schema type name.
fn simple_kind<'a>(name: &str, schema: &'a Value) -> Kind<'a> {
    match name {
        "string" => Kind::Text,
        "integer" => Kind::Integer,
        "number" => Kind::Number,
        "boolean" => Kind::Boolean,
        "array" => Kind::Array(schema.get("items")),
        "object" => Kind::Object,
        _ => Kind::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use schemars::{JsonSchema, schema_for};
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    fn schema_value<T: JsonSchema>() -> Value {
        match serde_json::to_value(schema_for!(T)) {
            Ok(value) => value,
            Err(e) => panic!("schema does not serialise: {e}"),
        }
    }

    fn field<'a>(fields: &'a [FormField], name: &str) -> &'a FormField {
        match fields.iter().find(|f| f.name == name) {
            Some(f) => f,
            None => panic!("no field {name} in {fields:?}"),
        }
    }

    fn option(value: &str, label: &str) -> FieldOption {
        FieldOption {
            value: json!(value),
            label: label.into(),
        }
    }

    fn base(name: &str, field_type: FieldType, required: bool) -> FormField {
        FormField {
            name: name.into(),
            field_type,
            required,
            default: None,
            description: None,
            options: Vec::new(),
            integer: false,
        }
    }

    #[test]
    fn seed_table_from_hand_written_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "branch": {"type": "string", "description": "Target branch"},
                "remote": {"type": "string", "enum": ["origin", "upstream"], "default": "origin"},
                "force": {"type": "boolean", "default": false}
            },
            "required": ["branch"]
        });
        let expected = vec![
            FormField {
                description: Some("Target branch".into()),
                ..base("branch", FieldType::Text, true)
            },
            FormField {
                default: Some(json!("origin")),
                options: vec![option("origin", "origin"), option("upstream", "upstream")],
                ..base("remote", FieldType::Select, false)
            },
            FormField {
                default: Some(json!(false)),
                ..base("force", FieldType::Boolean, false)
            },
        ];
        assert_eq!(derive_fields_from_schema(&schema), expected);
    }

    /// Which remote to push to.
    #[derive(JsonSchema, Deserialize, Serialize, Clone, Copy)]
    #[serde(rename_all = "lowercase")]
    enum Remote {
        Origin,
        Upstream,
    }

    fn origin() -> Remote {
        Remote::Origin
    }

    #[derive(JsonSchema, Deserialize, Serialize)]
    #[serde(rename_all = "lowercase")]
    enum Level {
        /// Only errors
        Quiet,
        /// Everything
        Loud,
    }

    /// Pushes a branch.
    #[derive(JsonSchema, Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct GitPushArgs {
        /// Target branch
        branch: String,
        #[serde(default = "origin")]
        remote: Remote,
        /// Overwrite the remote branch
        #[serde(default)]
        force: bool,
        /// How many commits
        depth: Option<u32>,
        /// Where to mirror
        mirror: Option<Remote>,
        level: Level,
        tags: Vec<String>,
        env: std::collections::BTreeMap<String, String>,
        ratio: f64,
        create_dirs: Option<bool>,
    }

    #[test]
    fn seed_table_from_schemars_struct() {
        let fields = derive_fields_from_schema(&schema_value::<GitPushArgs>());
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "branch",
                "remote",
                "force",
                "depth",
                "mirror",
                "level",
                "tags",
                "env",
                "ratio",
                "createDirs"
            ]
        );
        assert_eq!(
            fields[0],
            FormField {
                description: Some("Target branch".into()),
                ..base("branch", FieldType::Text, true)
            }
        );
        assert_eq!(
            fields[1],
            FormField {
                default: Some(json!("origin")),
                description: Some("Which remote to push to.".into()),
                options: vec![option("origin", "origin"), option("upstream", "upstream")],
                ..base("remote", FieldType::Select, false)
            }
        );
        assert_eq!(
            fields[2],
            FormField {
                default: Some(json!(false)),
                description: Some("Overwrite the remote branch".into()),
                ..base("force", FieldType::Boolean, false)
            }
        );
    }

    #[test]
    fn option_fields_are_unwrapped_and_not_required() {
        let fields = derive_fields_from_schema(&schema_value::<GitPushArgs>());
        assert_eq!(
            field(&fields, "depth"),
            &FormField {
                description: Some("How many commits".into()),
                integer: true,
                ..base("depth", FieldType::Number, false)
            }
        );
        let mirror = field(&fields, "mirror");
        assert_eq!(mirror.field_type, FieldType::Select);
        assert!(!mirror.required);
        assert_eq!(mirror.description.as_deref(), Some("Where to mirror"));
        assert_eq!(mirror.options.len(), 2);
        assert_eq!(field(&fields, "createDirs").field_type, FieldType::Boolean);
        assert!(!field(&fields, "createDirs").required);
    }

    #[test]
    fn documented_enum_variants_become_labelled_select() {
        let fields = derive_fields_from_schema(&schema_value::<GitPushArgs>());
        let level = field(&fields, "level");
        assert_eq!(level.field_type, FieldType::Select);
        assert!(level.required);
        assert_eq!(
            level.options,
            vec![option("quiet", "Only errors"), option("loud", "Everything")]
        );
    }

    #[test]
    fn arrays_objects_and_numbers() {
        let fields = derive_fields_from_schema(&schema_value::<GitPushArgs>());
        let tags = field(&fields, "tags");
        assert_eq!(tags.field_type, FieldType::Text);
        assert!(tags.required);
        assert_eq!(
            tags.description.as_deref(),
            Some("Comma-separated values or a JSON array")
        );
        assert_eq!(
            field(&fields, "env").description.as_deref(),
            Some("A JSON object")
        );
        let ratio = field(&fields, "ratio");
        assert_eq!(
            (ratio.field_type, ratio.integer),
            (FieldType::Number, false)
        );
    }

    #[test]
    fn array_note_is_appended_to_description() {
        let schema = json!({"properties": {"ids": {"type": "array", "items": {"type": "integer"}, "description": "Ids"}}});
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(
            fields[0].description.as_deref(),
            Some("Ids (comma-separated values or a JSON array)")
        );
    }

    #[test]
    fn property_description_beats_definition_description() {
        let schema = json!({
            "properties": {
                "a": {"$ref": "#/$defs/E", "description": "On property"},
                "b": {"$ref": "#/definitions/E"}
            },
            "$defs": {"E": {"enum": ["x"], "description": "On def"}},
            "definitions": {"E": {"enum": ["y"], "description": "Legacy def"}}
        });
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(fields[0].description.as_deref(), Some("On property"));
        assert_eq!(fields[1].description.as_deref(), Some("Legacy def"));
        assert_eq!(fields[1].options, vec![option("y", "y")]);
    }

    #[test]
    fn nullable_type_list_is_not_required() {
        let schema = json!({
            "properties": {"name": {"type": ["string", "null"]}, "n": {"type": ["null", "integer"]}},
            "required": ["name", "n"]
        });
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(fields[0], base("name", FieldType::Text, false));
        assert_eq!(
            fields[1],
            FormField {
                integer: true,
                ..base("n", FieldType::Number, false)
            }
        );
    }

    #[test]
    fn non_string_enum_values_get_text_labels() {
        let schema = json!({"properties": {"n": {"enum": [1, 2, null], "default": 2}}});
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(
            fields[0].options,
            vec![
                FieldOption {
                    value: json!(1),
                    label: "1".into()
                },
                FieldOption {
                    value: json!(2),
                    label: "2".into()
                }
            ]
        );
        assert!(!fields[0].required);
        assert_eq!(fields[0].default, Some(json!(2)));
    }

    #[test]
    fn const_branches_prefer_title_for_label() {
        let schema = json!({"properties": {"m": {"oneOf": [
            {"const": "a", "title": "Alpha", "description": "The first letter"},
            {"const": "b", "description": "Bravo"},
            {"const": "c"},
            {"enum": ["d", "e"]}
        ]}}});
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(
            fields[0].options,
            vec![
                option("a", "Alpha"),
                option("b", "Bravo"),
                option("c", "c"),
                option("d", "d"),
                option("e", "e")
            ]
        );
    }

    #[test]
    fn mixed_unions_and_untyped_properties_are_text() {
        let schema = json!({"properties": {
            "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "t": {"type": ["string", "integer"]},
            "any": {},
            "bool_schema": true
        }});
        let fields = derive_fields_from_schema(&schema);
        assert!(
            fields.iter().all(|f| f.field_type == FieldType::Text),
            "{fields:?}"
        );
        assert_eq!(fields.len(), 4);
    }

    #[test]
    fn null_default_is_left_out() {
        let schema = json!({"properties": {"x": {"type": ["string", "null"], "default": null}}});
        assert_eq!(derive_fields_from_schema(&schema)[0].default, None);
    }

    #[test]
    fn schemas_without_properties_give_no_fields() {
        for schema in [
            json!({}),
            json!(true),
            json!(null),
            json!({"type": "string"}),
            json!({"properties": 3}),
        ] {
            assert!(derive_fields_from_schema(&schema).is_empty(), "{schema}");
        }
    }

    #[test]
    fn root_ref_is_followed() {
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"properties": {"x": {"type": "boolean"}}, "required": ["x"]}}});
        assert_eq!(
            derive_fields_from_schema(&schema),
            vec![base("x", FieldType::Boolean, true)]
        );
    }

    #[test]
    fn cyclic_and_dangling_refs_do_not_hang() {
        let schema = json!({
            "properties": {
                "loop": {"$ref": "#/$defs/L"},
                "missing": {"$ref": "#/$defs/Nope"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "self_union": {"$ref": "#/$defs/U"}
            },
            "$defs": {
                "L": {"$ref": "#/$defs/L"},
                "U": {"anyOf": [{"$ref": "#/$defs/U"}, {"$ref": "#/$defs/U"}]}
            }
        });
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(fields.len(), 4);
        assert!(fields.iter().all(|f| f.field_type == FieldType::Text));
    }

    #[test]
    fn legacy_all_of_wrapper_is_unwrapped() {
        let schema = json!({
            "properties": {"r": {"allOf": [{"$ref": "#/definitions/R"}], "description": "Remote"}},
            "definitions": {"R": {"type": "string", "enum": ["a", "b"]}}
        });
        let fields = derive_fields_from_schema(&schema);
        assert_eq!(fields[0].field_type, FieldType::Select);
        assert_eq!(fields[0].description.as_deref(), Some("Remote"));
    }

    #[test]
    fn ref_pointer_escapes_are_honoured() {
        let schema = json!({
            "properties": {"x": {"$ref": "#/$defs/a~1b"}},
            "$defs": {"a/b": {"type": "integer"}}
        });
        assert!(derive_fields_from_schema(&schema)[0].integer);
    }

    #[test]
    fn fields_serialise_as_the_seed_shows() {
        let schema = json!({"properties": {"remote": {"enum": ["origin"], "default": "origin"}}});
        let value = serde_json::to_value(derive_fields_from_schema(&schema)).ok();
        assert_eq!(
            value,
            Some(
                json!([{"name": "remote", "type": "select", "required": false, "default": "origin",
                "options": [{"value": "origin", "label": "origin"}]}])
            )
        );
    }
}
