//! Allow-lists of the request fields each provider API documents, per object type, and a
//! checker that reports every key not on the list, every required key missing and every value
//! of the wrong type. The lists are taken from the official API references (cited at each
//! wire's entry point) and from the official SDKs' request types generated from them; a field
//! that is documented but never sent by our clients is listed with [`Kind::Any`], so that
//! only the shape of what we do send is held to its type.
//!
//! Content parts and tool types the clients never send (images, files, audio, built-in tools)
//! are not listed: sending one would be flagged until it is added here from the reference.

use serde_json::Value;

/// A checker of one object type: appends a problem (path and what is wrong) per fault.
type Check = fn(&Value, &str, &mut Vec<String>);

/// What a field may hold.
#[derive(Clone, Copy)]
enum Kind {
    /// A string.
    Str,
    /// A boolean.
    Bool,
    /// A non-negative integer.
    Int,
    /// A number.
    Num,
    /// Any JSON object (a JSON Schema, a tool's input).
    AnyObject,
    /// A string holding a JSON object (a call's arguments on the OpenAI wires).
    JsonObjectText,
    /// Documented, never sent by us: any value.
    Any,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A string or null.
    StrOrNull,
    /// An object of the type the function checks.
    Obj(Check),
    /// An array whose every element the function checks.
    List(Check),
    /// A string, or an array whose every element the function checks.
    StrOrList(Check),
}

/// A documented field: its name, what it holds, and whether it is required.
struct Field(&'static str, Kind, bool);

const fn req(name: &'static str, kind: Kind) -> Field {
    Field(name, kind, true)
}

const fn opt(name: &'static str, kind: Kind) -> Field {
    Field(name, kind, false)
}

fn problem(problems: &mut Vec<String>, path: &str, what: impl std::fmt::Display) {
    problems.push(format!("{path}: {what}"));
}

/// Checks `value` as an object with exactly the documented `fields`.
fn object(value: &Value, path: &str, fields: &[Field], problems: &mut Vec<String>) {
    let Some(map) = value.as_object() else {
        problem(problems, path, format!("expected an object, got {value}"));
        return;
    };
    for (key, field_value) in map {
        let field_path = format!("{path}.{key}");
        match fields.iter().find(|field| field.0 == key) {
            Some(field) => kind(field_value, &field_path, field.1, problems),
            None => problem(problems, &field_path, "not a documented field"),
        }
    }
    for field in fields.iter().filter(|field| field.2) {
        if !map.contains_key(field.0) {
            problem(
                problems,
                &format!("{path}.{}", field.0),
                "required, missing",
            );
        }
    }
}

fn list(value: &Value, path: &str, check: Check, problems: &mut Vec<String>) {
    match value.as_array() {
        Some(items) => {
            for (n, item) in items.iter().enumerate() {
                check(item, &format!("{path}[{n}]"), problems);
            }
        }
        None => problem(problems, path, format!("expected an array, got {value}")),
    }
}

fn kind(value: &Value, path: &str, kind: Kind, problems: &mut Vec<String>) {
    let ok = match kind {
        Kind::Str => value.is_string(),
        Kind::Bool => value.is_boolean(),
        Kind::Int => value.is_u64(),
        Kind::Num => value.is_number(),
        Kind::AnyObject => value.is_object(),
        Kind::JsonObjectText => value
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .is_some_and(|parsed| parsed.is_object()),
        Kind::Any => true,
        Kind::OneOf(allowed) => value.as_str().is_some_and(|s| allowed.contains(&s)),
        Kind::StrOrNull => value.is_string() || value.is_null(),
        Kind::Obj(check) => {
            check(value, path, problems);
            true
        }
        Kind::List(check) => {
            list(value, path, check, problems);
            true
        }
        Kind::StrOrList(check) => {
            if !value.is_string() {
                list(value, path, check, problems);
            }
            true
        }
    };
    if !ok {
        let expected = match kind {
            Kind::Str => "a string".to_owned(),
            Kind::Bool => "a boolean".to_owned(),
            Kind::Int => "a non-negative integer".to_owned(),
            Kind::Num => "a number".to_owned(),
            Kind::AnyObject => "an object".to_owned(),
            Kind::JsonObjectText => "a string holding a JSON object".to_owned(),
            Kind::OneOf(allowed) => format!("one of {allowed:?}"),
            Kind::StrOrNull => "a string or null".to_owned(),
            Kind::Any | Kind::Obj(_) | Kind::List(_) | Kind::StrOrList(_) => String::new(),
        };
        problem(problems, path, format!("expected {expected}, got {value}"));
    }
}

/// The value of `key` when it is a string.
fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

// ---- Anthropic Messages: https://docs.anthropic.com/en/api/messages (POST /v1/messages) ----

/// The problems of a Messages API request body (empty when it is as documented).
pub(crate) fn anthropic(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    object(
        body,
        "$",
        &[
            req("model", Kind::Str),
            req("max_tokens", Kind::Int),
            req("messages", Kind::List(anthropic_message)),
            opt("system", Kind::StrOrList(anthropic_text)),
            opt("tools", Kind::List(anthropic_tool)),
            opt("tool_choice", Kind::Any),
            opt("stream", Kind::Bool),
            opt("temperature", Kind::Num),
            opt("top_p", Kind::Any),
            opt("top_k", Kind::Any),
            opt("stop_sequences", Kind::Any),
            opt("metadata", Kind::Any),
            opt("thinking", Kind::Any),
            opt("service_tier", Kind::Any),
            opt("container", Kind::Any),
            opt("mcp_servers", Kind::Any),
            opt("context_management", Kind::Any),
        ],
        &mut problems,
    );
    problems
}

fn anthropic_message(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("role", Kind::OneOf(&["user", "assistant"])),
            req("content", Kind::StrOrList(anthropic_block)),
        ],
        problems,
    );
}

/// `cache_control`: `{type: "ephemeral", ttl?}`.
fn anthropic_cache_control(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["ephemeral"])),
            opt("ttl", Kind::OneOf(&["5m", "1h"])),
        ],
        problems,
    );
}

fn anthropic_text(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["text"])),
            req("text", Kind::Str),
            opt("cache_control", Kind::Obj(anthropic_cache_control)),
            opt("citations", Kind::Any),
        ],
        problems,
    );
}

fn anthropic_block(value: &Value, path: &str, problems: &mut Vec<String>) {
    match str_of(value, "type") {
        Some("text") => anthropic_text(value, path, problems),
        Some("tool_use") => object(
            value,
            path,
            &[
                req("type", Kind::OneOf(&["tool_use"])),
                req("id", Kind::Str),
                req("name", Kind::Str),
                req("input", Kind::AnyObject),
                opt("cache_control", Kind::Obj(anthropic_cache_control)),
            ],
            problems,
        ),
        Some("tool_result") => object(
            value,
            path,
            &[
                req("type", Kind::OneOf(&["tool_result"])),
                req("tool_use_id", Kind::Str),
                opt("content", Kind::StrOrList(anthropic_text)),
                opt("is_error", Kind::Bool),
                opt("cache_control", Kind::Obj(anthropic_cache_control)),
            ],
            problems,
        ),
        _ => problem(
            problems,
            path,
            format!("not a content block we send: {value}"),
        ),
    }
}

fn anthropic_tool(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("name", Kind::Str),
            req("input_schema", Kind::AnyObject),
            opt("description", Kind::Str),
            opt("type", Kind::OneOf(&["custom"])),
            opt("cache_control", Kind::Obj(anthropic_cache_control)),
        ],
        problems,
    );
}

// ---- OpenAI Chat Completions: https://platform.openai.com/docs/api-reference/chat/create ----

/// The problems of a Chat Completions request body (empty when it is as documented).
pub(crate) fn chat(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    object(
        body,
        "$",
        &[
            req("model", Kind::Str),
            req("messages", Kind::List(chat_message)),
            opt("tools", Kind::List(chat_tool)),
            opt("tool_choice", Kind::Any),
            opt("parallel_tool_calls", Kind::Bool),
            opt("stream", Kind::Bool),
            opt("stream_options", Kind::Obj(chat_stream_options)),
            opt("max_completion_tokens", Kind::Int),
            // Deprecated for OpenAI's own models, still documented, and what compatible
            // servers (ollama, openrouter, configured providers) read.
            opt("max_tokens", Kind::Int),
            opt("temperature", Kind::Num),
            opt("prompt_cache_key", Kind::Str),
            opt("top_p", Kind::Any),
            opt("n", Kind::Any),
            opt("stop", Kind::Any),
            opt("seed", Kind::Any),
            opt("user", Kind::Any),
            opt("safety_identifier", Kind::Any),
            opt("metadata", Kind::Any),
            opt("store", Kind::Any),
            opt("reasoning_effort", Kind::Any),
            opt("response_format", Kind::Any),
            opt("service_tier", Kind::Any),
            opt("logprobs", Kind::Any),
            opt("top_logprobs", Kind::Any),
            opt("logit_bias", Kind::Any),
            opt("frequency_penalty", Kind::Any),
            opt("presence_penalty", Kind::Any),
            opt("modalities", Kind::Any),
            opt("audio", Kind::Any),
            opt("prediction", Kind::Any),
            opt("verbosity", Kind::Any),
            opt("web_search_options", Kind::Any),
        ],
        &mut problems,
    );
    problems
}

fn chat_stream_options(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            opt("include_usage", Kind::Bool),
            opt("include_obfuscation", Kind::Bool),
        ],
        problems,
    );
}

fn chat_text_part(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[req("type", Kind::OneOf(&["text"])), req("text", Kind::Str)],
        problems,
    );
}

fn chat_message(value: &Value, path: &str, problems: &mut Vec<String>) {
    match str_of(value, "role") {
        Some("system" | "developer" | "user") => object(
            value,
            path,
            &[
                req("role", Kind::OneOf(&["system", "developer", "user"])),
                req("content", Kind::StrOrList(chat_text_part)),
                opt("name", Kind::Str),
            ],
            problems,
        ),
        Some("assistant") => {
            object(
                value,
                path,
                &[
                    req("role", Kind::OneOf(&["assistant"])),
                    opt("content", Kind::Any),
                    opt("refusal", Kind::StrOrNull),
                    opt("name", Kind::Str),
                    opt("audio", Kind::Any),
                    opt("tool_calls", Kind::List(chat_tool_call)),
                    opt("function_call", Kind::Any),
                ],
                problems,
            );
            // string, array of text parts, or null (only when there are tool calls)
            match value.get("content") {
                None | Some(Value::Null) if value.get("tool_calls").is_none() => {
                    problem(problems, path, "content is required without tool_calls");
                }
                Some(Value::Array(_)) => {
                    kind(
                        &value["content"],
                        &format!("{path}.content"),
                        Kind::List(chat_text_part),
                        problems,
                    );
                }
                Some(content) if !(content.is_string() || content.is_null()) => {
                    problem(problems, &format!("{path}.content"), "expected a string");
                }
                _ => {}
            }
        }
        Some("tool") => object(
            value,
            path,
            &[
                req("role", Kind::OneOf(&["tool"])),
                req("content", Kind::StrOrList(chat_text_part)),
                req("tool_call_id", Kind::Str),
            ],
            problems,
        ),
        _ => problem(problems, path, format!("not a documented message: {value}")),
    }
}

fn chat_function_call(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("name", Kind::Str),
            req("arguments", Kind::JsonObjectText),
        ],
        problems,
    );
}

fn chat_tool_call(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("id", Kind::Str),
            req("type", Kind::OneOf(&["function"])),
            req("function", Kind::Obj(chat_function_call)),
        ],
        problems,
    );
}

fn chat_function_definition(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("name", Kind::Str),
            opt("description", Kind::Str),
            opt("parameters", Kind::AnyObject),
            opt("strict", Kind::Bool),
        ],
        problems,
    );
}

fn chat_tool(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["function"])),
            req("function", Kind::Obj(chat_function_definition)),
        ],
        problems,
    );
}

// ---- OpenAI Responses: https://platform.openai.com/docs/api-reference/responses/create ----

/// The problems of a Responses API request body (empty when it is as documented).
pub(crate) fn responses(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    object(
        body,
        "$",
        &[
            req("model", Kind::Str),
            opt("input", Kind::StrOrList(responses_item)),
            opt("instructions", Kind::Str),
            opt("tools", Kind::List(responses_tool)),
            opt("tool_choice", Kind::Any),
            opt("parallel_tool_calls", Kind::Bool),
            opt("stream", Kind::Bool),
            opt("stream_options", Kind::Any),
            opt("store", Kind::Bool),
            opt("max_output_tokens", Kind::Int),
            opt("temperature", Kind::Num),
            opt("prompt_cache_key", Kind::Str),
            opt("prompt_cache_retention", Kind::Any),
            opt("max_tool_calls", Kind::Any),
            opt("top_p", Kind::Any),
            opt("top_logprobs", Kind::Any),
            opt("metadata", Kind::Any),
            opt("previous_response_id", Kind::Any),
            opt("conversation", Kind::Any),
            opt("include", Kind::Any),
            opt("reasoning", Kind::Any),
            opt("text", Kind::Any),
            opt("truncation", Kind::Any),
            opt("user", Kind::Any),
            opt("safety_identifier", Kind::Any),
            opt("service_tier", Kind::Any),
            opt("background", Kind::Any),
            opt("prompt", Kind::Any),
        ],
        &mut problems,
    );
    problems
}

/// `input_text`, the one input content part we send.
fn responses_input_text(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["input_text"])),
            req("text", Kind::Str),
        ],
        problems,
    );
}

/// `output_text` in an output message.
fn responses_output_text(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["output_text"])),
            req("text", Kind::Str),
            req("annotations", Kind::Any),
            opt("logprobs", Kind::Any),
        ],
        problems,
    );
}

const ITEM_STATUS: Kind = Kind::OneOf(&["in_progress", "completed", "incomplete"]);

fn responses_item(value: &Value, path: &str, problems: &mut Vec<String>) {
    match (str_of(value, "type"), value.get("id")) {
        // An output message the model produced (ResponseOutputMessage): id and status required.
        (Some("message"), Some(_)) if str_of(value, "role") == Some("assistant") => object(
            value,
            path,
            &[
                req("id", Kind::Str),
                req("type", Kind::OneOf(&["message"])),
                req("role", Kind::OneOf(&["assistant"])),
                req("status", ITEM_STATUS),
                req("content", Kind::List(responses_output_text)),
            ],
            problems,
        ),
        // EasyInputMessage: string content, or a list of input content parts. (The API
        // refuses input parts in an assistant message, so that one takes a string.)
        (None | Some("message"), _) => {
            object(
                value,
                path,
                &[
                    req(
                        "role",
                        Kind::OneOf(&["user", "assistant", "system", "developer"]),
                    ),
                    req("content", Kind::StrOrList(responses_input_text)),
                    opt("type", Kind::OneOf(&["message"])),
                    opt("phase", Kind::Any),
                ],
                problems,
            );
            if str_of(value, "role") == Some("assistant") && !value["content"].is_string() {
                problem(
                    problems,
                    &format!("{path}.content"),
                    "an assistant easy input message takes string content",
                );
            }
        }
        (Some("function_call"), _) => object(
            value,
            path,
            &[
                req("type", Kind::OneOf(&["function_call"])),
                req("call_id", Kind::Str),
                req("name", Kind::Str),
                req("arguments", Kind::JsonObjectText),
                opt("id", Kind::Str),
                opt("status", ITEM_STATUS),
            ],
            problems,
        ),
        (Some("function_call_output"), _) => object(
            value,
            path,
            &[
                req("type", Kind::OneOf(&["function_call_output"])),
                req("call_id", Kind::Str),
                req("output", Kind::StrOrList(responses_input_text)),
                opt("id", Kind::Str),
                opt("status", ITEM_STATUS),
            ],
            problems,
        ),
        _ => problem(
            problems,
            path,
            format!("not an input item we send: {value}"),
        ),
    }
}

/// A function tool (FunctionTool): `parameters` and `strict` are required keys (the SDK types
/// mark both `Required`; a missing `strict` is taken as `true`).
fn responses_tool(value: &Value, path: &str, problems: &mut Vec<String>) {
    object(
        value,
        path,
        &[
            req("type", Kind::OneOf(&["function"])),
            req("name", Kind::Str),
            req("parameters", Kind::AnyObject),
            req("strict", Kind::Bool),
            opt("description", Kind::Str),
        ],
        problems,
    );
}

// ---- the checker itself ----

#[test]
fn the_checker_finds_unknown_keys_missing_keys_and_wrong_types() {
    use serde_json::json;

    let sorted = |mut problems: Vec<String>| {
        problems.sort();
        problems
    };

    let good = json!({"model": "m", "max_tokens": 10, "stream": true,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]});
    assert_eq!(anthropic(&good), Vec::<String>::new());
    let mut bad = good.clone();
    bad["messages"][0]["content"][0]["extra"] = json!(1);
    bad["max_tokens"] = json!("10");
    bad.as_object_mut().unwrap().remove("model");
    assert_eq!(
        sorted(anthropic(&bad)),
        [
            "$.max_tokens: expected a non-negative integer, got \"10\"",
            "$.messages[0].content[0].extra: not a documented field",
            "$.model: required, missing",
        ]
    );

    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{bad"}}]});
    let body = json!({"model": "m", "messages": [call], "strem": true});
    assert_eq!(
        sorted(chat(&body)),
        [
            "$.messages[0].tool_calls[0].function.arguments: expected a string holding a JSON \
             object, got \"{bad\"",
            "$.strem: not a documented field",
        ]
    );

    let body = json!({"model": "m", "input": [
        {"role": "assistant", "content": [{"type": "output_text", "text": "x"}]}],
        "tools": [{"type": "function", "name": "f", "parameters": {}}]});
    assert_eq!(
        sorted(responses(&body)),
        [
            "$.input[0].content: an assistant easy input message takes string content",
            "$.input[0].content[0].type: expected one of [\"input_text\"], got \"output_text\"",
            "$.tools[0].strict: required, missing",
        ]
    );
}
