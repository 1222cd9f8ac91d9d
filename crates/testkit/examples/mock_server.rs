//! A mock model server for measuring `golem-forge run` by hand: it answers every request with
//! the same scripted turn, in the Anthropic or the OpenAI wire format, until killed.
//!
//! ```text
//! cargo run --release -p golem-testkit --example mock_server -- anthropic text "Hello."
//! cargo run --release -p golem-testkit --example mock_server -- openai tool file_exists '{"path":"/out/x"}'
//! ```
//! It prints the environment to point the binary at it (`ANTHROPIC_BASE_URL=…` or
//! `OPENAI_BASE_URL=…/v1`), one variable per line, then serves.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a developer tool: a failure ends it with the message"
)]

use golem_testkit::Wire;
use golem_testkit::mock::MockServer;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mock_server anthropic|openai text TEXT | tool NAME ARGS_JSON";
    let wire = args
        .first()
        .and_then(|name| Wire::named(name))
        .unwrap_or_else(|| panic!("{usage}"));
    let reply = match (args.get(1).map(String::as_str), args.get(2), args.get(3)) {
        (Some("text"), Some(text), None) => wire.text(text),
        (Some("tool"), Some(name), Some(json)) => {
            let value = serde_json::from_str(json).expect("ARGS_JSON is JSON");
            wire.tool_calls(&[("call_1", name, value)])
        }
        _ => panic!("{usage}"),
    };
    let server = MockServer::start_blocking(Vec::new());
    server.set_fallback(reply);
    let [_, (base_url_env, base_url)] = wire.provider_env(&server.base_url);
    println!("{base_url_env}={base_url}");
    loop {
        std::thread::park();
    }
}
