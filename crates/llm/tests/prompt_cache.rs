//! Prompt caching over a 20-turn agent session: the Anthropic client against a server that
//! keeps a prompt cache the way the Messages API does, and bills each request's input as
//! cache reads, cache writes and uncached input.
//!
//! The server's accounting (after Anthropic's prompt-caching rules): the prompt is the
//! sequence of blocks `tools`, then `system`, then each message's content blocks (a block
//! is the same only with the same message position, role and content; `cache_control` is not
//! part of it). A block marked with `cache_control` is a breakpoint; more than
//! [`MAX_BREAKPOINTS`] are refused with HTTP 400. Each breakpoint looks for the longest prefix
//! written by an earlier request that ends at it or at one of the [`LOOKBACK`] blocks before it:
//! that prefix is read (`cache_read_input_tokens`); the prompt from there to the last
//! breakpoint is written (`cache_creation_input_tokens`) when that prefix is at least
//! [`MIN_CACHEABLE`] tokens long; the rest is `input_tokens`. Every breakpoint's prefix of at
//! least [`MIN_CACHEABLE`] tokens is then in the cache. A token is 4 bytes of a block's JSON.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use golem_llm::{Message, Model, ModelRequest, ModelToolCall, ToolResultMessage};
use golem_protocol::{TokenUsage, ToolDefinition};
use golem_testkit::mock::{Chunk, sse};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::anthropic::{message_end, model_at, text_block, tool_block};
use crate::documented;
use crate::strict_server::read_body;

/// The most breakpoints the API accepts in one request.
const MAX_BREAKPOINTS: usize = 4;
/// How many blocks before a breakpoint the API looks for a cached prefix.
const LOOKBACK: usize = 20;
/// The shortest prefix the API caches (tokens; Claude Sonnet's minimum).
const MIN_CACHEABLE: u64 = 1024;
/// Turns in the session.
const TURNS: usize = 20;

/// How one request was billed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Billed {
    input: u64,
    read: u64,
    write: u64,
}

impl Billed {
    fn total(self) -> u64 {
        self.input + self.read + self.write
    }
}

#[derive(Default)]
struct CacheState {
    /// The prefixes in the cache, as the JSON text of their blocks.
    cached: HashSet<String>,
    /// The content of each reply (after `message_start`), in order.
    replies: VecDeque<Vec<Chunk>>,
    bodies: Vec<Value>,
    billed: Vec<Billed>,
    refused: Vec<String>,
}

/// A Messages API server with a prompt cache; dropping it stops it.
struct CacheServer {
    base_url: String,
    state: Arc<Mutex<CacheState>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CacheServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CacheServer {
    async fn start(replies: Vec<Vec<Chunk>>) -> Self {
        let state = Arc::new(Mutex::new(CacheState {
            replies: replies.into(),
            ..CacheState::default()
        }));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let served = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, served.clone()));
            }
        });
        Self {
            base_url,
            state,
            task,
        }
    }
}

/// The prompt's blocks, each as JSON text without `cache_control`, and whether it is marked.
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut push = |kind: Value, block: &Value| {
        let mut block = block.clone();
        let marked = block
            .as_object_mut()
            .and_then(|b| b.remove("cache_control"))
            .is_some();
        let mut key = kind;
        key["block"] = block;
        out.push((key.to_string(), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(json!({"in": "tools"}), tool);
    }
    match &body["system"] {
        Value::String(text) => push(
            json!({"in": "system"}),
            &json!({"type": "text", "text": text}),
        ),
        Value::Array(system) => system.iter().for_each(|b| push(json!({"in": "system"}), b)),
        _ => {}
    }
    for (n, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let kind = json!({"in": "messages", "message": n, "role": message["role"]});
        match &message["content"] {
            Value::String(text) => push(kind, &json!({"type": "text", "text": text})),
            Value::Array(content) => content.iter().for_each(|b| push(kind.clone(), b)),
            _ => {}
        }
    }
    out
}

/// Bills one request against the cache and adds its breakpoints' prefixes to it.
fn bill(cached: &mut HashSet<String>, body: &Value) -> Result<Billed, String> {
    let blocks = blocks(body);
    let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
    if marks.len() > MAX_BREAKPOINTS {
        return Err(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {}.",
            marks.len()
        ));
    }
    // prefixes[i]: the text of blocks 0..i; tokens[i]: its tokens.
    let mut prefixes = vec![String::new()];
    for (text, _) in &blocks {
        let mut next = prefixes.last().unwrap().clone();
        next.push_str(text);
        next.push('\n');
        prefixes.push(next);
    }
    let tokens = |end: usize| prefixes[end].len() as u64 / 4;
    let total = tokens(blocks.len());
    // The longest cached prefix ending at a breakpoint or up to LOOKBACK blocks before it.
    let mut hit = 0;
    for &mark in &marks {
        let end = mark + 1;
        let found = (end.saturating_sub(LOOKBACK)..=end)
            .rev()
            .find(|&e| e > 0 && cached.contains(&prefixes[e]));
        hit = hit.max(found.unwrap_or(0));
    }
    let read = tokens(hit);
    let write = match marks.last() {
        Some(&last) if last + 1 > hit && tokens(last + 1) >= MIN_CACHEABLE => {
            tokens(last + 1) - read
        }
        _ => 0,
    };
    for &mark in &marks {
        if tokens(mark + 1) >= MIN_CACHEABLE {
            cached.insert(prefixes[mark + 1].clone());
        }
    }
    Ok(Billed {
        input: total - read - write,
        read,
        write,
    })
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<CacheState>>) {
    let Some(body) = read_body(&mut stream).await else {
        return;
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (status, content_type, payload) = {
        let mut state = state.lock().unwrap();
        state.bodies.push(body.clone());
        let billed = bill(&mut state.cached, &body);
        match billed {
            Ok(billed) => {
                state.billed.push(billed);
                let start = json!({"type": "message_start", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": billed.input,
                              "cache_creation_input_tokens": billed.write,
                              "cache_read_input_tokens": billed.read, "output_tokens": 1}}});
                let mut chunks = vec![sse(Some("message_start"), &start.to_string())];
                chunks.extend(state.replies.pop_front().unwrap_or_default());
                let mut payload = String::new();
                for chunk in chunks {
                    if let Chunk::Data(data) = chunk {
                        payload.push_str(&data);
                    }
                }
                (200, "text/event-stream", payload)
            }
            Err(reason) => {
                state.refused.push(reason.clone());
                let error = json!({"type": "error",
                    "error": {"type": "invalid_request_error", "message": reason}});
                (400, "application/json", error.to_string())
            }
        }
    };
    let head = format!(
        "HTTP/1.1 {status} Status\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        payload.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(payload.as_bytes()).await;
    let _ = stream.shutdown().await;
}

// ---- the session ----

/// Worker instructions of a realistic length (about 8 KB).
fn instructions() -> String {
    let mut text = String::from("You are a careful code reviewer working in a repository.\n");
    for n in 1..=60 {
        text.push_str(&format!(
            "{n}. Read the files you are asked about before answering, quote the lines you \
             mean, and say what you did not check.\n"
        ));
    }
    text
}

/// Six tools with descriptions and schemas (about 6 KB in all).
fn tools() -> Vec<ToolDefinition> {
    ["read_file", "write_file", "edit_file", "list_files", "search", "run_code"]
        .iter()
        .map(|name| ToolDefinition {
            name: (*name).into(),
            description: format!(
                "{name}: works on the files of the zones the worker may use. {}",
                "Paths are virtual (/zone/path); results are text, errors say why. ".repeat(8)
            ),
            input_schema: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "A path inside a zone, e.g. /src/lib.rs"},
                "pattern": {"type": "string", "description": "What to look for (a regular expression)"},
                "max_lines": {"type": "integer", "description": "At most this many lines"}},
                "required": ["path"]}),
        })
        .collect()
}

/// What `read_file` answers on turn `turn`: a 20-line excerpt (about 800 bytes).
fn file_excerpt(turn: usize) -> String {
    (1..=20)
        .map(|line| format!("{line:>4} | let value_{turn}_{line} = compute({line}); // step\n"))
        .collect()
}

/// The model's replies: a `read_file` call on turns 1..TURNS-1, the answer on the last.
fn replies() -> Vec<Vec<Chunk>> {
    let mut replies = Vec::new();
    for turn in 1..=TURNS {
        let mut chunks = Vec::new();
        if turn < TURNS {
            let arguments = format!(r#"{{"path": "/src/file_{turn}.rs"}}"#);
            chunks.extend(tool_block(
                0,
                &format!("toolu_{turn}"),
                "read_file",
                &[&arguments],
            ));
            chunks.extend(message_end("tool_use", 20));
        } else {
            chunks.extend(text_block(0, &["The code looks fine."]));
            chunks.extend(message_end("end_turn", 8));
        }
        replies.push(chunks);
    }
    replies
}

/// Runs a session of `turns` requests and returns each turn's usage as the client reported it.
async fn run_session(server: &CacheServer, turns: usize) -> Vec<TokenUsage> {
    let model = model_at(
        &server.base_url,
        crate::anthropic::settings(std::time::Duration::from_secs(10)),
    );
    let mut request = ModelRequest::new(
        instructions(),
        vec![Message::user("Review src/: read every file, then answer.")],
        tools(),
    )
    .with_cache_key(Some("session-1".into()));
    let mut usages = Vec::new();
    for turn in 1..=turns {
        let response = model
            .complete(&request, CancellationToken::new())
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "turn {turn}: {e}; refused: {:?}",
                    server.state.lock().unwrap().refused
                )
            });
        usages.push(response.usage);
        let results: Vec<ToolResultMessage> = response
            .tool_calls
            .iter()
            .map(|call: &ModelToolCall| ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: file_excerpt(turn),
                is_error: false,
            })
            .collect();
        request.messages.push(Message::Assistant {
            text: response.text,
            tool_calls: response.tool_calls,
        });
        if results.is_empty() {
            break;
        }
        request.messages.push(Message::Tool { results });
    }
    usages
}

#[tokio::test]
async fn twenty_turns_read_the_previous_prefix_from_the_cache() {
    let server = CacheServer::start(replies()).await;
    let usages = run_session(&server, TURNS).await;
    let (bodies, billed) = {
        let state = server.state.lock().unwrap();
        assert_eq!(state.refused, Vec::<String>::new());
        (state.bodies.clone(), state.billed.clone())
    };
    assert_eq!(bodies.len(), TURNS);
    assert_eq!(usages.len(), TURNS);

    for (n, body) in bodies.iter().enumerate() {
        let problems = documented::anthropic(body);
        assert!(problems.is_empty(), "request {}: {problems:#?}", n + 1);
        let marks = blocks(body).iter().filter(|(_, marked)| *marked).count();
        assert!(
            (1..=MAX_BREAKPOINTS).contains(&marks),
            "request {}: {marks} breakpoints",
            n + 1
        );
    }

    println!("turn   input   cache read  cache write  read share");
    for (n, (usage, billed)) in usages.iter().zip(&billed).enumerate() {
        let turn = n + 1;
        // The client reports what the server billed.
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens
            ),
            (billed.input, billed.read, billed.write),
            "turn {turn}"
        );
        let share = billed.read as f64 / billed.total() as f64;
        println!(
            "{turn:>4} {:>7} {:>12} {:>12} {:>10.1} %",
            billed.input,
            billed.read,
            billed.write,
            share * 100.0
        );
        if turn == 1 {
            assert_eq!(billed.read, 0);
            assert!(
                billed.write >= MIN_CACHEABLE,
                "turn 1 writes the prompt: {billed:?}"
            );
        } else {
            assert!(
                share >= 0.9,
                "turn {turn}: only {:.1} % read from the cache",
                share * 100.0
            );
        }
    }

    // Input billed at the full price or more (uncached input and cache writes), with the
    // breakpoints and, for the same prompts, without any.
    let with_caching: u64 = billed.iter().map(|b| b.input + b.write).sum();
    let without_caching: u64 = billed.iter().map(|b| b.total()).sum();
    let read: u64 = billed.iter().map(|b| b.read).sum();
    // In units of the base input price: reads at 0.1, 5-minute writes at 1.25.
    let priced = billed
        .iter()
        .map(|b| b.input as f64 + 1.25 * b.write as f64 + 0.1 * b.read as f64)
        .sum::<f64>();
    println!(
        "{TURNS} turns: input tokens at full price without caching {without_caching}, with \
         caching {with_caching} (+ {read} cache reads at a tenth); priced in base-input tokens: \
         {priced:.0} ({:.1} % of uncached)",
        100.0 * priced / without_caching as f64
    );
    assert!(
        with_caching * 5 < without_caching,
        "caching saves less than 80 % of full-price input: {with_caching} of {without_caching}"
    );
    assert!(priced < 0.25 * without_caching as f64);
}

#[tokio::test]
async fn the_server_refuses_more_than_four_breakpoints_and_the_cache_needs_an_identical_prefix() {
    let mut cached = HashSet::new();
    let long = "x".repeat(8000);
    let marked = json!({"type": "ephemeral"});
    let mut body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": long, "cache_control": marked}]}]});
    let first = bill(&mut cached, &body).unwrap();
    assert_eq!((first.read, first.input), (0, 0));
    assert!(first.write >= 2000);
    // The same prefix without its mark, and a new marked block: read, then written.
    body["messages"][0]["content"][0]
        .as_object_mut()
        .unwrap()
        .remove("cache_control");
    body["messages"][0]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "text", "text": "more", "cache_control": marked}));
    let second = bill(&mut cached, &body).unwrap();
    assert_eq!(second.read, first.write);
    assert!(second.write > 0 && second.input == 0, "{second:?}");
    // A changed first byte: nothing read.
    body["messages"][0]["content"][0]["text"] = json!(format!("y{long}"));
    assert_eq!(bill(&mut cached, &body).unwrap().read, 0);
    let five: Vec<Value> = (0..5)
        .map(|n| json!({"type": "text", "text": format!("{n}"), "cache_control": marked}))
        .collect();
    let body = json!({"model": "m", "max_tokens": 10,
                      "messages": [{"role": "user", "content": five}]});
    assert!(bill(&mut cached, &body).unwrap_err().contains("Found 5"));
}

#[tokio::test]
async fn a_turn_of_many_parallel_calls_still_reads_the_previous_request() {
    // Turn 2 calls twelve tools at once: 24 new blocks, more than a breakpoint on the newest
    // block looks back over; the breakpoint where turn 2's request ended is read.
    let calls: Vec<Vec<Chunk>> = (0..12)
        .map(|n| {
            tool_block(
                n,
                &format!("toolu_p{n}"),
                "read_file",
                &[r#"{"path": "/a"}"#],
            )
        })
        .collect();
    let mut parallel: Vec<Chunk> = calls.into_iter().flatten().collect();
    parallel.extend(message_end("tool_use", 90));
    let mut answer = text_block(0, &["Done."]);
    answer.extend(message_end("end_turn", 2));
    let mut replies = replies();
    replies.truncate(1);
    replies.extend([parallel, answer]);
    let server = CacheServer::start(replies).await;
    run_session(&server, 3).await;
    let state = server.state.lock().unwrap();
    assert_eq!(state.refused, Vec::<String>::new());
    let third = state.billed[2];
    let second_prompt = state.billed[1].total();
    assert_eq!(third.read, second_prompt, "{:?}", state.billed);
    assert!(blocks(&state.bodies[2]).len() - blocks(&state.bodies[1]).len() > LOOKBACK);
}
