//! A local batch's traces, sent to a local OTLP receiver (golem_testkit::otlp): a run of a
//! batch is one `batch <id>` span with its counts; each item's session is a trace of its own
//! (not the batch's) whose root span links to it and names the batch and the item. `batch
//! resume` is a span of its own, and an item parked for an approval and continued there stays
//! in the trace of its first run.

use std::time::Duration;

use golem_testkit::cli::{TestEnv, model_for, provider_env, render};
use golem_testkit::mock::MockServer;
use golem_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use serde_json::json;

use super::{WIRE, batch_dir, program};

/// How long spans may take to arrive (each process sends its spans at exit, at the latest).
const ARRIVAL: Duration = Duration::from_secs(20);

/// The OpenTelemetry environment that sends to `receiver`.
pub(crate) fn otel_env(receiver: &OtlpReceiver) -> [(&'static str, String); 2] {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            receiver.protocol().env_value().to_owned(),
        ),
    ]
}

/// `golem-forge batch ARGS` in the program, sending its traces to `receiver`.
fn traced_batch(
    env: &TestEnv,
    server: &MockServer,
    receiver: &OtlpReceiver,
    args: &[&str],
) -> std::process::Output {
    env.command()
        .current_dir(env.path().join("proj"))
        .arg("batch")
        .args(args)
        .envs(provider_env(WIRE, server))
        .envs(otel_env(receiver))
        .output()
        .unwrap()
}

fn named<'a>(spans: &'a [ReceivedSpan], prefix: &str) -> Vec<&'a ReceivedSpan> {
    spans
        .iter()
        .filter(|s| s.name.starts_with(prefix))
        .collect()
}

fn links_to(span: &ReceivedSpan, target: &ReceivedSpan) -> bool {
    span.links
        .iter()
        .any(|(trace, id, _)| *trace == target.trace_id && *id == target.span_id)
}

fn batch_id(env: &TestEnv) -> String {
    batch_dir(env)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_local_batch_is_a_span_and_each_item_a_trace_of_its_own_linked_to_it() {
    let env = TestEnv::new();
    program(&env, 2);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let receiver = OtlpReceiver::start_http_blocking();
    let output = traced_batch(&env, &server, &receiver, &["w", "--input", "items.jsonl"]);
    assert!(output.status.success(), "{}", render(&output));
    let spans = receiver.wait_for_spans(
        |spans| named(spans, "batch ").len() == 1 && named(spans, "invoke_agent").len() == 2,
        ARRIVAL,
    );
    let id = batch_id(&env);
    let batches = named(&spans, "batch ");
    assert_eq!(batches.len(), 1, "{:?}", names(&spans));
    let span = batches[0];
    assert_eq!(span.name, format!("batch {id}"));
    assert_eq!(span.parent_span_id, None, "the batch's span is a root");
    assert_eq!(span.attr_str("golem_forge.batch.id"), Some(id.as_str()));
    assert_eq!(span.attr_str("golem_forge.worker"), Some("w"));
    assert_eq!(span.attr_i64("golem_forge.batch.items"), Some(2));
    assert_eq!(span.attr_i64("golem_forge.batch.completed"), Some(2));
    assert_eq!(span.attr_i64("golem_forge.batch.failed"), Some(0));
    assert_eq!(span.attr_i64("golem_forge.batch.waiting_approval"), Some(0));

    let roots = named(&spans, "invoke_agent");
    assert_eq!(roots.len(), 2, "{:?}", names(&spans));
    assert_ne!(
        roots[0].trace_id, roots[1].trace_id,
        "the items share a trace"
    );
    let mut items = Vec::new();
    for root in &roots {
        assert_ne!(
            root.trace_id, span.trace_id,
            "an item is in the batch's trace"
        );
        assert_eq!(
            root.parent_span_id, None,
            "an item's run has a parent: {root:?}"
        );
        assert!(
            links_to(root, span),
            "not linked to the batch: {:?}",
            root.links
        );
        assert_eq!(root.attr_str("golem_forge.batch.id"), Some(id.as_str()));
        items.push(root.attr_str("golem_forge.batch.item").unwrap().to_owned());
    }
    items.sort();
    assert_eq!(items, ["item-1", "item-2"]);
}

#[test]
fn batch_resume_is_a_span_of_its_own_and_a_continued_item_stays_in_its_trace() {
    let env = TestEnv::new();
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 2\n",
    );
    env.mkdir("proj/out");
    env.write(
        "proj/w.worker",
        &format!(
            "---\nname: w\nmodel: {}\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n\
             toolsets:\n  filesystem: {{}}\n---\nYou write files.\n",
            model_for(WIRE)
        ),
    );
    env.write(
        "proj/items.jsonl",
        "{\"id\": \"a\", \"input\": \"say a\"}\n{\"id\": \"b\", \"input\": \"write b\"}\n",
    );
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
    let receiver = OtlpReceiver::start_http_blocking();
    let parked = traced_batch(
        &env,
        &server,
        &receiver,
        &["w", "--input", "items.jsonl", "--approval", "defer"],
    );
    assert_eq!(parked.status.code(), Some(4), "{}", render(&parked));
    let id = batch_id(&env);
    let approved = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "approve", "1"])
        .envs(provider_env(WIRE, &server))
        .output()
        .unwrap();
    assert_eq!(approved.status.code(), Some(0), "{}", render(&approved));
    // Resumed with no options given: it runs with the batch's own.
    let resumed = traced_batch(&env, &server, &receiver, &["resume", &id]);
    assert!(resumed.status.success(), "{}", render(&resumed));
    assert_eq!(env.read("proj/out/b.txt").as_deref(), Some("from b"));
    let spans = receiver.wait_for_spans(
        |spans| named(spans, "batch ").len() == 2 && named(spans, "invoke_agent").len() == 3,
        ARRIVAL,
    );
    let batches = named(&spans, "batch ");
    assert_eq!(batches.len(), 2, "{:?}", names(&spans));
    let first = batches
        .iter()
        .find(|s| s.attr_i64("golem_forge.batch.items") == Some(2))
        .unwrap();
    let second = batches
        .iter()
        .find(|s| s.attr_i64("golem_forge.batch.items") == Some(1))
        .unwrap();
    assert_ne!(first.trace_id, second.trace_id);
    assert_eq!(
        first.attr_i64("golem_forge.batch.waiting_approval"),
        Some(1)
    );
    assert_eq!(first.attr_i64("golem_forge.batch.completed"), Some(1));
    assert_eq!(second.attr_i64("golem_forge.batch.completed"), Some(1));
    assert_eq!(second.attr_str("golem_forge.batch.id"), Some(id.as_str()));

    let of_b: Vec<&ReceivedSpan> = named(&spans, "invoke_agent")
        .into_iter()
        .filter(|s| s.attr_str("golem_forge.batch.item") == Some("b"))
        .collect();
    assert_eq!(of_b.len(), 2, "{:?}", names(&spans));
    let (parked_run, continued) = match of_b[0].parent_span_id {
        None => (of_b[0], of_b[1]),
        Some(_) => (of_b[1], of_b[0]),
    };
    assert_eq!(parked_run.parent_span_id, None);
    assert!(links_to(parked_run, first), "{:?}", parked_run.links);
    assert_eq!(
        continued.trace_id, parked_run.trace_id,
        "the continuation left the trace"
    );
    assert_eq!(
        continued.parent_span_id.as_deref(),
        Some(parked_run.span_id.as_str()),
        "the continuation is not the parked run's child"
    );
    assert!(
        links_to(continued, second),
        "the continuation does not link to the run of the batch it ran in: {:?}",
        continued.links
    );
}

fn names(spans: &[ReceivedSpan]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}
