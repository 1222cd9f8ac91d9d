//! What the model is sent about each tool, in real requests: a worker with every built-in
//! toolset (filesystem, code, shell, workers, web, git) runs against the mock, and each tool's
//! argument schema in the request body is weighed as compact JSON against a budget, checked
//! free of keywords no model needs, and compared with the full schema its calls are validated
//! against (which an invalid call's `tool_error` carries). A worker's structured answer's
//! schema is checked the same way.

use std::collections::BTreeSet;

use golem_core::schema_lean::non_standard_keywords;

use super::*;

/// The built-in tools' schemas together, in bytes of compact JSON, as the requests of
/// [`every_toolset`] carried them before their lean form (measured on 2026-12-02 by this file's
/// sums, with the 22 tools of these toolsets: 551 bytes a tool on average).
const BASELINE_BYTES: usize = 12_126;

/// The share of [`BASELINE_BYTES`] the built-in tools' schemas may take now, in percent.
const BUDGET_PERCENT: usize = 55;

/// The worker `main` with every built-in toolset, and the sub-worker `helper` it may call.
fn every_toolset(env: &TestEnv) {
    let main = worker(
        "main",
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n    - name: repo\n      mode: rw\n    \
         - name: remote\n      mode: rw\ntoolsets:\n  filesystem: {}\n  code: {}\n  shell:\n    \
         rules:\n      - { pattern: \"git \", approval: preApproved }\n  workers:\n    \
         allowed_workers: [helper]\n  web:\n    search: { backend: searxng, url: \"http://127.0.0.1:9\" }\n  \
         git: { zone: repo }\n",
    );
    project(
        env,
        &[
            ("main.worker", main),
            ("helper.worker", worker("helper", "")),
        ],
    );
    super::git::git_repositories(env, "proj");
}

/// A tool's name and argument schema in a request body, whatever the wire's shape
/// (`{name, input_schema}`, `{function: {name, parameters}}` or `{name, parameters}`).
fn sent_tool(tool: &Value) -> (String, Value) {
    let function = tool.get("function").unwrap_or(tool);
    let name = function["name"].as_str().unwrap_or_default().to_owned();
    let schema = tool
        .get("input_schema")
        .or_else(|| function.get("parameters"))
        .cloned()
        .unwrap_or_else(|| panic!("no schema in {tool}"));
    (name, schema)
}

/// Each tool's name and schema, as the first request of one run of `main` on `wire` carried
/// them.
fn sent_schemas(wire: Wire) -> Vec<(String, Value)> {
    let env = TestEnv::new();
    every_toolset(&env);
    let server = MockServer::start_blocking(vec![wire.text("Done.")]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let requests = server.requests();
    let tools = requests[0].body["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{wire:?}: no tools in {}", requests[0].body));
    tools.iter().map(sent_tool).collect()
}

fn bytes(schema: &Value) -> usize {
    serde_json::to_string(schema).unwrap().len()
}

#[test]
fn the_built_in_tools_schemas_fit_their_budget_on_every_wire() {
    let budget = BASELINE_BYTES * BUDGET_PERCENT / 100;
    let mut first: Option<Vec<(String, Value)>> = None;
    for wire in Wire::ALL {
        let schemas = sent_schemas(wire);
        assert_eq!(schemas.len(), 22, "{wire:?}: the tools measured");
        let total: usize = schemas.iter().map(|(_, schema)| bytes(schema)).sum();
        let mut sizes: Vec<(usize, &str)> = schemas
            .iter()
            .map(|(name, schema)| (bytes(schema), name.as_str()))
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            total <= budget,
            "{wire:?}: the built-in tools' schemas take {total} bytes, over the budget of \
             {budget} ({BUDGET_PERCENT} % of {BASELINE_BYTES}); the biggest: {:?}",
            &sizes[..5]
        );
        match &first {
            None => first = Some(schemas),
            Some(before) => assert_eq!(&schemas, before, "{wire:?}: the same schemas"),
        }
    }
}

#[test]
fn no_schema_sent_to_a_model_carries_keywords_no_model_needs() {
    for (name, schema) in sent_schemas(Wire::Anthropic) {
        assert_eq!(
            non_standard_keywords(&schema),
            Vec::<String>::new(),
            "{name}: {schema}"
        );
    }
}

/// The JSON types a property may take, `null` left out, from its `type`, the values of its
/// `enum` or `const`, or its `anyOf`/`oneOf` branches.
fn kinds(schema: &Value) -> BTreeSet<String> {
    let kind_of = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut found = BTreeSet::new();
    match schema.get("type") {
        Some(Value::String(kind)) => {
            found.insert(kind.clone());
        }
        Some(Value::Array(list)) => {
            found.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        Some(_) | None => {
            if let Some(Value::Array(values)) = schema.get("enum") {
                found.extend(values.iter().map(|v| kind_of(v).to_owned()));
            }
            if let Some(value) = schema.get("const") {
                found.insert(kind_of(value).to_owned());
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(branches)) = schema.get(key) {
                    found.extend(branches.iter().flat_map(kinds));
                }
            }
        }
    }
    found.remove("null");
    found
}

fn property_names(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_lean_schemas_name_every_field_and_type_the_full_ones_validate() {
    let wire = Wire::Anthropic;
    let sent = sent_schemas(wire);
    // The model calls every tool with a key none has: each call is refused by validation
    // against the full schema, which its error carries; and an explicit `null` for an optional
    // field, which the lean schema no longer mentions, is still accepted.
    let mut calls: Vec<(String, String, Value)> = sent
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (format!("call_{i}"), name.clone(), json!({"unknown_key": 1})))
        .collect();
    calls.push((
        "call_null".into(),
        "read_file".into(),
        json!({"path": "/out/missing.txt", "offset": null, "limit": null, "encoding": null}),
    ));
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    let env = TestEnv::new();
    every_toolset(&env);
    let server = MockServer::start_blocking(vec![wire.tool_calls(&borrowed), wire.text("Done.")]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let events = events(&output);
    let results = of_type(&events, "toolResult");
    assert_eq!(results.len(), calls.len(), "{results:#?}");
    for (name, lean) in &sent {
        let result = results
            .iter()
            .find(|r| r["toolName"] == name.as_str() && r["toolCallId"] != "call_null")
            .unwrap_or_else(|| panic!("no result for {name}"));
        let error = &result["value"]["data"];
        assert_eq!(error["code"], "INVALID_ARGUMENTS", "{name}: {result}");
        let full = &error["details"]["schema"];
        assert!(full.is_object(), "{name}: {result}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("unknown_key") || property_names(full).is_empty(),
            "{name}: {message}"
        );
        assert_eq!(property_names(lean), property_names(full), "{name}");
        assert_eq!(
            lean.get("required"),
            full.get("required"),
            "{name}: the same required fields"
        );
        for property in property_names(full) {
            assert_eq!(
                kinds(&lean["properties"][&property]),
                kinds(&full["properties"][&property]),
                "{name}.{property}: {lean} vs {full}"
            );
        }
        // What a model needs of the full schema beyond names and types stays.
        for keyword in [
            "minimum",
            "maximum",
            "minLength",
            "minItems",
            "maxItems",
            "examples",
        ] {
            for property in property_names(full) {
                assert_eq!(
                    lean["properties"][&property].get(keyword),
                    full["properties"][&property].get(keyword),
                    "{name}.{property}.{keyword}"
                );
            }
        }
    }
    let null_call = results
        .iter()
        .find(|r| r["toolCallId"] == "call_null")
        .unwrap();
    assert_ne!(
        null_call["value"]["data"]["code"], "INVALID_ARGUMENTS",
        "explicit nulls still validate: {null_call}"
    );
}

/// A structured answer's schema with what no model needs, and an optional field.
const OUTPUT: &str = "output:\n  schema:\n    $schema: \"https://json-schema.org/draft/2020-12/schema\"\n    \
    title: Verdict\n    type: object\n    properties:\n      verdict: { title: Verdict, enum: [ok, bad] }\n      \
    score: { type: [integer, \"null\"], format: uint32, minimum: 0, default: null }\n    \
    required: [verdict]\n";

/// The answer's schema in a request: OpenAI's `response_format` (or the Responses API's
/// `text.format`), or the Anthropic wire's `final_result` tool.
fn output_schema(body: &Value) -> Value {
    if let Some(schema) = body["response_format"]["json_schema"].get("schema") {
        return schema.clone();
    }
    if let Some(schema) = body["text"]["format"].get("schema") {
        return schema.clone();
    }
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(sent_tool)
        .find(|(name, _)| name == "final_result")
        .map(|(_, schema)| schema)
        .unwrap_or_else(|| panic!("no output schema in {body}"))
}

#[test]
fn a_structured_answers_schema_is_sent_lean_and_checked_in_full() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", worker("main", OUTPUT))]);
        let answer = json!({"verdict": "ok", "score": null});
        let server = MockServer::start_blocking(vec![wire.structured_answer(&answer)]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "judge", "--json"],
        );
        assert_exit(&output, 0);
        let schema = output_schema(&server.requests()[0].body);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"verdict": {"enum": ["ok", "bad"]},
                   "score": {"type": "integer", "minimum": 0}}, "required": ["verdict"]}),
            "{wire:?}"
        );
        assert_eq!(non_standard_keywords(&schema), Vec::<String>::new());
        // The answer is checked against the full schema, which allows the explicit null.
        let events = events(&output);
        let ended = of_type(&events, "turnEnded")[0];
        assert_eq!(ended["output"], answer, "{wire:?}: {ended}");
    }
}
