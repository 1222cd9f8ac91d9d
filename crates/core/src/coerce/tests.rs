//! Tests of typing a command's words (positional words, and options as typed: strings for
//! values, `true` for flags) by tool schemas. How a typed line becomes these words is the chat's
//! parser's business (`crates/cli/src/chat/command/parser.rs`).
use super::*;
use pretty_assertions::assert_eq;
use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A command's words: positional words, then options in the order typed.
#[derive(Debug)]
struct Words {
    args: Vec<String>,
    options: Map<String, Value>,
}

/// Positional words and options (a JSON object).
fn words(args: &[&str], options: Value) -> Words {
    let Value::Object(options) = options else {
        panic!("options are an object: {options}");
    };
    Words {
        args: args.iter().map(|word| (*word).to_owned()).collect(),
        options,
    }
}

/// Options only.
fn opts(options: Value) -> Words {
    words(&[], options)
}

fn typed(input: &Words, schema: &Value) -> Result<Map<String, Value>, CoerceError> {
    options_to_args(&input.args, &input.options, schema)
}

fn args(input: Words, schema: &Value) -> Value {
    match typed(&input, schema) {
        Ok(map) => Value::Object(map),
        Err(e) => panic!("{input:?}: {e}"),
    }
}

fn err(input: Words, schema: &Value) -> CoerceError {
    match typed(&input, schema) {
        Ok(map) => panic!("{input:?} coerced unexpectedly: {map:?}"),
        Err(e) => e,
    }
}

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

#[derive(JsonSchema, Deserialize, Serialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Language {
    /// Python 3
    Python,
    /// Bash
    Bash,
}

#[derive(JsonSchema, Deserialize, Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct WriteArgs {
    /// Virtual path
    path: String,
    content: String,
    #[serde(default)]
    create_dirs: bool,
    timeout: Option<u32>,
    language: Option<Language>,
    replace_all: Option<bool>,
}

fn write_schema() -> Value {
    match serde_json::to_value(schema_for!(WriteArgs)) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn integers() {
    let s = push_schema();
    assert_eq!(args(opts(json!({"count": "5"})), &s)["count"], json!(5));
    assert_eq!(args(opts(json!({"count": "-5"})), &s)["count"], json!(-5));
    assert_eq!(
        args(opts(json!({"count": "18446744073709551615"})), &s)["count"],
        json!(u64::MAX)
    );
    let e = err(opts(json!({"count": "5.5"})), &s);
    assert_eq!(
        e.to_string(),
        "invalid value '5.5' for --count: expected a whole number"
    );
    assert!(matches!(
        err(opts(json!({"count": "abc"})), &s),
        CoerceError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(opts(json!({"count": ""})), &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn numbers() {
    let s = push_schema();
    assert_eq!(args(opts(json!({"ratio": "0.5"})), &s)["ratio"], json!(0.5));
    assert_eq!(
        args(opts(json!({"ratio": "-1e3"})), &s)["ratio"],
        json!(-1000.0)
    );
    assert_eq!(args(opts(json!({"ratio": "3"})), &s)["ratio"], json!(3));
    for bad in ["nan", "inf", "-inf", "x1", "1e999"] {
        let e = err(opts(json!({"ratio": bad})), &s);
        assert!(e.to_string().ends_with("expected a number"), "{e}");
    }
}

#[test]
fn booleans() {
    let s = push_schema();
    for (word, expected) in [
        ("true", true),
        ("yes", true),
        ("1", true),
        ("on", true),
        ("YES", true),
        ("false", false),
        ("no", false),
        ("0", false),
        ("off", false),
        ("Off", false),
    ] {
        assert_eq!(
            args(opts(json!({"force": word})), &s)["force"],
            json!(expected),
            "{word}"
        );
    }
    assert_eq!(
        args(opts(json!({"force": "false"})), &s)["force"],
        json!(false)
    );
    assert_eq!(args(opts(json!({"force": true})), &s)["force"], json!(true));
    let e = err(opts(json!({"force": "origin"})), &s);
    assert!(e.to_string().contains("--force=true"), "{e}");
}

#[test]
fn negated_boolean_flag() {
    let s = push_schema();
    assert_eq!(
        args(opts(json!({"no-force": true})), &s)["force"],
        json!(false)
    );
    assert!(matches!(
        err(opts(json!({"no-branch": true})), &s),
        CoerceError::UnknownOption { .. }
    ));
    assert!(matches!(
        err(opts(json!({"no-force": "yes"})), &s),
        CoerceError::UnknownOption { .. }
    ));
}

#[test]
fn string_flag_needs_value() {
    let e = err(opts(json!({"branch": true})), &push_schema());
    assert_eq!(
        e,
        CoerceError::MissingValue {
            option: "--branch".into(),
            choices: vec![]
        }
    );
    assert_eq!(e.to_string(), "option --branch needs a value");
}

#[test]
fn enums() {
    let s = push_schema();
    assert_eq!(
        args(opts(json!({"remote": "upstream"})), &s)["remote"],
        json!("upstream")
    );
    assert_eq!(
        args(opts(json!({"remote": "UPSTREAM"})), &s)["remote"],
        json!("upstream")
    );
    let e = err(opts(json!({"remote": "upstrem"})), &s);
    assert_eq!(
        e.to_string(),
        "invalid value 'upstrem' for --remote: expected one of origin, upstream (did you mean upstream?)"
    );
    assert_eq!(
        err(opts(json!({"remote": true})), &s).to_string(),
        "option --remote needs a value (one of origin, upstream)"
    );
}

#[test]
fn enums_with_non_string_values() {
    let s = json!({"properties": {"level": {"enum": [1, 2, true]}}});
    assert_eq!(args(opts(json!({"level": "2"})), &s)["level"], json!(2));
    assert_eq!(
        args(opts(json!({"level": "true"})), &s)["level"],
        json!(true)
    );
    assert!(matches!(
        err(opts(json!({"level": "3"})), &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn ambiguous_case_insensitive_enum_is_rejected() {
    let s = json!({"properties": {"m": {"enum": ["a", "A"]}}});
    assert_eq!(args(opts(json!({"m": "A"})), &s)["m"], json!("A"));
    assert!(matches!(
        err(opts(json!({"m": "a\u{301}"})), &s),
        CoerceError::InvalidValue { .. }
    ));
    let s = json!({"properties": {"m": {"enum": ["ab", "AB"]}}});
    assert!(matches!(
        err(opts(json!({"m": "Ab"})), &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn arrays() {
    let s = push_schema();
    assert_eq!(
        args(opts(json!({"tags": "a,b,c"})), &s)["tags"],
        json!(["a", "b", "c"])
    );
    assert_eq!(
        args(opts(json!({"tags": "a, b ,c"})), &s)["tags"],
        json!(["a", "b", "c"])
    );
    assert_eq!(
        args(opts(json!({"tags": "single"})), &s)["tags"],
        json!(["single"])
    );
    assert_eq!(args(opts(json!({"tags": ""})), &s)["tags"], json!([]));
    assert_eq!(
        args(opts(json!({"tags": r#"["a,b", "c"]"#})), &s)["tags"],
        json!(["a,b", "c"])
    );
    assert_eq!(
        args(opts(json!({"ids": "1,-2,3"})), &s)["ids"],
        json!([1, -2, 3])
    );
    assert_eq!(
        args(opts(json!({"ids": r#"[1, "2"]"#})), &s)["ids"],
        json!([1, 2])
    );
    let e = err(opts(json!({"ids": "1,x"})), &s);
    assert_eq!(
        e.to_string(),
        "invalid value 'x' for --ids item 2: expected a whole number"
    );
    assert!(
        err(opts(json!({"tags": "[1,"})), &s)
            .to_string()
            .contains("JSON array")
    );
    assert!(matches!(
        err(opts(json!({"tags": true})), &s),
        CoerceError::MissingValue { .. }
    ));
}

#[test]
fn objects() {
    let s = push_schema();
    assert_eq!(
        args(opts(json!({"env": r#"{"A": "1"}"#})), &s)["env"],
        json!({"A": "1"})
    );
    for bad in ["[1]", "x", "{"] {
        let e = err(opts(json!({"env": bad})), &s);
        assert!(e.to_string().contains("a JSON object"), "{e}");
    }
}

#[test]
fn option_name_equivalences() {
    let s = write_schema();
    let out = args(
        words(
            &["p", "c"],
            json!({"create-dirs": true, "replace-all": true, "timeout": "3"}),
        ),
        &s,
    );
    assert_eq!(
        out,
        json!({"path": "p", "content": "c", "createDirs": true, "timeout": 3, "replaceAll": true})
    );
    assert_eq!(
        args(words(&["p", "c"], json!({"createDirs": "no"})), &s)["createDirs"],
        json!(false)
    );
    assert_eq!(
        args(words(&["p", "c"], json!({"create_dirs": true})), &s)["createDirs"],
        json!(true)
    );
    let snake = json!({"properties": {"replace_all": {"type": "boolean"}}});
    assert_eq!(
        args(opts(json!({"replace-all": true})), &snake),
        json!({"replace_all": true})
    );
    assert_eq!(
        args(opts(json!({"replaceAll": true})), &snake),
        json!({"replace_all": true})
    );
}

#[test]
fn schemars_option_and_enum_refs() {
    let s = write_schema();
    let out = args(
        opts(json!({"path": "/out/a.txt", "content": "hi", "language": "bash", "timeout": "10"})),
        &s,
    );
    assert_eq!(out["language"], json!("bash"));
    assert_eq!(out["timeout"], json!(10));
    match serde_json::from_value::<WriteArgs>(out) {
        Ok(typed) => assert_eq!(typed.language, Some(Language::Bash)),
        Err(e) => panic!("coerced args do not deserialise: {e}"),
    }
    assert!(
        err(opts(json!({"language": "ruby"})), &s)
            .to_string()
            .contains("one of python, bash")
    );
    assert!(matches!(
        err(opts(json!({"timeout": "-1x"})), &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn unknown_option_lists_known_and_suggests() {
    let e = err(opts(json!({"forse": true})), &push_schema());
    assert_eq!(
        e.to_string(),
        "unknown option --forse (did you mean --force?); known options: --branch, --remote, \
         --force, --count, --ratio, --tags, --ids, --env"
    );
    let e = err(opts(json!({"f": true})), &push_schema());
    assert!(
        matches!(&e, CoerceError::UnknownOption { option, suggestion: Some(s), .. }
        if option == "-f" && s == "--force")
    );
    let none = err(opts(json!({"a": "1"})), &json!({"type": "object"}));
    assert_eq!(
        none.to_string(),
        "unknown option -a; this tool takes no options"
    );
    let none = err(opts(json!({"ab": "1"})), &json!({"type": "object"}));
    assert_eq!(
        none.to_string(),
        "unknown option --ab; this tool takes no options"
    );
}

#[test]
fn ambiguous_option() {
    let s = json!({"properties": {"a_b": {"type": "string"}, "aB": {"type": "string"}}});
    assert_eq!(
        args(opts(json!({"a_b": "1", "aB": "2"})), &s),
        json!({"a_b": "1", "aB": "2"})
    );
    assert!(matches!(
        err(opts(json!({"a-b": "1"})), &s),
        CoerceError::AmbiguousOption { .. }
    ));
}

#[test]
fn positional_args_fill_required_in_property_order() {
    let s = write_schema();
    assert_eq!(
        args(words(&["/out/a.txt", "hello"], json!({})), &s),
        json!({"path": "/out/a.txt", "content": "hello"})
    );
    assert_eq!(
        args(words(&["hello"], json!({"path": "/p"})), &s),
        json!({"path": "/p", "content": "hello"}),
        "options take their property first"
    );
    let e = err(words(&["a", "b", "c"], json!({})), &s);
    assert_eq!(
        e.to_string(),
        "too many arguments: 'c' left over; positional values fill only path, content in that order; \
         pass others as --name value"
    );
    let e = err(words(&["extra"], json!({"path": "a", "content": "b"})), &s);
    assert!(matches!(e, CoerceError::TooManyArguments { ref slots, .. } if slots.is_empty()));
    assert!(
        e.to_string()
            .ends_with("pass values as options, as in --name value")
    );
}

#[test]
fn positional_args_are_typed() {
    let s = json!({"properties": {"n": {"type": "integer"}}, "required": ["n"]});
    assert_eq!(args(words(&["-5"], json!({})), &s), json!({"n": -5}));
    assert_eq!(
        err(words(&["abc"], json!({})), &s).to_string(),
        "invalid value 'abc' for argument n: expected a whole number"
    );
}

#[test]
fn result_is_in_property_order() {
    let out = args(
        opts(json!({"env": "{}", "count": "1", "branch": "b"})),
        &push_schema(),
    );
    let keys: Vec<&String> = match &out {
        Value::Object(map) => map.keys().collect(),
        _ => Vec::new(),
    };
    assert_eq!(keys, ["branch", "count", "env"]);
}

#[test]
fn later_repeated_option_wins_across_spellings() {
    let s = write_schema();
    assert_eq!(
        args(
            words(
                &["a", "b"],
                json!({"create-dirs": true, "createDirs": "false"})
            ),
            &s
        )["createDirs"],
        json!(false)
    );
}

#[test]
fn nullable_unions_and_type_lists() {
    let s = json!({
        "properties": {
            "a": {"type": ["integer", "null"]},
            "b": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "c": {"oneOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]},
            "d": {"type": ["integer", "string"]},
            "e": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
        },
        "$defs": {"N": {"type": "number"}}
    });
    assert_eq!(
        args(
            opts(json!({"a": "1", "b": true, "c": "2.5", "d": "7", "e": "yes"})),
            &s
        ),
        json!({"a": 1, "b": true, "c": 2.5, "d": 7, "e": true})
    );
    assert_eq!(args(opts(json!({"d": "seven"})), &s)["d"], json!("seven"));
    assert_eq!(args(opts(json!({"e": true})), &s)["e"], json!(true));
    assert_eq!(
        err(opts(json!({"e": "maybe"})), &s).to_string(),
        "invalid value 'maybe' for -e: expected a whole number"
    );
    assert!(matches!(
        err(opts(json!({"a": true})), &s),
        CoerceError::MissingValue { .. }
    ));
}

#[test]
fn untyped_properties_take_strings_and_flags() {
    let s = json!({"properties": {"any": {}, "t": true}});
    assert_eq!(
        args(opts(json!({"any": "5", "t": true})), &s),
        json!({"any": "5", "t": true})
    );
}

#[test]
fn recursive_array_schema_terminates() {
    let s = json!({"properties": {"r": {"$ref": "#/$defs/R"}}, "$defs": {"R": {"type": "array", "items": {"$ref": "#/$defs/R"}}}});
    let out = args(opts(json!({"r": "a"})), &s);
    assert!(out["r"].is_array());
}

#[test]
fn self_referencing_unions_terminate() {
    let s = json!({
        "properties": {"u": {"$ref": "#/$defs/U"}, "v": {"$ref": "#/$defs/V"}},
        "$defs": {
            "U": {"anyOf": [{"$ref": "#/$defs/U"}, {"$ref": "#/$defs/U"}, {"type": "integer"}]},
            "V": {"anyOf": [
                {"type": "array", "items": {"$ref": "#/$defs/V"}},
                {"type": "array", "items": {"$ref": "#/$defs/V"}},
                {"type": "boolean"}
            ]}
        }
    });
    assert!(typed(&opts(json!({"u": "5"})), &s).is_ok());
    let _ = typed(&opts(json!({"v": "a,b,c"})), &s);
    let _ = typed(&opts(json!({"v": r#"[[[[[[[["a"]]]]]]]]"#})), &s);
    assert!(typed(&opts(json!({"v": "yes"})), &s).is_ok());
}

#[test]
fn pre_typed_option_values_pass_through() {
    let mut options = Map::new();
    options.insert("count".into(), json!(3));
    options.insert("force".into(), json!(false));
    let out = options_to_args(&[], &options, &push_schema()).ok();
    assert_eq!(
        out.map(Value::Object),
        Some(json!({"force": false, "count": 3}))
    );
}

#[test]
fn empty_and_odd_schemas() {
    for schema in [
        json!({}),
        json!(true),
        json!(null),
        json!({"properties": []}),
    ] {
        assert_eq!(options_to_args(&[], &Map::new(), &schema), Ok(Map::new()));
    }
    assert!(matches!(
        typed(&words(&["a"], json!({})), &json!({})),
        Err(CoerceError::TooManyArguments { .. })
    ));
}

#[test]
fn missing_required_lists_gaps() {
    let s = write_schema();
    let out = match typed(&opts(json!({"content": "hi"})), &s) {
        Ok(map) => map,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(Value::Object(out.clone()), json!({"content": "hi"}));
    assert_eq!(missing_required(&out, &s), vec!["path"]);
    assert_eq!(missing_required(&Map::new(), &s), vec!["path", "content"]);
    assert!(missing_required(&Map::new(), &json!(null)).is_empty());
}

#[test]
fn normalize_forms() {
    assert_eq!(normalize("createDirs"), "create_dirs");
    assert_eq!(normalize("create-dirs"), "create_dirs");
    assert_eq!(normalize("CREATE-DIRS"), "create_dirs");
    assert_eq!(normalize("numResults2x"), "num_results2x");
    assert_eq!(normalize("a2B"), "a2_b");
}

#[test]
fn parse_bool_words() {
    assert_eq!(parse_bool(" TRUE "), Some(true));
    assert_eq!(parse_bool("maybe"), None);
    assert_eq!(parse_bool(""), None);
}

#[test]
fn a_form_answer_is_typed_and_its_error_names_the_field() {
    let schema = json!({
        "type": "object",
        "properties": {"offset": {"type": "integer"}, "all": {"type": "boolean"}}
    });
    assert_eq!(field_value(&schema, "offset", "12").unwrap(), json!(12));
    assert_eq!(field_value(&schema, "all", "yes").unwrap(), json!(true));
    let error = field_value(&schema, "offset", "soon")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("invalid value 'soon' for offset: expected"),
        "{error}"
    );
    assert!(!error.contains("--"), "{error}");
    assert!(field_value(&schema, "nope", "1").is_err());
}
