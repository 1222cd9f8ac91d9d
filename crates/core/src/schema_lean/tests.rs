//! The lean form of schemas: what each rule leaves out and what it keeps, on a schema derived
//! from a Rust argument type and on schemas from outside (the shape Python MCP servers send).

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;
use crate::tool::input_schema_for;

/// A language.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, reason = "only the schema is used")]
enum Language {
    /// Python 3.
    Python,
    /// Bash.
    Bash,
}

/// No doc comments on the variants.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only the schema is used")]
enum Plain {
    A,
    B,
}

/// The inner struct's own doc comment.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only the schema is used")]
struct Inner {
    /// X.
    x: u32,
}

/// Run one program (the type's doc comment, a second description of the tool).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "only the schema is used")]
struct SampleArgs {
    /// The command.
    command: String,
    /// The timeout.
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
    /// The language.
    language: Language,
    /// Another language.
    #[serde(default)]
    maybe: Option<Language>,
    /// A plain choice.
    #[serde(default)]
    plain: Option<Plain>,
    /// The inner field's doc comment.
    inner: Option<Inner>,
    /// Names.
    #[serde(default)]
    names: Vec<String>,
    /// A flag.
    #[serde(default)]
    flag: bool,
    /// A ratio.
    ratio: Option<f64>,
    /// Values, some missing.
    values: Vec<Option<i64>>,
}

fn sample() -> Value {
    input_schema_for::<SampleArgs>()
}

#[test]
fn a_derived_schema_keeps_what_a_model_needs_and_nothing_else() {
    let full = sample();
    assert_eq!(full["title"], "SampleArgs", "{full}");
    assert_eq!(full["properties"]["timeout"]["format"], "uint64");
    assert_eq!(full["properties"]["timeout"]["default"], Value::Null);
    assert_eq!(
        lean_tool_schema(&full),
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command."},
                "timeout": {"type": "integer", "minimum": 1, "description": "The timeout."},
                "language": {
                    "oneOf": [
                        {"const": "python", "description": "Python 3."},
                        {"const": "bash", "description": "Bash."}
                    ],
                    "description": "The language."
                },
                "maybe": {
                    "oneOf": [
                        {"const": "python", "description": "Python 3."},
                        {"const": "bash", "description": "Bash."}
                    ],
                    "description": "Another language."
                },
                "plain": {"type": "string", "enum": ["A", "B"], "description": "A plain choice."},
                "inner": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer", "minimum": 0, "description": "X."}
                    },
                    "required": ["x"],
                    "description": "The inner field's doc comment."
                },
                "names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Names."
                },
                "flag": {"type": "boolean", "description": "A flag."},
                "ratio": {"type": "number", "description": "A ratio."},
                "values": {
                    "type": "array",
                    "items": {"type": ["integer", "null"]},
                    "description": "Values, some missing."
                }
            },
            "required": ["command", "language", "values"]
        })
    );
    // The plain lean form keeps the root description (a structured answer's only one) and
    // closed objects (OpenAI's strict mode needs them).
    let plain = lean_schema(&full);
    assert_eq!(plain["description"], full["description"], "{full}");
    assert_eq!(plain["additionalProperties"], json!(false));
    assert_eq!(
        plain["properties"]["inner"].get("additionalProperties"),
        None
    );
}

#[test]
fn a_required_nullable_property_keeps_its_null() {
    let full = json!({
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "c": {"type": ["string", "null"], "title": "C"},
            "d": {"type": "boolean", "default": false},
            "e": {"type": "integer", "default": 0}
        },
        "required": ["a", "b"]
    });
    assert_eq!(
        lean_schema(&full),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "c": {"type": "string"},
                "d": {"type": "boolean"},
                "e": {"type": "integer", "default": 0}
            },
            "required": ["a", "b"]
        })
    );
}

#[test]
fn data_and_properties_named_like_keywords_are_left_alone() {
    let full = json!({
        "type": "object",
        "title": "Root",
        "properties": {
            "title": {"type": "string", "title": "Title"},
            "format": {"type": "string", "format": "uint64", "default": "x"},
            "choice": {"enum": [{"title": null}, "$schema"], "default": {"title": "kept"}},
            "fixed": {"const": {"format": "uint64"}, "type": "object"},
            "mismatched": {"const": 1, "type": "string"},
            "example": {"type": "object", "examples": [{"title": "t", "default": null}]}
        },
        "required": ["title"]
    });
    assert_eq!(
        lean_schema(&full),
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "format": {"type": "string", "default": "x"},
                "choice": {"enum": [{"title": null}, "$schema"], "default": {"title": "kept"}},
                "fixed": {"const": {"format": "uint64"}},
                "mismatched": {"const": 1, "type": "string"},
                "example": {"type": "object", "examples": [{"title": "t", "default": null}]}
            },
            "required": ["title"]
        })
    );
}

#[test]
fn standard_formats_stay_and_others_go() {
    let formats = [
        "date-time",
        "uri",
        "email",
        "uuid",
        "uint64",
        "int32",
        "double",
        "float",
        "uint",
    ];
    let properties: serde_json::Map<String, Value> = formats
        .iter()
        .map(|f| ((*f).to_owned(), json!({"type": "string", "format": f})))
        .collect();
    let lean = lean_schema(&json!({"type": "object", "properties": properties}));
    let kept: Vec<&str> = formats
        .iter()
        .copied()
        .filter(|f| lean["properties"][*f].get("format").is_some())
        .collect();
    assert_eq!(kept, ["date-time", "uri", "email", "uuid"]);
}

/// The shape a Python MCP server (pydantic) sends: titles everywhere, `$defs` referenced from
/// properties, `anyOf` with `null` and `default: null` for optional fields.
fn pydantic() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "search_arguments",
        "type": "object",
        "$defs": {
            "Mode": {"title": "Mode", "description": "How to match.", "enum": ["exact", "fuzzy"], "type": "string"},
            "Shared": {"title": "Shared", "type": "object", "properties": {"n": {"title": "N", "type": "integer"}}},
            "Nested": {"title": "Nested", "type": "object", "properties": {"m": {"$ref": "#/$defs/Mode2"}}},
            "Mode2": {"title": "Mode2", "enum": ["a", "b"], "type": "string"}
        },
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "limit": {"title": "Limit", "anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
            "mode": {"$ref": "#/$defs/Mode", "description": "The matching mode."},
            "first": {"$ref": "#/$defs/Shared"},
            "second": {"$ref": "#/$defs/Shared"},
            "nested": {"anyOf": [{"$ref": "#/$defs/Nested"}, {"type": "null"}], "default": null},
            "id": {"title": "Id", "type": "string"}
        },
        "required": ["query", "mode", "first", "second"]
    })
}

#[test]
fn an_outside_schema_is_made_lean_with_definitions_used_once_inlined() {
    let full = pydantic();
    assert_eq!(
        lean_tool_schema(&full),
        json!({
            "type": "object",
            "$defs": {
                "Shared": {"type": "object", "properties": {"n": {"type": "integer"}}}
            },
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "mode": {"description": "The matching mode.", "enum": ["exact", "fuzzy"], "type": "string"},
                "first": {"$ref": "#/$defs/Shared"},
                "second": {"$ref": "#/$defs/Shared"},
                "nested": {"type": "object", "properties": {"m": {"enum": ["a", "b"], "type": "string"}}}
            ,
                "id": {"type": "string"}
            },
            "required": ["query", "mode", "first", "second"]
        })
    );
}

#[test]
fn nothing_is_inlined_where_references_mean_something_else() {
    for scope in [
        json!({"$id": "https://example.com/s"}),
        json!({"$anchor": "x"}),
    ] {
        let mut full = json!({
            "type": "object",
            "$defs": {"A": {"type": "string"}},
            "properties": {"a": {"$ref": "#/$defs/A"}}
        });
        full.as_object_mut()
            .unwrap()
            .extend(scope.as_object().unwrap().clone());
        let lean = lean_schema(&full);
        assert_eq!(
            lean["properties"]["a"],
            json!({"$ref": "#/$defs/A"}),
            "{scope}"
        );
        assert_eq!(lean["$defs"], json!({"A": {"type": "string"}}));
    }
    // A reference to something other than a definition, and a keyword both sides give.
    let other = json!({
        "type": "object",
        "$defs": {"A": {"type": "string", "minLength": 2}},
        "properties": {
            "a": {"$ref": "#/$defs/A", "minLength": 3},
            "b": {"$ref": "#/properties/a"}
        }
    });
    assert_eq!(lean_schema(&other), other);
    let clash = json!({
        "type": "object",
        "$defs": {"A": {"type": "string", "minLength": 2}},
        "properties": {"a": {"$ref": "#/$defs/A", "minLength": 3}}
    });
    assert_eq!(lean_schema(&clash), clash);
}

#[test]
fn non_standard_keywords_are_found_in_the_full_and_not_in_the_lean_form() {
    let found = non_standard_keywords(&sample());
    assert!(found.contains(&"/title".to_owned()), "{found:?}");
    assert!(
        found.contains(&"/properties/timeout/format".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"/properties/timeout/default".to_owned()),
        "{found:?}"
    );
    let found = non_standard_keywords(&pydantic());
    assert!(found.contains(&"/$schema".to_owned()), "{found:?}");
    assert!(found.contains(&"/$defs/Mode/title".to_owned()), "{found:?}");
    assert!(
        found.contains(&"/properties/query/title".to_owned()),
        "{found:?}"
    );
    for full in [sample(), pydantic()] {
        assert_eq!(
            non_standard_keywords(&lean_tool_schema(&full)),
            Vec::<String>::new()
        );
    }
    // A property named `title` is not a keyword.
    let named = json!({"type": "object", "properties": {"title": {"type": "string"}}});
    assert_eq!(non_standard_keywords(&named), Vec::<String>::new());
}

#[test]
fn the_lean_form_is_stable_and_accepts_nothing_the_full_one_refuses() {
    for full in [sample(), pydantic()] {
        let tool = lean_tool_schema(&full);
        assert_eq!(lean_tool_schema(&tool), tool, "lean twice is lean once");
        // What a tool's lean form leaves out beyond the plain one: the root description and
        // closed objects.
        let mut closed = lean_schema(&full);
        closed.as_object_mut().unwrap().shift_remove("description");
        without_closed_objects(&mut closed);
        assert_eq!(tool, closed);
        let lean = lean_schema(&full);
        assert_eq!(lean_schema(&lean), lean, "lean twice is lean once");
        assert_eq!(lean["required"], full["required"]);
        let names = |s: &Value| -> Vec<String> {
            s["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(names(&lean), names(&full));
        let full_validator = jsonschema::validator_for(&full).unwrap();
        let lean_validator = jsonschema::validator_for(&lean).unwrap();
        let candidates = [
            json!({"command": "ls", "language": "bash", "values": [1, null]}),
            json!({"command": "ls", "language": "bash", "values": [], "timeout": 5, "maybe": "python"}),
            json!({"command": "ls", "language": "bash", "values": [], "timeout": null}),
            json!({"command": "ls", "language": "perl", "values": []}),
            json!({"command": "ls", "language": "bash", "values": [], "timeout": 0}),
            json!({"command": "ls", "language": "bash", "values": [], "inner": {"x": 1}}),
            json!({"command": "ls", "language": "bash", "values": [], "extra": 1}),
            json!({"query": "q", "mode": "exact", "first": {"n": 1}, "second": {}}),
            json!({"query": "q", "mode": "fuzzy", "first": {}, "second": {}, "limit": null}),
            json!({"query": "q", "mode": "other", "first": {}, "second": {}}),
            json!({"query": "q", "mode": "exact", "first": {}, "second": {}, "nested": {"m": "c"}}),
            json!({"query": 1}),
        ];
        for candidate in &candidates {
            if lean_validator.is_valid(candidate) {
                assert!(
                    full_validator.is_valid(candidate),
                    "{candidate} against {full}"
                );
            }
        }
        // An explicit null, which the full schema accepts, is what the lean one stops telling.
        let with_null = &candidates[2];
        if full["title"] == "SampleArgs" {
            assert!(full_validator.is_valid(with_null));
            assert!(!lean_validator.is_valid(with_null));
        }
    }
}

#[test]
fn choices_become_an_enum_when_their_descriptions_say_no_more() {
    let full = json!({
        "type": "object",
        "properties": {
            "language": {
                "oneOf": [
                    {"type": "string", "const": "python", "description": "Python 3, run with `python3`."},
                    {"type": "string", "const": "bash", "description": "A bash script."}
                ],
                "description": "`python` (run with python3) or `bash`."
            },
            "remote": {
                "oneOf": [
                    {"type": "string", "const": "origin", "description": "`origin`."},
                    {"type": "string", "const": "upstream", "description": "`upstream`."}
                ],
                "description": "The remote to pull from.",
                "default": "origin"
            },
            "told": {
                "oneOf": [
                    {"const": "a", "description": "The first way."},
                    {"const": "b", "description": "The second way."}
                ],
                "description": "How."
            },
            "mixed": {
                "oneOf": [{"const": "a"}, {"const": 1}],
                "description": "a or 1"
            }
        }
    });
    let lean = lean_schema(&full);
    assert_eq!(
        lean["properties"]["language"],
        json!({"enum": ["python", "bash"], "description": "`python` (run with python3) or `bash`."})
    );
    assert_eq!(
        lean["properties"]["remote"],
        json!({"enum": ["origin", "upstream"], "description": "The remote to pull from.", "default": "origin"})
    );
    assert_eq!(lean["properties"]["told"], full["properties"]["told"]);
    assert_eq!(lean["properties"]["mixed"], full["properties"]["mixed"]);
}
