//! Context management in one long agent turn against a small window: one input, then 60
//! `read_file` calls, on each wire (OpenAI Chat Completions, OpenAI Responses, Anthropic
//! Messages) against the mock provider, whose limit is the window golem-forge is told. Three
//! cases: 4 KB results under an 8 000-token window (a local model's usual size), the same
//! under 32 000, and 30 KB results under 32 000. The mock writes each summary.
//!
//! For each it prints whether the turn completes (or the step it fails at: the tool results
//! the turn got before it failed, plus one), the summary calls of the turn, the largest
//! request, and the input tokens billed at the full price: a request's system prompt and
//! tools, and its leading messages, that equal the previous request's are counted as read
//! from a prefix cache (`cache_control` marks left out of the comparison). Tokens are one per
//! four bytes of a request's JSON body, as the mock counts them.
//!
//! Run with `cargo bench -p golem-runtime --bench small_window` (`--profile dev` builds
//! faster).

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "benchmark setup: a failure is a bug in the benchmark"
)]

use std::time::Duration;

use golem_protocol::{ActionEvent, DisplayEvent, TurnStatus};
use golem_runtime::host::{HostOptions, HostWorker, SessionHost};
use golem_testkit::mock::{MockServer, Reply};
use golem_testkit::program::mock_program;
use golem_testkit::{anthropic, openai, responses};
use serde_json::{Value, json};

/// Tool calls in the turn.
const STEPS: usize = 60;

/// A text only the runtime's summary requests hold.
const SUMMARY_ASKED: &str = "[The conversation above is about to be replaced";

/// What the mock answers a summary request with.
const SUMMARY: &str = "SUMMARY: big.txt is lines of x; the user wants it read again and again.";

#[derive(Clone, Copy)]
enum Wire {
    Chat,
    Responses,
    Anthropic,
}

impl Wire {
    const ALL: [Wire; 3] = [Wire::Chat, Wire::Responses, Wire::Anthropic];

    fn name(self) -> &'static str {
        match self {
            Wire::Chat => "openai chat",
            Wire::Responses => "openai responses",
            Wire::Anthropic => "anthropic",
        }
    }

    fn tool_call(self, id: &str) -> Reply {
        let call = [(id, "read_file", json!({"path": "/out/big.txt"}))];
        match self {
            Wire::Chat => openai::tool_calls(&call),
            Wire::Responses => responses::tool_calls(&call),
            Wire::Anthropic => anthropic::tool_calls(&call),
        }
    }

    fn text(self, text: &str) -> Reply {
        match self {
            Wire::Chat => openai::text(text),
            Wire::Responses => responses::text(text),
            Wire::Anthropic => anthropic::text(text),
        }
    }

    /// The `mock` provider's definition (the Anthropic wire needs a key from the
    /// environment: `PATH` is always set, and the mock checks none).
    fn provider(self, server: &MockServer) -> String {
        let base = format!("  mock:\n    base_url: {}/v1\n", server.base_url);
        match self {
            Wire::Chat => base,
            Wire::Responses => format!("{base}    wire: responses\n"),
            Wire::Anthropic => format!("{base}    wire: anthropic\n    api_key_env: PATH\n"),
        }
    }
}

/// One case: results of `bytes` under a `window`.
#[derive(Clone, Copy)]
struct Case {
    window: u64,
    bytes: usize,
}

const CASES: [Case; 3] = [
    Case {
        window: 8_000,
        bytes: 4 * 1024,
    },
    Case {
        window: 32_000,
        bytes: 4 * 1024,
    },
    Case {
        window: 32_000,
        bytes: 30 * 1024,
    },
];

/// What one turn did.
struct Measured {
    /// `None` when it completed, else the step it failed at and why.
    failed: Option<(usize, String)>,
    summaries: usize,
    largest: u64,
    full_price: u64,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "one turn of {STEPS} read_file calls; tokens are a request's JSON bytes / 4\n\
         | wire | window | result | completes | summary calls | largest request | full-price input |\n\
         | --- | --- | --- | --- | --- | --- | --- |"
    );
    for case in CASES {
        for wire in Wire::ALL {
            let measured = runtime.block_on(turn(wire, case));
            let completes = match &measured.failed {
                None => "yes".to_owned(),
                Some((step, _)) => format!("fails at step {step}"),
            };
            println!(
                "| {} | {} | {} KB | {completes} | {} | {} | {} |",
                wire.name(),
                case.window,
                case.bytes / 1024,
                measured.summaries,
                measured.largest,
                measured.full_price
            );
            if let Some((_, error)) = &measured.failed {
                let error: String = error.chars().take(300).collect();
                println!("|   | error: {error} |");
            }
        }
    }
}

/// Runs the turn of `case` on `wire`.
async fn turn(wire: Wire, case: Case) -> Measured {
    let mut replies: Vec<Reply> = (0..STEPS)
        .map(|n| wire.tool_call(&format!("call_{n}")))
        .collect();
    replies.push(wire.text("Read it all."));
    let server = MockServer::start(replies).await;
    server.set_context_limit(case.window);
    server.answer_when(SUMMARY_ASKED, wire.text(SUMMARY));
    let (dir, worker) = mock_program(&server, "");
    std::fs::write(
        dir.path().join("golem-forge.config.yaml"),
        format!(
            "providers:\n{}context_windows:\n  \"mock:*\": {}\n",
            wire.provider(&server),
            case.window
        ),
    )
    .unwrap();
    let line = format!("{}\n", "x".repeat(59));
    std::fs::write(dir.path().join("out/big.txt"), line.repeat(case.bytes / 60)).unwrap();
    let host = SessionHost::open(HostOptions {
        keeps_history: true,
        max_iterations: Some(u32::try_from(STEPS).unwrap() + 1),
        ..HostOptions::new(HostWorker::File(worker))
    })
    .unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "read big.txt again and again".into(),
    });
    let mut results = 0;
    let failed = loop {
        let event = tokio::time::timeout(Duration::from_secs(300), ui.recv())
            .await
            .expect("the turn in time")
            .expect("the session open");
        if matches!(event, DisplayEvent::ToolResult { .. }) {
            results += 1;
        }
        if let DisplayEvent::TurnEnded { status, error, .. } = event {
            break (status != TurnStatus::Completed)
                .then(|| error.unwrap_or_else(|| format!("{status:?}")));
        }
    };
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    let summaries = bodies
        .iter()
        .filter(|b| b.to_string().contains(SUMMARY_ASKED))
        .count();
    Measured {
        failed: failed.map(|error| (results + 1, error)),
        summaries,
        largest: bodies
            .iter()
            .map(|b| tokens(b.to_string().len()))
            .max()
            .unwrap_or_default(),
        full_price: full_price(&bodies),
    }
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// `body` without its `cache_control` marks, which move from request to request.
fn unmarked(body: &Value) -> Value {
    match body {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), unmarked(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

/// A request's messages (`input` on the Responses wire) and the rest of it.
fn split(body: &Value) -> (Vec<Value>, Value) {
    let mut rest = unmarked(body);
    let key = if rest.get("input").is_some() {
        "input"
    } else {
        "messages"
    };
    let messages = match rest.as_object_mut().and_then(|map| map.remove(key)) {
        Some(Value::Array(items)) => items,
        Some(_) | None => Vec::new(),
    };
    (messages, rest)
}

/// Input tokens at the full price: all of each request but what a prefix cache would serve
/// (the rest of the request and its leading messages, when equal to the previous request's).
fn full_price(bodies: &[Value]) -> u64 {
    let mut previous: Option<(Vec<Value>, Value)> = None;
    let mut full = 0;
    for body in bodies {
        let size = tokens(body.to_string().len());
        let (messages, rest) = split(body);
        let cached = match &previous {
            Some((before, before_rest)) if *before_rest == rest => {
                let same: usize = messages
                    .iter()
                    .zip(before)
                    .take_while(|(a, b)| a == b)
                    .map(|(m, _)| m.to_string().len())
                    .sum();
                tokens(rest.to_string().len() + same)
            }
            Some(_) | None => 0,
        };
        full += size.saturating_sub(cached);
        previous = Some((messages, rest));
    }
    full
}
