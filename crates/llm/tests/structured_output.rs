//! A request for a structured answer on each wire: the native format in the body (OpenAI
//! chat's `response_format`, the Responses API's `text.format`, Anthropic's `final_result`
//! tool with its `tool_choice` and system-prompt sentence), `strict` only for a schema that
//! meets OpenAI's strict rules, and nothing of it without an output schema.

use std::time::Duration;

use golem_llm::providers::openai_common::OpenAiConfig;
use golem_llm::{Message, Model, ModelRequest, OutputFormat};
use golem_protocol::ToolDefinition;
use golem_testkit::mock::MockServer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn open_schema() -> Value {
    json!({"type": "object", "properties": {"verdict": {"enum": ["ok", "bad"]},
           "reasons": {"type": "array", "items": {"type": "string"}}}, "required": ["verdict"]})
}

fn strict_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
           "properties": {"verdict": {"enum": ["ok", "bad"]}}, "required": ["verdict"]})
}

fn request(schema: Option<Value>, tools: Vec<ToolDefinition>) -> ModelRequest {
    ModelRequest::new("Judge it.", vec![Message::user("is it ok?")], tools)
        .with_output(schema.map(|schema| OutputFormat::new("judge", schema)))
}

fn read_file() -> ToolDefinition {
    ToolDefinition {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// The body the model sent for `request`.
async fn sent_body(model: &dyn Model, server: &MockServer, request: &ModelRequest) -> Value {
    model
        .complete(request, CancellationToken::new())
        .await
        .unwrap();
    let requests = server.requests();
    requests.last().unwrap().body.clone()
}

fn openai_config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(
        "openai",
        format!("{}/v1", server.base_url),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(crate::openai_chat::settings())
}

#[tokio::test]
async fn openai_chat_sends_response_format_json_schema() {
    let server = MockServer::start(vec![
        golem_testkit::openai::text("{}"),
        golem_testkit::openai::text("{}"),
        golem_testkit::openai::text("{}"),
    ])
    .await;
    let model = crate::openai_chat::model(openai_config(&server));
    let body = sent_body(&model, &server, &request(Some(open_schema()), vec![])).await;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema",
               "json_schema": {"name": "judge", "schema": open_schema(), "strict": false}})
    );
    let body = sent_body(&model, &server, &request(Some(strict_schema()), vec![])).await;
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    let body = sent_body(&model, &server, &request(None, vec![])).await;
    assert!(body.get("response_format").is_none(), "{body}");
}

#[tokio::test]
async fn openai_responses_sends_text_format_json_schema() {
    let server = MockServer::start(vec![
        golem_testkit::responses::text("{}"),
        golem_testkit::responses::text("{}"),
        golem_testkit::responses::text("{}"),
    ])
    .await;
    let model = crate::openai_responses::model(openai_config(&server));
    let body = sent_body(&model, &server, &request(Some(open_schema()), vec![])).await;
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "judge", "schema": open_schema(),
                          "strict": false}})
    );
    let body = sent_body(&model, &server, &request(Some(strict_schema()), vec![])).await;
    assert_eq!(body["text"]["format"]["strict"], true);
    let body = sent_body(&model, &server, &request(None, vec![])).await;
    assert!(body.get("text").is_none(), "{body}");
}

#[tokio::test]
async fn anthropic_offers_a_final_result_tool_and_forces_a_tool_call() {
    let server = MockServer::start(vec![
        golem_testkit::anthropic::text("{}"),
        golem_testkit::anthropic::text("{}"),
        golem_testkit::anthropic::text("{}"),
    ])
    .await;
    let model = crate::anthropic::model_at(
        &server.base_url,
        crate::anthropic::settings(Duration::from_secs(10)),
    );
    // No other tool: the call of `final_result` is forced.
    let body = sent_body(&model, &server, &request(Some(open_schema()), vec![])).await;
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{body}");
    assert_eq!(tools[0]["name"], "final_result");
    assert_eq!(tools[0]["input_schema"], open_schema());
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "final_result"})
    );
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.starts_with("Judge it.\n\n"), "{system}");
    assert!(system.contains("`final_result`"), "{system}");
    // With the worker's tools: `final_result` comes last, and any tool call is required.
    let body = sent_body(
        &model,
        &server,
        &request(Some(open_schema()), vec![read_file()]),
    )
    .await;
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["read_file", "final_result"]);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    // Without an output schema nothing of it is sent.
    let body = sent_body(&model, &server, &request(None, vec![read_file()])).await;
    assert!(body.get("tool_choice").is_none(), "{body}");
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert_eq!(body["system"][0]["text"], "Judge it.");
}
