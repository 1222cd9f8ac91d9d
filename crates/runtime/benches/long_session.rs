//! What context management saves in a long session: 300 turns that each read a 30 KB file, on
//! the OpenAI chat wire against the mock provider with a 200 000-token window and limit. It
//! runs the session twice, with the default elision and with compaction alone (`elide_at:
//! never`; the mock writes each summary), and prints, from the requests the mock got, the input
//! tokens billed at the full price and those a prefix cache serves (a request's leading
//! messages identical to the previous request's count as cached), next to what the same
//! session would need without either (it would fail at the window long before the end).
//! Tokens are one per four bytes of each request's JSON body, as the mock counts them.
//!
//! Run with `cargo bench -p golem-runtime --bench long_session` (`--profile dev` builds
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
use golem_testkit::openai;
use golem_testkit::program::{append_config, mock_program};
use serde_json::{Value, json};

const TURNS: usize = 300;
const WINDOW: u64 = 200_000;
const RESULT_BYTES: usize = 30_000;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let elided = runtime.block_on(session(""));
    report(&elided);
    let compacted = runtime.block_on(session("context: {elide_at: never}\n"));
    compaction(&compacted);
}

/// A text only the runtime's summary requests hold.
const SUMMARY_ASKED: &str = "[The conversation above is about to be replaced";

/// Runs the session with `config` added to the program config; returns the bodies of the
/// requests the mock got.
async fn session(config: &str) -> Vec<Value> {
    let mut replies: Vec<Reply> = (0..TURNS)
        .map(|n| {
            openai::tool_calls(&[(
                &format!("call_{n}"),
                "read_file",
                json!({"path": "/out/big.txt"}),
            )])
        })
        .collect();
    replies.push(openai::text("Read it all."));
    let server = MockServer::start(replies).await;
    server.set_context_limit(WINDOW);
    server.answer_when(
        SUMMARY_ASKED,
        openai::text("SUMMARY: big.txt is 500 lines of x; the user wants it read again."),
    );
    let (dir, worker) = mock_program(&server, "");
    append_config(
        dir.path(),
        &format!("context_windows:\n  \"mock:*\": {WINDOW}\n{config}"),
    );
    let line = format!("{}\n", "x".repeat(59));
    std::fs::write(
        dir.path().join("out/big.txt"),
        line.repeat(RESULT_BYTES / 60),
    )
    .unwrap();
    let host = SessionHost::open(HostOptions {
        keeps_history: true,
        max_iterations: Some(u32::try_from(TURNS).unwrap() + 1),
        ..HostOptions::new(HostWorker::File(worker))
    })
    .unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "read big.txt again and again".into(),
    });
    loop {
        let event = tokio::time::timeout(Duration::from_secs(300), ui.recv())
            .await
            .expect("the turn in time")
            .expect("the session open");
        if let DisplayEvent::TurnEnded { status, error, .. } = event {
            assert_eq!(status, TurnStatus::Completed, "{error:?}");
            break;
        }
    }
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
    server.requests().into_iter().map(|r| r.body).collect()
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

fn messages(body: &Value) -> &[Value] {
    body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Input tokens (full price, cached) of requests, a request's leading messages that equal the
/// previous request's counting as cached.
fn billed(bodies: &[Value]) -> (u64, u64) {
    let mut full = 0;
    let mut cached = 0;
    let mut previous: &[Value] = &[];
    for body in bodies {
        let now = messages(body);
        let same = now.iter().zip(previous).take_while(|(a, b)| a == b).count();
        let from_cache: usize = now[..same].iter().map(|m| m.to_string().len()).sum();
        let size = tokens(body.to_string().len());
        cached += tokens(from_cache).min(size);
        full += size - tokens(from_cache).min(size);
        previous = now;
    }
    (full, cached)
}

fn report(bodies: &[Value]) {
    let sizes: Vec<u64> = bodies.iter().map(|b| tokens(b.to_string().len())).collect();
    let (full, cached) = billed(bodies);
    // Without elision, each request is the same with every stub replaced by the whole result,
    // and extends the previous one exactly: only what was added is billed at the full price.
    let unelided: Vec<u64> = bodies
        .iter()
        .zip(&sizes)
        .map(|(body, size)| {
            let stubs: u64 = openai::tool_results(body)
                .iter()
                .filter(|r| r.content.ends_with("elided; call it again to see it]"))
                .map(|r| tokens(RESULT_BYTES).saturating_sub(tokens(r.content.len())))
                .sum();
            size + stubs
        })
        .collect();
    let needed_cached: u64 = unelided.iter().rev().skip(1).sum();
    let needed_full: u64 = unelided.iter().sum::<u64>() - needed_cached;
    let overflow = unelided.iter().position(|size| *size > WINDOW);
    println!("{TURNS} turns, a {RESULT_BYTES}-byte result each, {WINDOW}-token window");
    println!(
        "  with elision:    {} requests, largest {} tokens; input {full} at full price, {cached} from the cache",
        bodies.len(),
        sizes.iter().max().unwrap()
    );
    println!(
        "  without elision: largest {} tokens; input {needed_full} at full price, {needed_cached} from the cache; request {} would pass the window",
        unelided.iter().max().unwrap(),
        overflow.map_or_else(|| "none".to_owned(), |n| (n + 1).to_string())
    );
}

/// The compaction-only row: its requests, summaries included, billed like the others.
fn compaction(bodies: &[Value]) {
    let sizes: Vec<u64> = bodies.iter().map(|b| tokens(b.to_string().len())).collect();
    let summaries = bodies
        .iter()
        .filter(|b| b.to_string().contains(SUMMARY_ASKED))
        .count();
    let (full, cached) = billed(bodies);
    println!(
        "  with compaction: {} requests ({summaries} summaries), largest {} tokens; input {full} at full price, {cached} from the cache",
        bodies.len(),
        sizes.iter().max().unwrap()
    );
}
