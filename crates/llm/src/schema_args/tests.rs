//! End-to-end tests of [`generate_args`] that cut across the submodules
//! (dispatch order, garbage schemas, limits, schemars-generated schemas), and
//! the validation helpers the per-module tests share.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::generate_args;

/// Generates for `schema` with `seed`, asserts validity (formats included)
/// and determinism, and returns the value.
pub(super) fn valid(schema: &Value, seed: u64) -> Value {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("test schema {schema} does not compile: {e}"));
    let value = generate_args(schema, seed);
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "schema {schema}\nseed {seed}\nvalue {value}\nerrors {errors:?}"
    );
    assert_eq!(value, generate_args(schema, seed), "not deterministic");
    value
}

/// `valid` for a range of seeds.
pub(super) fn valid_for_seeds(schema: &Value) -> Value {
    for seed in 1..16 {
        valid(schema, seed);
    }
    valid(schema, u64::MAX);
    valid(schema, 0)
}

/// A closed object schema whose only, required property `x` is `prop`.
pub(super) fn with_prop(prop: Value) -> Value {
    json!({
        "type": "object",
        "properties": { "x": prop },
        "required": ["x"],
        "additionalProperties": false
    })
}

/// The `x` generated for `with_prop(schema)`, checked by `valid_for_seeds`.
pub(super) fn x_of(schema: Value) -> Value {
    valid_for_seeds(&with_prop(schema))["x"].clone()
}

#[test]
fn scalars_null_and_type_lists() {
    assert_eq!(x_of(json!({"type": "boolean"})), false);
    assert_eq!(x_of(json!({"type": "null"})), Value::Null);
    assert_eq!(x_of(json!({"type": ["string", "null"]})), "test");
    assert_eq!(x_of(json!({"type": ["null", "integer"]})), 1);
    assert_eq!(x_of(json!({"type": ["null"]})), Value::Null);
    // Unknown type names are skipped (the schema itself is invalid).
    let skipped = generate_args(&with_prop(json!({"type": ["garbage", "boolean"]})), 0);
    assert_eq!(skipped["x"], false);
}

#[test]
fn const_enum_default_examples() {
    assert_eq!(x_of(json!({"const": "fixed"})), "fixed");
    assert_eq!(x_of(json!({"type": "string", "const": "fixed"})), "fixed");
    assert_eq!(
        x_of(json!({"type": "integer", "minimum": 0, "default": 7})),
        7
    );
    assert_eq!(x_of(json!({"type": "integer", "const": 3})), 3);
    assert_eq!(
        x_of(json!({"type": "string", "examples": ["ex"], "minLength": 1})),
        "ex"
    );
    assert_eq!(
        x_of(json!({"type": "string", "enum": ["a", "b"], "examples": ["a"]})),
        "a"
    );
    x_of(json!({"enum": [1, "two", null, [3], {"four": 4}]}));
    x_of(json!({"type": "integer", "enum": ["no", 2, 3]}));
    // No enum value fits the type: unsatisfiable, but still an enum value.
    let odd = generate_args(&with_prop(json!({"type": "integer", "enum": ["no"]})), 1);
    assert_eq!(odd["x"], "no");
    x_of(json!({"type": ["string", "null"], "enum": ["a", "b", null]}));
}

#[test]
fn garbage_never_panics() {
    let garbage = [
        json!(true),
        json!(false),
        json!({}),
        json!(null),
        json!(42),
        json!("string"),
        json!([1, 2, 3]),
        json!({"type": 7}),
        json!({"type": "banana"}),
        json!({"type": []}),
        json!({"type": ["banana", {"x": 1}]}),
        json!({"type": "object", "properties": [1, 2]}),
        json!({"type": "object", "properties": {"a": 5}, "required": "a"}),
        json!({"type": "object", "required": [1, null, "a"], "properties": {"a": false}}),
        json!({"type": "array", "items": 3, "minItems": "many"}),
        json!({"type": "array", "minItems": -1, "maxItems": 1e300}),
        json!({"type": "string", "minLength": 5, "maxLength": 2}),
        json!({"type": "string", "minLength": 1.5, "pattern": 7, "format": []}),
        json!({"type": "integer", "minimum": "zero", "multipleOf": 0}),
        json!({"type": "integer", "multipleOf": -3}),
        json!({"type": "number", "minimum": 10, "maximum": 1}),
        json!({"type": "integer", "minimum": 1e308, "multipleOf": 1e-308}),
        json!({"type": "number", "multipleOf": 1e-308}),
        json!({"type": "number", "multipleOf": 1e308, "minimum": 1}),
        json!({"enum": []}),
        json!({"enum": "nope"}),
        json!({"examples": []}),
        json!({"$ref": 5}),
        json!({"$ref": "#/nowhere"}),
        json!({"$ref": "https://example.com/schema.json"}),
        json!({"$ref": "#anchor"}),
        json!({"$ref": "#/%zz%"}),
        json!({"allOf": "x"}),
        json!({"allOf": [1, true, false, {"type": "string"}]}),
        json!({"anyOf": []}),
        json!({"oneOf": [false]}),
        json!({"anyOf": [{"type": "null"}, {"type": "null"}]}),
        json!({"not": {}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}, "required": ["a"]}),
        json!({"type": "array", "minItems": 100, "items": {"type": "array", "minItems": 100, "items": {"type": "array", "minItems": 100, "items": {"type": "string", "minLength": 10000}}}}),
        json!({"type": "object", "minProperties": 1_000_000}),
        json!({"type": "object", "dependentRequired": {"a": ["b"], "b": ["a"]}, "required": ["a"]}),
    ];
    for schema in &garbage {
        for seed in [0, 1, 7, u64::MAX] {
            let value = generate_args(schema, seed);
            assert_eq!(value, generate_args(schema, seed), "{schema}");
        }
    }
    assert_eq!(generate_args(&json!(true), 0), json!({}));
    assert_eq!(generate_args(&json!({}), 0), json!({}));
    assert_eq!(generate_args(&json!(false), 0), json!({}));
}

#[test]
fn deep_nesting_is_cut_off() {
    let mut schema = json!({"type": "integer"});
    for _ in 0..200 {
        schema = json!({
            "type": "object",
            "properties": {"inner": schema},
            "required": ["inner"]
        });
    }
    let value = generate_args(&schema, 0);
    assert!(value.is_object());
}

// --- Schemas produced by schemars from real Rust types. ---

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Slow,
    Careful,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    Read {
        path: String,
    },
    Write {
        path: String,
        content: String,
        append: bool,
    },
    Delete,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Shape {
    Circle(f64),
    Rect { w: u32, h: u32 },
    Empty,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Range {
    start: u64,
    end: Option<u64>,
}

fn default_limit() -> u32 {
    20
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    query: String,
    mode: Mode,
    optional_mode: Option<Mode>,
    #[serde(default = "default_limit")]
    limit: u32,
    #[serde(default)]
    case_sensitive: bool,
    range: Range,
    ranges: Vec<Range>,
    tags: Option<Vec<String>>,
    action: Action,
    shape: Shape,
    offset: i8,
    ratio: f32,
    nested: Option<Box<SearchArgs>>,
    uuid_like: std::collections::BTreeMap<String, u16>,
    pair: (String, i32),
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    name: String,
    children: Vec<Tree>,
    parent: Option<Box<Tree>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(untagged)]
enum Untagged {
    Text(String),
    Number(i64),
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Wrapper {
    untagged: Untagged,
    #[serde(flatten)]
    flat: Range,
    #[schemars(range(min = 10, max = 20), extend("multipleOf" = 3))]
    bounded: u32,
    #[schemars(length(min = 3, max = 5), regex(pattern = r"^[a-z]+$"))]
    name: String,
    #[schemars(email)]
    email: String,
}

fn schemars_roundtrip<T: JsonSchema + for<'de> Deserialize<'de>>() -> Value {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let mut last = Value::Null;
    for seed in 0..24 {
        let value = valid(&schema, seed);
        if let Err(e) = serde_json::from_value::<T>(value.clone()) {
            panic!("schema {schema}\nvalue {value}\ndoes not deserialize: {e}");
        }
        last = value;
    }
    last
}

#[test]
fn schemars_structs_validate_and_deserialize() {
    schemars_roundtrip::<SearchArgs>();
    schemars_roundtrip::<Tree>();
    schemars_roundtrip::<Wrapper>();
    schemars_roundtrip::<Range>();
    schemars_roundtrip::<Mode>();
    schemars_roundtrip::<Action>();
    schemars_roundtrip::<Shape>();
    schemars_roundtrip::<Vec<Mode>>();
    schemars_roundtrip::<Option<Range>>();
}

#[test]
fn schemars_defaults_and_enum_seeds() {
    let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
    let value = valid(&schema, 0);
    assert_eq!(value["limit"], 20);
    assert_eq!(value["case_sensitive"], false);
    assert_eq!(value["mode"], "fast");
    let modes: std::collections::BTreeSet<String> = (0..32)
        .map(|seed| generate_args(&schema, seed)["mode"].to_string())
        .collect();
    assert!(modes.len() > 1, "{modes:?}");
}
