//! Tests of option coercion against tool schemas.
use super::super::parser::parse_command;
use super::*;
use pretty_assertions::assert_eq;
use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::json;

fn parsed(input: &str) -> ParsedCommand {
    match parse_command(input) {
        Ok(p) => p,
        Err(e) => panic!("{input:?}: {e}"),
    }
}

fn args(input: &str, schema: &Value) -> Value {
    match options_to_args(&parsed(input), schema) {
        Ok(map) => Value::Object(map),
        Err(e) => panic!("{input:?}: {e}"),
    }
}

fn err(input: &str, schema: &Value) -> CoerceError {
    match options_to_args(&parsed(input), schema) {
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
fn seed_example_types_options() {
    assert_eq!(
        args("/git_push --branch main --force", &push_schema()),
        json!({"branch": "main", "force": true})
    );
    let line = parsed("/tool git_push --branch main --force -i");
    let super::super::CommandKind::Tool {
        parsed: invocation, ..
    } = super::super::classify_command(&line, &["git_push"])
    else {
        panic!("not a tool command");
    };
    let typed = options_to_args(&invocation, &push_schema())
        .map(Value::Object)
        .ok();
    assert_eq!(typed, Some(json!({"branch": "main", "force": true})));
}

#[test]
fn integers() {
    let s = push_schema();
    assert_eq!(args("/x --count 5", &s)["count"], json!(5));
    assert_eq!(args("/x --count -5", &s)["count"], json!(-5));
    assert_eq!(
        args("/x --count 18446744073709551615", &s)["count"],
        json!(u64::MAX)
    );
    let e = err("/x --count 5.5", &s);
    assert_eq!(
        e.to_string(),
        "invalid value '5.5' for --count: expected a whole number"
    );
    assert!(matches!(
        err("/x --count abc", &s),
        CoerceError::InvalidValue { .. }
    ));
    assert!(matches!(
        err("/x --count ''", &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn numbers() {
    let s = push_schema();
    assert_eq!(args("/x --ratio 0.5", &s)["ratio"], json!(0.5));
    assert_eq!(args("/x --ratio -1e3", &s)["ratio"], json!(-1000.0));
    assert_eq!(args("/x --ratio 3", &s)["ratio"], json!(3));
    for bad in ["nan", "inf", "-inf", "x1", "1e999"] {
        let e = err(&format!("/x --ratio={bad}"), &s);
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
            args(&format!("/x --force {word}"), &s)["force"],
            json!(expected),
            "{word}"
        );
    }
    assert_eq!(args("/x --force=false", &s)["force"], json!(false));
    assert_eq!(args("/x --force", &s)["force"], json!(true));
    let e = err("/x --force origin", &s);
    assert!(e.to_string().contains("--force=true"), "{e}");
}

#[test]
fn negated_boolean_flag() {
    let s = push_schema();
    assert_eq!(args("/x --no-force", &s)["force"], json!(false));
    assert!(matches!(
        err("/x --no-branch", &s),
        CoerceError::UnknownOption { .. }
    ));
    assert!(matches!(
        err("/x --no-force=yes", &s),
        CoerceError::UnknownOption { .. }
    ));
}

#[test]
fn string_flag_needs_value() {
    let e = err("/x --branch", &push_schema());
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
        args("/x --remote upstream", &s)["remote"],
        json!("upstream")
    );
    assert_eq!(
        args("/x --remote UPSTREAM", &s)["remote"],
        json!("upstream")
    );
    let e = err("/x --remote upstrem", &s);
    assert_eq!(
        e.to_string(),
        "invalid value 'upstrem' for --remote: expected one of origin, upstream (did you mean upstream?)"
    );
    assert_eq!(
        err("/x --remote", &s).to_string(),
        "option --remote needs a value (one of origin, upstream)"
    );
}

#[test]
fn enums_with_non_string_values() {
    let s = json!({"properties": {"level": {"enum": [1, 2, true]}}});
    assert_eq!(args("/x --level 2", &s)["level"], json!(2));
    assert_eq!(args("/x --level true", &s)["level"], json!(true));
    assert!(matches!(
        err("/x --level 3", &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn ambiguous_case_insensitive_enum_is_rejected() {
    let s = json!({"properties": {"m": {"enum": ["a", "A"]}}});
    assert_eq!(args("/x --m A", &s)["m"], json!("A"));
    assert!(matches!(
        err("/x --m \u{61}\u{301}", &s),
        CoerceError::InvalidValue { .. }
    ));
    let s = json!({"properties": {"m": {"enum": ["ab", "AB"]}}});
    assert!(matches!(
        err("/x --m Ab", &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn arrays() {
    let s = push_schema();
    assert_eq!(args("/x --tags a,b,c", &s)["tags"], json!(["a", "b", "c"]));
    assert_eq!(
        args("/x --tags 'a, b ,c'", &s)["tags"],
        json!(["a", "b", "c"])
    );
    assert_eq!(args("/x --tags single", &s)["tags"], json!(["single"]));
    assert_eq!(args("/x --tags ''", &s)["tags"], json!([]));
    assert_eq!(
        args(r#"/x --tags '["a,b", "c"]'"#, &s)["tags"],
        json!(["a,b", "c"])
    );
    assert_eq!(args("/x --ids 1,-2,3", &s)["ids"], json!([1, -2, 3]));
    assert_eq!(args("/x --ids '[1, \"2\"]'", &s)["ids"], json!([1, 2]));
    let e = err("/x --ids 1,x", &s);
    assert_eq!(
        e.to_string(),
        "invalid value 'x' for --ids item 2: expected a whole number"
    );
    assert!(
        err("/x --tags '[1,'", &s)
            .to_string()
            .contains("JSON array")
    );
    assert!(matches!(
        err("/x --tags", &s),
        CoerceError::MissingValue { .. }
    ));
}

#[test]
fn objects() {
    let s = push_schema();
    assert_eq!(
        args(r#"/x --env '{"A": "1"}'"#, &s)["env"],
        json!({"A": "1"})
    );
    for bad in ["'[1]'", "x", "'{'"] {
        let e = err(&format!("/x --env {bad}"), &s);
        assert!(e.to_string().contains("a JSON object"), "{e}");
    }
}

#[test]
fn option_name_equivalences() {
    let s = write_schema();
    let out = args("/x p c --create-dirs --replace-all --timeout 3", &s);
    assert_eq!(
        out,
        json!({"path": "p", "content": "c", "createDirs": true, "timeout": 3, "replaceAll": true})
    );
    assert_eq!(
        args("/x p c --createDirs=no", &s)["createDirs"],
        json!(false)
    );
    assert_eq!(args("/x p c --create_dirs", &s)["createDirs"], json!(true));
    let snake = json!({"properties": {"replace_all": {"type": "boolean"}}});
    assert_eq!(
        args("/x --replace-all", &snake),
        json!({"replace_all": true})
    );
    assert_eq!(
        args("/x --replaceAll", &snake),
        json!({"replace_all": true})
    );
}

#[test]
fn schemars_option_and_enum_refs() {
    let s = write_schema();
    let out = args(
        "/x --path /out/a.txt --content hi --language bash --timeout 10",
        &s,
    );
    assert_eq!(out["language"], json!("bash"));
    assert_eq!(out["timeout"], json!(10));
    match serde_json::from_value::<WriteArgs>(out) {
        Ok(typed) => assert_eq!(typed.language, Some(Language::Bash)),
        Err(e) => panic!("coerced args do not deserialise: {e}"),
    }
    assert!(
        err("/x --language ruby", &s)
            .to_string()
            .contains("one of python, bash")
    );
    assert!(matches!(
        err("/x --timeout=-1x", &s),
        CoerceError::InvalidValue { .. }
    ));
}

#[test]
fn unknown_option_lists_known_and_suggests() {
    let e = err("/x --forse", &push_schema());
    assert_eq!(
        e.to_string(),
        "unknown option --forse (did you mean --force?); known options: --branch, --remote, \
         --force, --count, --ratio, --tags, --ids, --env"
    );
    let e = err("/x -f", &push_schema());
    assert!(
        matches!(&e, CoerceError::UnknownOption { option, suggestion: Some(s), .. }
        if option == "-f" && s == "--force")
    );
    let none = err("/x --a 1", &json!({"type": "object"}));
    assert_eq!(
        none.to_string(),
        "unknown option -a; this tool takes no options"
    );
    let none = err("/x --ab 1", &json!({"type": "object"}));
    assert_eq!(
        none.to_string(),
        "unknown option --ab; this tool takes no options"
    );
}

#[test]
fn ambiguous_option() {
    let s = json!({"properties": {"a_b": {"type": "string"}, "aB": {"type": "string"}}});
    assert_eq!(
        args("/x --a_b 1 --aB 2", &s),
        json!({"a_b": "1", "aB": "2"})
    );
    assert!(matches!(
        err("/x --a-b 1", &s),
        CoerceError::AmbiguousOption { .. }
    ));
}

#[test]
fn positional_args_fill_required_in_property_order() {
    let s = write_schema();
    assert_eq!(
        args("/x /out/a.txt hello", &s),
        json!({"path": "/out/a.txt", "content": "hello"})
    );
    assert_eq!(
        args("/x --path /p hello", &s),
        json!({"path": "/p", "content": "hello"}),
        "options take their property first"
    );
    let e = err("/x a b c", &s);
    assert_eq!(
        e.to_string(),
        "too many arguments: 'c' left over; positional values fill only path, content in that order; \
         pass others as --name value"
    );
    let e = err("/x --path a --content b extra", &s);
    assert!(matches!(e, CoerceError::TooManyArguments { ref slots, .. } if slots.is_empty()));
    assert!(
        e.to_string()
            .ends_with("pass values as options, as in --name value")
    );
}

#[test]
fn positional_args_are_typed() {
    let s = json!({"properties": {"n": {"type": "integer"}}, "required": ["n"]});
    assert_eq!(args("/x -- -5", &s), json!({"n": -5}));
    assert_eq!(
        err("/x abc", &s).to_string(),
        "invalid value 'abc' for argument n: expected a whole number"
    );
}

#[test]
fn result_is_in_property_order() {
    let out = args("/x --env {} --count 1 --branch b", &push_schema());
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
        args("/x a b --create-dirs --createDirs=false", &s)["createDirs"],
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
        args("/x --a 1 --b --c 2.5 --d 7 --e yes", &s),
        json!({"a": 1, "b": true, "c": 2.5, "d": 7, "e": true})
    );
    assert_eq!(args("/x --d seven", &s)["d"], json!("seven"));
    assert_eq!(args("/x --e", &s)["e"], json!(true));
    assert_eq!(
        err("/x --e maybe", &s).to_string(),
        "invalid value 'maybe' for -e: expected a whole number"
    );
    assert!(matches!(
        err("/x --a", &s),
        CoerceError::MissingValue { .. }
    ));
}

#[test]
fn untyped_properties_take_strings_and_flags() {
    let s = json!({"properties": {"any": {}, "t": true}});
    assert_eq!(args("/x --any 5 --t", &s), json!({"any": "5", "t": true}));
}

#[test]
fn recursive_array_schema_terminates() {
    let s = json!({"properties": {"r": {"$ref": "#/$defs/R"}}, "$defs": {"R": {"type": "array", "items": {"$ref": "#/$defs/R"}}}});
    let out = args("/x --r a", &s);
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
    assert!(options_to_args(&parsed("/x --u 5"), &s).is_ok());
    let _ = options_to_args(&parsed("/x --v a,b,c"), &s);
    let _ = options_to_args(&parsed("/x --v '[[[[[[[[\"a\"]]]]]]]]'"), &s);
    assert!(options_to_args(&parsed("/x --v yes"), &s).is_ok());
}

#[test]
fn pre_typed_option_values_pass_through() {
    let mut p = ParsedCommand::default();
    p.options.insert("count".into(), json!(3));
    p.options.insert("force".into(), json!(false));
    let out = options_to_args(&p, &push_schema()).ok();
    assert_eq!(
        out.map(Value::Object),
        Some(json!({"force": false, "count": 3}))
    );
}

#[test]
fn empty_and_odd_schemas() {
    let p = ParsedCommand::default();
    for schema in [
        json!({}),
        json!(true),
        json!(null),
        json!({"properties": []}),
    ] {
        assert_eq!(options_to_args(&p, &schema), Ok(Map::new()));
    }
    assert!(matches!(
        options_to_args(&parsed("/x a"), &json!({})),
        Err(CoerceError::TooManyArguments { .. })
    ));
}

#[test]
fn missing_required_lists_gaps() {
    let s = write_schema();
    let out = match options_to_args(&parsed("/x --content hi"), &s) {
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
