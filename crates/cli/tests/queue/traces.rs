//! A queued batch's traces across processes, sent to a local OTLP receiver
//! (golem_testkit::otlp): the producer sends the batch's span and, per item, an `enqueue
//! <item>` span that starts the item's own trace; the item's trace context travels with it on
//! the queue, so each consumer's run of it is a child of that span, linked to the batch. An
//! item parked for an approval on one consumer, answered with `inbox approve`, and continued
//! on another stays in that trace, its continuation the child of its parked run. An item
//! enqueued without trace context still runs, traced on its own. A consumer stopped by SIGTERM
//! still sends the spans of the run it cut off.

use std::process::{Child, Stdio};
use std::time::Duration;

use golem_testkit::cli::TestEnv;
use golem_testkit::mock::MockServer;
use golem_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use serde_json::json;

use crate::approvals::inbox;
use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::provider_env;

/// How long spans may take to arrive (each process sends its spans at exit, at the latest).
const ARRIVAL: Duration = Duration::from_secs(20);

/// The OpenTelemetry environment that sends to `receiver`.
fn otel_env(receiver: &OtlpReceiver) -> [(&'static str, String); 2] {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            receiver.protocol().env_value().to_owned(),
        ),
    ]
}

/// Enqueues `dir`'s items as batch `name`, traced to `receiver` when there is one.
fn traced_enqueue(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    receiver: Option<&OtlpReceiver>,
    name: &str,
    extra: &[&str],
) {
    let url = redis.url();
    let mut command = env.command();
    command
        .current_dir(env.path().join(dir))
        .args(enqueue_args(&url, name))
        .args(extra)
        .envs(provider_env(WIRE, server));
    if let Some(receiver) = receiver {
        command.envs(otel_env(receiver));
    }
    let output = command.output().unwrap();
    assert_exit(&output, 0);
}

/// A `batch-worker --until-done` for batch `name` in `dir`, traced to `receiver`.
fn traced_worker(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    receiver: &OtlpReceiver,
    name: &str,
) -> Child {
    env.std_command()
        .current_dir(env.path().join(dir))
        .args(["batch-worker", "--queue", &redis.url(), "--name", name])
        .arg("--until-done")
        .envs(provider_env(WIRE, server))
        .envs(otel_env(receiver))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one span {name}: {:?}", names(spans));
    found[0]
}

fn names(spans: &[ReceivedSpan]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

fn links_to(span: &ReceivedSpan, target: &ReceivedSpan) -> bool {
    span.links
        .iter()
        .any(|(trace, id, _)| *trace == target.trace_id && *id == target.span_id)
}

/// The root runs (`invoke_agent w`) of item `item`.
fn runs_of<'a>(spans: &'a [ReceivedSpan], item: &str) -> Vec<&'a ReceivedSpan> {
    named(spans, "invoke_agent w")
        .into_iter()
        .filter(|s| s.attr_str("golem_forge.batch.item") == Some(item))
        .collect()
}

#[test]
fn a_parked_item_continued_on_another_consumer_stays_in_the_trace_its_producer_started() {
    let env = TestEnv::new();
    program(&env, "first", &[("a", "say a"), ("b", "write b")]);
    program(&env, "second", &[]);
    env.mkdir("elsewhere");
    let server = MockServer::start_blocking(vec![]);
    // First match wins: the request that carries the call's result names its id.
    server.answer_when("call_b", WIRE.text("Wrote b."));
    server.answer_when("say a", WIRE.text("A."));
    server.answer_when(
        "write b",
        WIRE.tool_calls(&[(
            "call_b",
            "write_file",
            json!({"path": "/out/b.txt", "content": "from b"}),
        )]),
    );
    let redis = RedisServer::start();
    let receiver = OtlpReceiver::start_http_blocking();
    traced_enqueue(
        &env,
        "first",
        &server,
        &redis,
        Some(&receiver),
        "traced",
        &["--approval", "defer"],
    );
    let first = finish(traced_worker(
        &env, "first", &server, &redis, &receiver, "traced",
    ));
    assert_exit(&first, 4);
    let approved = inbox(&env, &server, &redis, &["approve", "1"]);
    assert_exit(&approved, 0);
    let second = finish(traced_worker(
        &env, "second", &server, &redis, &receiver, "traced",
    ));
    assert_exit(&second, 0);
    assert!(
        stderr(&second).contains("item b: completed"),
        "{}",
        stderr(&second)
    );
    assert_eq!(env.read("second/out/b.txt").as_deref(), Some("from b"));

    let spans = receiver.wait_for_spans(
        |spans| {
            named(spans, "batch traced").len() == 1
                && runs_of(spans, "a").len() == 1
                && runs_of(spans, "b").len() == 2
        },
        ARRIVAL,
    );
    let batch = one(&spans, "batch traced");
    assert_eq!(batch.parent_span_id, None);
    assert_eq!(batch.attr_str("golem_forge.batch.id"), Some("traced"));
    assert_eq!(batch.attr_str("golem_forge.worker"), Some("w"));
    assert_eq!(batch.attr_i64("golem_forge.batch.items"), Some(2));

    let mut item_traces = Vec::new();
    for item in ["a", "b"] {
        let enqueued = one(&spans, &format!("enqueue {item}"));
        assert_eq!(
            enqueued.parent_span_id, None,
            "an item's trace starts at its enqueueing"
        );
        assert_ne!(
            enqueued.trace_id, batch.trace_id,
            "an item is in the batch's trace"
        );
        assert!(links_to(enqueued, batch), "{:?}", enqueued.links);
        assert_eq!(enqueued.attr_str("golem_forge.batch.item"), Some(item));
        let runs = runs_of(&spans, item);
        for run in &runs {
            assert_eq!(
                run.trace_id, enqueued.trace_id,
                "item {item}'s run left its trace"
            );
            assert!(links_to(run, batch), "item {item}: {:?}", run.links);
            assert_eq!(run.attr_str("golem_forge.batch.id"), Some("traced"));
        }
        item_traces.push(enqueued.trace_id.clone());
        if item == "a" {
            assert_eq!(
                runs[0].parent_span_id.as_deref(),
                Some(enqueued.span_id.as_str())
            );
            continue;
        }
        // The parked run hangs under the enqueueing; the continuation under the parked run.
        let parked = runs
            .iter()
            .find(|r| r.parent_span_id.as_deref() == Some(enqueued.span_id.as_str()))
            .unwrap_or_else(|| panic!("no run of b under its enqueue span: {runs:?}"));
        let continued = runs.iter().find(|r| r.span_id != parked.span_id).unwrap();
        assert_eq!(
            continued.parent_span_id.as_deref(),
            Some(parked.span_id.as_str()),
            "the continuation is not the child of the parked run"
        );
    }
    assert_ne!(item_traces[0], item_traces[1], "the items share a trace");
}

#[test]
fn an_item_queued_without_trace_context_runs_traced_on_its_own() {
    let env = TestEnv::new();
    program(&env, "p", &[("a", "say a")]);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("A."));
    let redis = RedisServer::start();
    let receiver = OtlpReceiver::start_http_blocking();
    // The producer does not trace: its entries carry no trace context.
    traced_enqueue(&env, "p", &server, &redis, None, "plain", &[]);
    let entries: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg("golem-forge:batch:plain:items")
        .arg("-")
        .arg("+")
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(entries.ids.len(), 1);
    assert!(
        !entries.ids[0].map.contains_key("trace"),
        "{:?}",
        entries.ids[0].map
    );
    let consumer = finish(traced_worker(
        &env, "p", &server, &redis, &receiver, "plain",
    ));
    assert_exit(&consumer, 0);
    assert_eq!(completed_by(&consumer), ["a"]);
    let spans = receiver.wait_for_spans(|spans| runs_of(spans, "a").len() == 1, ARRIVAL);
    let runs = runs_of(&spans, "a");
    assert_eq!(runs.len(), 1, "{:?}", names(&spans));
    assert_eq!(runs[0].parent_span_id, None);
    assert!(runs[0].links.is_empty(), "{:?}", runs[0].links);
    assert!(named(&spans, "enqueue a").is_empty());
}

#[test]
fn a_consumer_stopped_by_sigterm_sends_the_spans_of_the_run_it_cut_off() {
    let env = TestEnv::new();
    program(&env, "proj", &[("slow", "take your time")]);
    let server = MockServer::start_blocking(vec![
        WIRE.text("Too late.").delayed(Duration::from_secs(60)),
    ]);
    let redis = RedisServer::start();
    let receiver = OtlpReceiver::start_http_blocking();
    traced_enqueue(
        &env,
        "proj",
        &server,
        &redis,
        Some(&receiver),
        "stopped",
        &[],
    );
    let consumer = traced_worker(&env, "proj", &server, &redis, &receiver, "stopped");
    assert!(
        server.wait_for_requests(1, LIMIT),
        "the consumer never asked the model"
    );
    signal(consumer.id(), "TERM");
    let consumer = finish(consumer);
    assert_exit(&consumer, 130);
    // Sent as the process exits: nothing else would send them.
    let spans = receiver.wait_for_spans(|spans| runs_of(spans, "slow").len() == 1, ARRIVAL);
    let runs = runs_of(&spans, "slow");
    assert_eq!(runs.len(), 1, "{:?}", names(&spans));
    let enqueued = one(&spans, "enqueue slow");
    assert_eq!(runs[0].trace_id, enqueued.trace_id);
    assert_eq!(
        runs[0].parent_span_id.as_deref(),
        Some(enqueued.span_id.as_str())
    );
}
