//! A provider server as strict as a real one about the conversation it is sent: like LiteLLM,
//! it answers HTTP 400 to a request whose history holds tool-call arguments that are not a
//! JSON object ("Failed to parse tool call arguments"), and like the Responses API, to a
//! function tool without `strict: false` whose schema strict mode refuses. Requests it accepts
//! get the next scripted reply; every request body is recorded.
//!
//! A plain HTTP/1.1 server on a Tokio listener (one request per connection, `connection:
//! close`), so that the check runs before the reply is chosen, which the scripted
//! `golem_testkit::mock` server does not do.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use golem_testkit::mock::{Chunk, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Which API the server speaks, for its checks and the shape of its error replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    bodies: Vec<Value>,
    refused: Vec<String>,
}

/// A running strict server; dropping it stops it.
pub(crate) struct StrictServer {
    /// `http://127.0.0.1:PORT`.
    pub(crate) base_url: String,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StrictServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StrictServer {
    /// Starts a server for `api` answering accepted requests with `replies`, in order.
    pub(crate) async fn start(api: Api, replies: Vec<Reply>) -> Self {
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            ..State::default()
        }));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let served = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(api, stream, served.clone()));
            }
        });
        Self {
            base_url,
            state,
            task,
        }
    }

    /// Every request body received, in order.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.state.lock().unwrap().bodies.clone()
    }

    /// Why requests were refused, in order.
    pub(crate) fn refused(&self) -> Vec<String> {
        self.state.lock().unwrap().refused.clone()
    }
}

/// The body of one HTTP/1.1 request (headers up to the blank line, then `content-length`
/// bytes).
pub(crate) async fn read_body(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let header_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    Some(buffer[header_end..header_end + length].to_vec())
}

async fn serve(api: Api, mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let Some(body) = read_body(&mut stream).await else {
        return;
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let reply = {
        let mut state = state.lock().unwrap();
        state.bodies.push(body.clone());
        match check(api, &body) {
            Ok(()) => state
                .replies
                .pop_front()
                .unwrap_or_else(|| error_reply(api, 500, "no scripted reply")),
            Err(reason) => {
                state.refused.push(reason.clone());
                error_reply(api, 400, &reason)
            }
        }
    };
    let mut payload = String::new();
    for chunk in &reply.chunks {
        if let Chunk::Data(data) = chunk {
            payload.push_str(data);
        }
    }
    let mut head = format!("HTTP/1.1 {} Status\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    ));
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(payload.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn error_reply(api: Api, status: u16, message: &str) -> Reply {
    let body = match api {
        Api::Anthropic => json!({"type": "error",
            "error": {"type": "invalid_request_error", "message": message}}),
        Api::Chat | Api::Responses => json!({"error": {"message": message,
            "type": "invalid_request_error", "param": null, "code": status.to_string()}}),
    };
    Reply::json(status, &body.to_string())
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Arguments as LiteLLM reads them: a string that must parse as a JSON object.
fn arguments_ok(name: &Value, arguments: &Value) -> Result<(), String> {
    let parsed = arguments
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    match parsed {
        Some(Value::Object(_)) => Ok(()),
        _ => Err(format!(
            "litellm.BadRequestError: Failed to parse tool call arguments for tool {name}: \
             {arguments}"
        )),
    }
}

/// What strict mode demands of a schema: every property required, no others allowed.
fn strict_schema_ok(tool: &Value) -> Result<(), String> {
    let schema = &tool["parameters"];
    let required: Vec<&str> = array(schema, "required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten();
    for (key, _) in properties {
        if !required.contains(&key.as_str()) {
            return Err(format!(
                "Invalid schema for function {}: In context=(), 'required' is required to be \
                 supplied and to be an array including every key in properties. Missing '{key}'.",
                tool["name"]
            ));
        }
    }
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(format!(
            "Invalid schema for function {}: In context=(), 'additionalProperties' is required \
             to be supplied and to be false.",
            tool["name"]
        ));
    }
    Ok(())
}

fn check(api: Api, body: &Value) -> Result<(), String> {
    match api {
        Api::Anthropic => {
            for message in array(body, "messages") {
                for block in array(message, "content") {
                    if block["type"] == "tool_use" && !block["input"].is_object() {
                        return Err(format!(
                            "tool_use.input: Input should be an object: {block}"
                        ));
                    }
                }
            }
        }
        Api::Chat => {
            for message in array(body, "messages") {
                for call in array(message, "tool_calls") {
                    arguments_ok(&call["function"]["name"], &call["function"]["arguments"])?;
                }
            }
        }
        Api::Responses => {
            for tool in array(body, "tools") {
                if tool["type"] == "function" && tool.get("strict") != Some(&Value::Bool(false)) {
                    strict_schema_ok(tool)?;
                }
            }
            for item in array(body, "input") {
                if item["type"] == "function_call" {
                    arguments_ok(&item["name"], &item["arguments"])?;
                }
            }
        }
    }
    Ok(())
}
