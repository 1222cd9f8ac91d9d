//! Throughput of reading model streams: SSE framing (eventsource-stream), provider event
//! decoding and tool-call assembly, on large synthetic recordings shaped like the real APIs'
//! streams (long text, many tool calls with arguments split into many fragments).
//!
//! Run with `cargo bench -p golem-llm --bench stream_decode`; divide the event count printed
//! at start by the median time for events per second.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "benchmark setup: a failure is a bug in the benchmark"
)]

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use golem_llm::ResponseAssembler;
use golem_llm::providers::anthropic::AnthropicStreamDecoder;
use golem_llm::providers::openai_chat::ChatStreamDecoder;

const TEXT_DELTAS: usize = 5_000;
const TOOL_CALLS: usize = 50;
const FRAGMENTS_PER_CALL: usize = 40;

fn main() {
    let (anthropic, a_events) = anthropic_recording();
    let (openai, o_events) = openai_recording();
    println!(
        "anthropic recording: {a_events} SSE events, {} KiB; openai recording: {o_events} SSE events, {} KiB",
        anthropic.len() / 1024,
        openai.len() / 1024
    );
    divan::main();
}

fn sse(out: &mut String, event: Option<&str>, data: &str) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(data);
    out.push_str("\n\n");
}

/// An Anthropic Messages stream: a long text block, then tool_use blocks with fragmented JSON.
fn anthropic_recording() -> (String, usize) {
    let mut s = String::new();
    let mut n = 0;
    let mut push = |s: &mut String, e: &str, d: String| {
        sse(s, Some(e), &d);
        n += 1;
    };
    push(&mut s, "message_start", r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":2500,"output_tokens":1}}}"#.into());
    push(
        &mut s,
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    for i in 0..TEXT_DELTAS {
        push(
            &mut s,
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"word{i} "}}}}"#
            ),
        );
    }
    push(
        &mut s,
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    );
    for call in 1..=TOOL_CALLS {
        push(
            &mut s,
            "content_block_start",
            format!(
                r#"{{"type":"content_block_start","index":{call},"content_block":{{"type":"tool_use","id":"toolu_{call}","name":"write_file","input":{{}}}}}}"#
            ),
        );
        push(
            &mut s,
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":{call},"delta":{{"type":"input_json_delta","partial_json":"{{\"path\": \"/out/f{call}.txt\", \"content\": \""}}}}"#
            ),
        );
        for f in 0..FRAGMENTS_PER_CALL {
            push(
                &mut s,
                "content_block_delta",
                format!(
                    r#"{{"type":"content_block_delta","index":{call},"delta":{{"type":"input_json_delta","partial_json":"line {f} of the file\\n"}}}}"#
                ),
            );
        }
        push(
            &mut s,
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":{call},"delta":{{"type":"input_json_delta","partial_json":"\"}}"}}}}"#
            ),
        );
        push(
            &mut s,
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{call}}}"#),
        );
    }
    push(&mut s, "message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9000}}"#.into());
    push(&mut s, "message_stop", r#"{"type":"message_stop"}"#.into());
    (s, n)
}

/// An OpenAI Chat Completions stream with the same content.
fn openai_recording() -> (String, usize) {
    let mut s = String::new();
    let mut n = 0;
    let chunk = |delta: String| {
        format!(
            r#"{{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{{"index":0,"delta":{delta},"finish_reason":null}}]}}"#
        )
    };
    let mut push = |s: &mut String, d: String| {
        sse(s, None, &d);
        n += 1;
    };
    push(&mut s, chunk(r#"{"role":"assistant","content":""}"#.into()));
    for i in 0..TEXT_DELTAS {
        push(&mut s, chunk(format!(r#"{{"content":"word{i} "}}"#)));
    }
    for call in 0..TOOL_CALLS {
        push(
            &mut s,
            chunk(format!(
                r#"{{"tool_calls":[{{"index":{call},"id":"call_{call}","type":"function","function":{{"name":"write_file","arguments":""}}}}]}}"#
            )),
        );
        push(
            &mut s,
            chunk(format!(
                r#"{{"tool_calls":[{{"index":{call},"function":{{"arguments":"{{\"path\": \"/out/f{call}.txt\", \"content\": \""}}}}]}}"#
            )),
        );
        for f in 0..FRAGMENTS_PER_CALL {
            push(
                &mut s,
                chunk(format!(
                    r#"{{"tool_calls":[{{"index":{call},"function":{{"arguments":"line {f} of the file\\n"}}}}]}}"#
                )),
            );
        }
        push(
            &mut s,
            chunk(format!(
                r#"{{"tool_calls":[{{"index":{call},"function":{{"arguments":"\"}}"}}}}]}}"#
            )),
        );
    }
    push(&mut s, r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into());
    push(&mut s, r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[],"usage":{"prompt_tokens":2500,"completion_tokens":9000,"total_tokens":11500}}"#.into());
    push(&mut s, "[DONE]".into());
    (s, n)
}

/// Splits a recording into network-sized chunks (about 1.4 KB, ignoring frame boundaries).
fn chunks(text: &str) -> Vec<Bytes> {
    text.as_bytes()
        .chunks(1400)
        .map(Bytes::copy_from_slice)
        .collect()
}

/// The whole read path: bytes → SSE events → provider events → assembled response.
fn decode<D>(
    body: &[Bytes],
    mut decoder: D,
    feed: impl Fn(&mut D, &str, &str) -> Vec<golem_llm::StreamEvent>,
) -> golem_llm::ModelResponse {
    let stream = futures::stream::iter(body.iter().cloned().map(Ok::<_, std::convert::Infallible>));
    let mut events = stream.eventsource();
    let mut assembler = ResponseAssembler::new();
    futures::executor::block_on(async {
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            for e in feed(&mut decoder, &event.event, &event.data) {
                assembler.push(&e);
            }
        }
    });
    assembler.finish()
}

#[divan::bench]
fn anthropic_read_path(bencher: divan::Bencher) {
    let body = chunks(&anthropic_recording().0);
    bencher.bench_local(|| {
        let response = decode(
            &body,
            AnthropicStreamDecoder::new("anthropic"),
            |d, e, data| d.feed(e, data).unwrap(),
        );
        assert_eq!(response.tool_calls.len(), TOOL_CALLS);
        response
    });
}

#[divan::bench]
fn openai_chat_read_path(bencher: divan::Bencher) {
    let body = chunks(&openai_recording().0);
    bencher.bench_local(|| {
        let response = decode(&body, ChatStreamDecoder::new("openai"), |d, e, data| {
            d.feed(e, data).unwrap()
        });
        assert_eq!(response.tool_calls.len(), TOOL_CALLS);
        response
    });
}

/// SSE framing alone, for comparison.
#[divan::bench]
fn sse_framing_only(bencher: divan::Bencher) {
    let body = chunks(&anthropic_recording().0);
    bencher.bench_local(|| {
        let stream =
            futures::stream::iter(body.iter().cloned().map(Ok::<_, std::convert::Infallible>));
        futures::executor::block_on(stream.eventsource().count())
    });
}
