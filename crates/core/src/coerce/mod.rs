//! Turning a tool command's options and positional words, as typed, into tool arguments typed by
//! the tool's JSON Schema (`/tool write_file out.txt --create-dirs` → `{"path": ..., "createDirs":
//! true}`). The chat's slash commands (parsed by the terminal front end) and the answers to forms
//! (`crate::input`, and the chat's `-i` form) are typed this way.
//!
//! Option names match property names exactly, or with `-`/`_` and camelCase/kebab-case treated as
//! equal (`--create-dirs` → `createDirs`, `--replace-all` → `replace_all`); `--no-NAME` sets a
//! boolean property to `false`. Positional words fill the required properties the options did not
//! give, in property order. Values are typed by the property schema (local `$ref`s followed,
//! nullable unions unwrapped): integers, numbers, yes/no booleans, strings, enum members,
//! comma-separated or JSON arrays, JSON objects. Whether all required arguments are present is
//! not checked here (an interactive form may fill them); see [`missing_required`].
//!
//! ```
//! use golem_core::coerce::options_to_args;
//! use serde_json::{Map, json};
//!
//! // `/tool git_push --branch main --force`: the options as typed, no positional words.
//! let mut options = Map::new();
//! options.insert("branch".into(), json!("main"));
//! options.insert("force".into(), json!(true));
//! let schema = json!({"type": "object", "properties": {
//!     "branch": {"type": "string"}, "force": {"type": "boolean"}}});
//! let args = options_to_args(&[], &options, &schema)?;
//! assert_eq!(json!(args), json!({"branch": "main", "force": true}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::{Map, Number, Value};
use thiserror::Error;

use crate::fields::{Choice, Kind, kind, required_names, resolve, value_text};
use crate::text::closest;

/// How deeply nested array items are coerced before giving up (guards recursive schemas).
const MAX_NESTING: usize = 4;

/// Why a command's options do not fit a tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CoerceError {
    /// An option names no property of the tool.
    #[error("unknown option {option}{}; {}", did_you_mean(.suggestion), known_list(.known))]
    UnknownOption {
        /// The option as typed, with its dashes.
        option: String,
        /// The tool's options, as `--name`.
        known: Vec<String>,
        /// The closest known option, as `--name`.
        suggestion: Option<String>,
    },
    /// An option matches several properties once case and separators are ignored.
    #[error("option {option} is ambiguous: it could be {}; use the exact name", .candidates.join(" or "))]
    AmbiguousOption {
        /// The option as typed, with its dashes.
        option: String,
        /// The matching options, as `--name`.
        candidates: Vec<String>,
    },
    /// A flag was given where a value is needed.
    #[error("option {option} needs a value{}", choices_hint(.choices))]
    MissingValue {
        /// The option as typed, with its dashes.
        option: String,
        /// The allowed values, when the property is an enumeration.
        choices: Vec<String>,
    },
    /// A value does not have the property's type.
    #[error("invalid value '{value}' for {option}: expected {expected}")]
    InvalidValue {
        /// The option as typed, or the property name for a positional word.
        option: String,
        /// The value given.
        value: String,
        /// What the property takes.
        expected: String,
    },
    /// More positional words than required properties left to fill.
    #[error("too many arguments: {} left over; {}", quote_list(.extra), slots_hint(.slots))]
    TooManyArguments {
        /// The words that found no property.
        extra: Vec<String>,
        /// The properties positional words could fill.
        slots: Vec<String>,
    },
}

/// ` (did you mean --x?)`, or nothing.
fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!(" (did you mean {s}?)"))
        .unwrap_or_default()
}

/// The list of known options for an error message.
fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "this tool takes no options".to_owned()
    } else {
        format!("known options: {}", known.join(", "))
    }
}

/// ` (one of a, b)`, or nothing.
fn choices_hint(choices: &[String]) -> String {
    if choices.is_empty() {
        String::new()
    } else {
        format!(" (one of {})", choices.join(", "))
    }
}

/// `'a', 'b'`.
fn quote_list(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which properties positional words fill, for [`CoerceError::TooManyArguments`].
fn slots_hint(slots: &[String]) -> String {
    if slots.is_empty() {
        "pass values as options, as in --name value".to_owned()
    } else {
        format!(
            "positional values fill only {} in that order; pass others as --name value",
            slots.join(", ")
        )
    }
}

/// Types a tool command's positional words (`args`) and `options` (strings for values, `true`
/// for flags, in the order given; other values pass as they are) by the tool's input schema.
///
/// Returns the arguments in schema property order. See the module documentation for the rules.
pub fn options_to_args(
    args: &[String],
    options: &Map<String, Value>,
    schema: &Value,
) -> Result<Map<String, Value>, CoerceError> {
    let empty = Map::new();
    let properties = properties_of(schema).unwrap_or(&empty);
    let mut given = Map::new();
    for (key, raw) in options {
        let option = display_option(key);
        let (name, value) = match find_property(key, properties, &option)? {
            Some(name) => (name, coerce(schema, &properties[name], raw, &option, 0)?),
            None => negated_flag(schema, key, raw, properties)
                .map(|name| (name, Value::Bool(false)))
                .ok_or_else(|| unknown_option(key, &option, properties))?,
        };
        given.insert(name.to_owned(), value);
    }
    let slots = missing_required(&given, schema);
    if args.len() > slots.len() {
        return Err(CoerceError::TooManyArguments {
            extra: args[slots.len()..].to_vec(),
            slots,
        });
    }
    for (name, word) in slots.into_iter().zip(args) {
        let raw = Value::String(word.clone());
        let label = format!("argument {name}");
        let value = coerce(schema, &properties[name.as_str()], &raw, &label, 0)?;
        given.insert(name, value);
    }
    let mut ordered = Map::new();
    for name in properties.keys() {
        if let Some(value) = given.remove(name) {
            ordered.insert(name.clone(), value);
        }
    }
    Ok(ordered)
}

/// The `properties` of `schema`'s root (after its `$ref`), if it has any.
fn properties_of(schema: &Value) -> Option<&Map<String, Value>> {
    resolve(schema, schema)
        .schema
        .get("properties")
        .and_then(Value::as_object)
}

/// Types one form answer, the text given for property `name` of `schema`, as
/// [`options_to_args`] types an option's value; an error names the field (`limit`), not an
/// option (`--limit`): a form has no options. A name that is no property is an unknown option.
pub fn field_value(schema: &Value, name: &str, answer: &str) -> Result<Value, CoerceError> {
    let empty = Map::new();
    let properties = properties_of(schema).unwrap_or(&empty);
    let Some(property) = properties.get(name) else {
        return Err(unknown_option(name, &display_option(name), properties));
    };
    coerce(schema, property, &Value::String(answer.to_owned()), name, 0)
}

/// The required properties of `schema` that `args` lacks, in property order.
pub fn missing_required(args: &Map<String, Value>, schema: &Value) -> Vec<String> {
    let root = resolve(schema, schema).schema;
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required = required_names(root);
    properties
        .keys()
        .filter(|name| required.contains(&name.as_str()) && !args.contains_key(name.as_str()))
        .cloned()
        .collect()
}

/// `--key`, or `-k` for one-letter keys.
fn display_option(key: &str) -> String {
    if key.chars().count() == 1 {
        format!("-{key}")
    } else {
        format!("--{key}")
    }
}

/// Lower snake case, with camelCase humps and `-` turned into `_` (`createDirs` → `create_dirs`).
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut after_lower = false;
    for c in name.chars() {
        if c == '-' || c == '_' {
            out.push('_');
            after_lower = false;
        } else if c.is_uppercase() {
            if after_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            after_lower = false;
        } else {
            out.push(c);
            after_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// The property an option names: exact match first, then equal once normalised.
fn find_property<'a>(
    key: &str,
    properties: &'a Map<String, Value>,
    option: &str,
) -> Result<Option<&'a str>, CoerceError> {
    if let Some((name, _)) = properties.get_key_value(key) {
        return Ok(Some(name.as_str()));
    }
    let wanted = normalize(key);
    let matches: Vec<&'a str> = properties
        .keys()
        .filter(|name| normalize(name) == wanted)
        .map(String::as_str)
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(only)),
        several => Err(CoerceError::AmbiguousOption {
            option: option.to_owned(),
            candidates: several.iter().map(|name| display_option(name)).collect(),
        }),
    }
}

/// For a bare `--no-NAME` flag where `NAME` is a boolean property, that property.
fn negated_flag<'a>(
    root: &Value,
    key: &str,
    raw: &Value,
    properties: &'a Map<String, Value>,
) -> Option<&'a str> {
    if *raw != Value::Bool(true) {
        return None;
    }
    let rest = key
        .strip_prefix("no-")
        .or_else(|| key.strip_prefix("no_"))?;
    let name = find_property(rest, properties, rest).ok().flatten()?;
    let view = resolve(root, &properties[name]);
    (kind(root, view.schema) == Kind::Boolean).then_some(name)
}

/// The error for an option that names no property.
fn unknown_option(key: &str, option: &str, properties: &Map<String, Value>) -> CoerceError {
    CoerceError::UnknownOption {
        option: option.to_owned(),
        known: properties.keys().map(|name| display_option(name)).collect(),
        suggestion: closest(key, properties.keys().map(String::as_str)).map(display_option),
    }
}

/// Whether `text` is a yes/no word: `true/false/yes/no/1/0/on/off`, any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Some(true),
        "false" | "no" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// Types one raw value (a string, or `true` for a bare flag) by a property schema.
fn coerce(
    root: &Value,
    property: &Value,
    raw: &Value,
    option: &str,
    depth: usize,
) -> Result<Value, CoerceError> {
    let view = resolve(root, property);
    let kind = kind(root, view.schema);
    match raw {
        Value::Bool(true) => coerce_flag(&kind, option),
        Value::String(text) => coerce_text(root, &kind, text, option, depth),
        other => Ok(other.clone()),
    }
}

/// The value of a bare flag: `true` where a boolean (or anything) fits, else an error.
fn coerce_flag(kind: &Kind<'_>, option: &str) -> Result<Value, CoerceError> {
    let takes_flag = |k: &Kind<'_>| matches!(k, Kind::Boolean | Kind::Any);
    let fits = match kind {
        Kind::AnyOf(kinds) => kinds.iter().any(takes_flag),
        other => takes_flag(other),
    };
    if fits {
        return Ok(Value::Bool(true));
    }
    let choices = match kind {
        Kind::Enum(choices) => choices.iter().map(|c| value_text(c.value)).collect(),
        _ => Vec::new(),
    };
    Err(CoerceError::MissingValue {
        option: option.to_owned(),
        choices,
    })
}

/// Types a string value by a kind.
fn coerce_text(
    root: &Value,
    kind: &Kind<'_>,
    text: &str,
    option: &str,
    depth: usize,
) -> Result<Value, CoerceError> {
    let invalid = |expected: &str| CoerceError::InvalidValue {
        option: option.to_owned(),
        value: text.to_owned(),
        expected: expected.to_owned(),
    };
    match kind {
        Kind::Text | Kind::Any => Ok(Value::String(text.to_owned())),
        Kind::Integer => parse_integer(text).ok_or_else(|| invalid("a whole number")),
        Kind::Number => parse_number(text).ok_or_else(|| invalid("a number")),
        Kind::Boolean => parse_bool(text).map(Value::Bool).ok_or_else(|| {
            invalid(&format!(
                "true or false (also yes/no, on/off, 1/0); to follow a flag with another \
                 argument, write {option}=true"
            ))
        }),
        Kind::Enum(choices) => match_choice(text, choices).ok_or_else(|| {
            let texts: Vec<String> = choices.iter().map(|c| value_text(c.value)).collect();
            let hint = closest(text, texts.iter().map(String::as_str))
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            invalid(&format!("one of {}{hint}", texts.join(", ")))
        }),
        Kind::Object => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => Ok(object),
            _ => Err(invalid(r#"a JSON object, as in {"key": "value"}"#)),
        },
        Kind::Array(items) => coerce_array(root, *items, text, option, depth)
            .ok_or_else(|| invalid("comma-separated values or a JSON array"))?,
        Kind::AnyOf(kinds) => {
            let mut first_error = None;
            // Only the first array form is tried, so nested unions of arrays stay linear.
            let first_array = kinds.iter().position(|k| matches!(k, Kind::Array(_)));
            let candidates = kinds.iter().enumerate().filter(|(index, k)| match k {
                Kind::Text | Kind::Any => false,
                Kind::Array(_) => Some(*index) == first_array,
                _ => true,
            });
            for (_, candidate) in candidates {
                match coerce_text(root, candidate, text, option, depth) {
                    Ok(value) => return Ok(value),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if kinds.iter().any(|k| matches!(k, Kind::Text | Kind::Any)) || kinds.is_empty() {
                return Ok(Value::String(text.to_owned()));
            }
            Err(first_error.unwrap_or_else(|| invalid("a value of the allowed forms")))
        }
    }
}

/// Parses a whole number (`-5`, `+7`, `18446744073709551615`).
fn parse_integer(text: &str) -> Option<Value> {
    let text = text.trim();
    text.parse::<i64>()
        .map(Value::from)
        .or_else(|_| text.parse::<u64>().map(Value::from))
        .ok()
}

/// Parses a finite number, keeping whole numbers as integers (`5` → 5, `0.5` → 0.5).
fn parse_number(text: &str) -> Option<Value> {
    parse_integer(text).or_else(|| {
        let number = text.trim().parse::<f64>().ok()?;
        Number::from_f64(number).map(Value::Number)
    })
}

/// The enum value `text` names: exact text first, then a unique case-insensitive match.
fn match_choice(text: &str, choices: &[Choice<'_>]) -> Option<Value> {
    if let Some(choice) = choices.iter().find(|c| value_text(c.value) == text) {
        return Some(choice.value.clone());
    }
    let lowered = text.to_lowercase();
    let mut matching = choices
        .iter()
        .filter(|c| value_text(c.value).to_lowercase() == lowered);
    match (matching.next(), matching.next()) {
        (Some(choice), None) => Some(choice.value.clone()),
        _ => None,
    }
}

/// Splits and types an array value; `None` when a JSON literal does not parse as an array.
fn coerce_array(
    root: &Value,
    items: Option<&Value>,
    text: &str,
    option: &str,
    depth: usize,
) -> Option<Result<Value, CoerceError>> {
    let trimmed = text.trim();
    let elements: Vec<Value> = if trimmed.starts_with('[') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Array(elements)) => elements,
            _ => return None,
        }
    } else if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed
            .split(',')
            .map(|part| Value::String(part.trim().to_owned()))
            .collect()
    };
    let (Some(items), true) = (items, depth < MAX_NESTING) else {
        return Some(Ok(Value::Array(elements)));
    };
    let typed = elements
        .into_iter()
        .enumerate()
        .map(|(index, element)| match element {
            Value::String(_) => {
                let label = format!("{option} item {}", index + 1);
                coerce(root, items, &element, &label, depth + 1)
            }
            other => Ok(other),
        })
        .collect::<Result<Vec<_>, _>>();
    Some(typed.map(Value::Array))
}

#[cfg(test)]
mod tests;
