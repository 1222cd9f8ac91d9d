//! The session tracer on a scripted stream of display events: the tree of spans, their names,
//! kinds and attributes, errors, content only when captured, and where a root run hangs when
//! the session was handed a parent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use golem_protocol::DisplayEvent;
use golem_telemetry::{SessionTracer, TraceOrigin, TraceParent};
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::SpanData;
use serde_json::{Value as Json, json};

fn event(value: Json) -> DisplayEvent {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// The events of a session: worker `a` delegates to `b` (asked, approved after a wait), `b`
/// makes a model call and a denied `write_file`, `a` runs a jailed program that exits 3, its
/// context is compacted and elided, and it answers.
fn session() -> Vec<(u64, DisplayEvent)> {
    let b = json!({"name": "b", "depth": 1, "id": "w2"});
    vec![
        (
            0,
            event(
                json!({"type": "sessionStarted", "protocolVersion": "1.15", "sessionId": "s-1", "worker": "a", "model": "test:m"}),
            ),
        ),
        (
            1,
            event(json!({"type": "message", "message": {"role": "user", "content": "do it"}})),
        ),
        (
            2,
            event(
                json!({"type": "workerStarted", "workerId": "w1", "workerName": "a", "depth": 0, "model": "openai:gpt-x"}),
            ),
        ),
        (
            10,
            event(
                json!({"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 4}, "total": {"inputTokens": 10, "outputTokens": 5}, "model": "openai:gpt-x",
            "call": {"provider": "openai", "requestModel": "gpt-x", "responseModel": "gpt-x-2026", "responseId": "r1", "finishReasons": ["tool_call"], "serverAddress": "127.0.0.1", "serverPort": 8080, "durationMs": 7, "retries": 1, "retryWaitMs": 3, "rateLimitWaitMs": 2, "purpose": "conversation"}}),
            ),
        ),
        (
            11,
            event(
                json!({"type": "approvalRequired", "requestId": "q1", "toolCallId": "c1", "toolName": "b", "args": {"input": "x"}, "description": "delegate", "risk": "low", "invokedBy": "model"}),
            ),
        ),
        (
            41,
            event(
                json!({"type": "approvalResolved", "requestId": "q1", "toolCallId": "c1", "toolName": "b", "approved": true, "decidedBy": "user"}),
            ),
        ),
        (
            41,
            event(
                json!({"type": "toolStarted", "toolCallId": "c1", "toolName": "b", "args": {"input": "x"}, "invokedBy": "model"}),
            ),
        ),
        (
            42,
            event(
                json!({"type": "workerStarted", "workerId": "w2", "parentId": "w1", "workerName": "b", "depth": 1, "model": "openai:gpt-x", "parentToolCallId": "c1"}),
            ),
        ),
        (
            50,
            event(
                json!({"type": "usage", "usage": {"inputTokens": 3, "outputTokens": 2}, "total": {"inputTokens": 3, "outputTokens": 2}, "worker": b,
            "call": {"provider": "openai", "requestModel": "gpt-x", "durationMs": 6, "purpose": "conversation"}}),
            ),
        ),
        (
            51,
            event(
                json!({"type": "approvalResolved", "toolCallId": "c2", "toolName": "write_file", "approved": false, "decidedBy": "policy", "note": "blocked by policy", "worker": b}),
            ),
        ),
        (
            51,
            event(
                json!({"type": "toolResult", "toolCallId": "c2", "toolName": "write_file", "status": "blocked", "args": {"path": "x"},
            "value": {"kind": "tool_error", "data": {"code": "BLOCKED", "message": "blocked by policy"}, "summary": "blocked"}, "durationMs": 0, "invokedBy": "model", "worker": b}),
            ),
        ),
        (
            60,
            event(
                json!({"type": "workerFinished", "workerId": "w2", "workerName": "b", "depth": 1, "success": true, "durationMs": 18, "usage": {"inputTokens": 3, "outputTokens": 2}}),
            ),
        ),
        (
            61,
            event(
                json!({"type": "toolResult", "toolCallId": "c1", "toolName": "b", "status": "success",
            "value": {"kind": "text", "data": {"content": "done"}, "summary": "done"}, "durationMs": 50, "invokedBy": "model"}),
            ),
        ),
        (
            62,
            event(
                json!({"type": "toolStarted", "toolCallId": "c3", "toolName": "run_code", "args": {"code": "exit 3"}, "invokedBy": "model"}),
            ),
        ),
        (
            80,
            event(
                json!({"type": "toolResult", "toolCallId": "c3", "toolName": "run_code", "status": "success",
            "value": {"kind": "code_result", "data": {"command": "sh main.sh", "stdout": "", "stderr": "", "exitCode": 3, "durationMs": 15, "weakened": ["network: no slirp4netns"],
                "limits": {"wallMs": 5000, "cpuSecs": 120, "memoryBytes": 1024, "runMemoryBytes": 2048, "processes": 64, "fileSizeBytes": 10, "outputBytes": 10, "network": "none"}}, "summary": "exit 3 in 15 ms"},
            "durationMs": 18, "invokedBy": "model"}),
            ),
        ),
        (
            95,
            event(
                json!({"type": "contextCompacted", "reason": "threshold", "tokensBefore": 900, "tokensAfter": 100, "summaryTokens": 50, "messagesReplaced": 8, "durationMs": 12}),
            ),
        ),
        (
            96,
            event(
                json!({"type": "contextElided", "tokensBefore": 500, "tokensAfter": 300, "window": 1000, "results": 2, "harder": false}),
            ),
        ),
        (
            100,
            event(
                json!({"type": "workerFinished", "workerId": "w1", "workerName": "a", "depth": 0, "success": true, "durationMs": 98, "usage": {"inputTokens": 13, "outputTokens": 7}}),
            ),
        ),
        (
            100,
            event(
                json!({"type": "turnEnded", "status": "completed", "response": "all done", "usage": {"inputTokens": 13, "outputTokens": 7}}),
            ),
        ),
        (
            101,
            event(json!({"type": "sessionEnded", "reason": "completed"})),
        ),
    ]
}

fn trace(origin: TraceOrigin, capture: bool, events: &[(u64, DisplayEvent)]) -> Vec<SpanData> {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&spans);
    let mut tracer = SessionTracer::new(
        origin,
        capture,
        Box::new(move |span| sink.lock().unwrap().push(span)),
    );
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for (ms, event) in events {
        tracer.observe(t0 + Duration::from_millis(*ms), event);
    }
    drop(tracer);
    Arc::try_unwrap(spans).unwrap().into_inner().unwrap()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no span {name}: {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

fn get<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| &kv.value)
}

fn string(span: &SpanData, key: &str) -> String {
    match get(span, key) {
        Some(value) => value.as_str().into_owned(),
        None => panic!("{} has no {key}: {:?}", span.name, span.attributes),
    }
}

fn int(span: &SpanData, key: &str) -> i64 {
    match get(span, key) {
        Some(Value::I64(n)) => *n,
        other => panic!("{} has {key} = {other:?}", span.name),
    }
}

fn is_child(child: &SpanData, parent: &SpanData) -> bool {
    child.span_context.trace_id() == parent.span_context.trace_id()
        && child.parent_span_id == parent.span_context.span_id()
}

#[test]
fn a_session_gives_the_tree_of_its_workers_calls_and_tools() {
    let spans = trace(TraceOrigin::default(), false, &session());
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(spans.len(), 10, "{names:?}");
    let root = named(&spans, "invoke_agent a");
    let sub = named(&spans, "invoke_agent b");
    let delegation = named(&spans, "execute_tool b");
    let denied = named(&spans, "execute_tool write_file");
    let run = named(&spans, "execute_tool run_code");
    let jailed = named(&spans, "run_jailed sh");
    let root_chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-x" && is_child(s, root))
        .expect("a's chat span");
    let sub_chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-x" && is_child(s, sub))
        .expect("b's chat span");
    let compaction = named(&spans, "compact_context a");
    let elision = named(&spans, "elide_context a");

    assert_eq!(root.parent_span_id, SpanId::INVALID);
    assert!(is_child(delegation, root));
    assert!(
        is_child(sub, delegation),
        "the sub-worker hangs under the call that started it"
    );
    assert!(is_child(denied, sub));
    assert!(is_child(run, root));
    assert!(is_child(jailed, run));
    assert!(is_child(compaction, root) && is_child(elision, root));

    assert_eq!(root.span_kind, SpanKind::Internal);
    assert_eq!(root_chat.span_kind, SpanKind::Client);
    assert_eq!(string(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(string(root, "gen_ai.agent.name"), "a");
    assert_eq!(string(root, "gen_ai.conversation.id"), "s-1");
    assert_eq!(string(root, "golem_forge.session.id"), "s-1");
    assert_eq!(string(root, "golem_forge.worker"), "a");
    assert_eq!(string(root, "gen_ai.provider.name"), "openai");
    assert_eq!(int(root, "gen_ai.usage.input_tokens"), 13);
    assert!(
        get(sub, "golem_forge.session.id").is_none(),
        "only root spans carry it"
    );
    assert_eq!(
        root.end_time.duration_since(root.start_time).unwrap(),
        Duration::from_millis(98)
    );

    assert_eq!(string(root_chat, "gen_ai.operation.name"), "chat");
    assert_eq!(string(root_chat, "gen_ai.provider.name"), "openai");
    assert_eq!(string(root_chat, "gen_ai.request.model"), "gpt-x");
    assert_eq!(string(root_chat, "gen_ai.response.model"), "gpt-x-2026");
    assert_eq!(string(root_chat, "gen_ai.response.id"), "r1");
    assert_eq!(
        get(root_chat, "gen_ai.response.finish_reasons").map(ToString::to_string),
        Some("[\"tool_call\"]".to_owned())
    );
    assert_eq!(
        int(root_chat, "gen_ai.usage.input_tokens"),
        14,
        "cached tokens are input too"
    );
    assert_eq!(int(root_chat, "gen_ai.usage.output_tokens"), 5);
    assert_eq!(int(root_chat, "gen_ai.usage.cache_read.input_tokens"), 4);
    assert_eq!(string(root_chat, "server.address"), "127.0.0.1");
    assert_eq!(int(root_chat, "server.port"), 8080);
    assert_eq!(int(root_chat, "golem_forge.model_call.retries"), 1);
    assert_eq!(
        int(root_chat, "golem_forge.model_call.rate_limit_wait_ms"),
        2
    );
    assert_eq!(
        root_chat
            .end_time
            .duration_since(root_chat.start_time)
            .unwrap(),
        Duration::from_millis(7)
    );
    assert!(get(sub_chat, "server.address").is_none());

    assert_eq!(string(delegation, "gen_ai.tool.name"), "b");
    assert_eq!(string(delegation, "gen_ai.tool.call.id"), "c1");
    assert_eq!(string(delegation, "golem_forge.tool.status"), "success");
    assert_eq!(
        string(delegation, "golem_forge.approval.requirement"),
        "approval"
    );
    assert_eq!(
        string(delegation, "golem_forge.approval.decision"),
        "approved"
    );
    assert_eq!(
        string(delegation, "golem_forge.approval.decided_by"),
        "user"
    );
    assert_eq!(int(delegation, "golem_forge.approval.wait_ms"), 30);
    assert_eq!(delegation.status, Status::Unset);

    assert_eq!(
        string(denied, "golem_forge.approval.requirement"),
        "blocked"
    );
    assert_eq!(string(denied, "golem_forge.approval.decision"), "denied");
    assert_eq!(string(denied, "golem_forge.approval.decided_by"), "policy");
    assert_eq!(string(denied, "error.type"), "BLOCKED");
    assert_eq!(denied.status, Status::error("blocked by policy"));
    assert!(
        denied.events.events.iter().any(|e| e.name == "exception"),
        "the error is recorded"
    );

    assert_eq!(string(run, "golem_forge.approval.requirement"), "none");
    assert_eq!(int(jailed, "golem_forge.jail.exit_code"), 3);
    assert_eq!(string(jailed, "golem_forge.jail.command"), "sh main.sh");
    assert_eq!(string(jailed, "error.type"), "exit_code");
    assert!(get(jailed, "golem_forge.jail.weakened").is_some());
    assert_eq!(int(jailed, "golem_forge.jail.limit.wall_ms"), 5000);
    assert_eq!(int(jailed, "golem_forge.jail.limit.processes"), 64);
    assert_eq!(string(jailed, "golem_forge.jail.network"), "none");

    assert_eq!(
        string(compaction, "golem_forge.context.compaction_reason"),
        "threshold"
    );
    assert_eq!(int(compaction, "golem_forge.context.tokens_before"), 900);
    assert_eq!(
        compaction
            .end_time
            .duration_since(compaction.start_time)
            .unwrap(),
        Duration::from_millis(12)
    );
    assert_eq!(int(elision, "golem_forge.context.results_elided"), 2);

    let content = [
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
    ];
    for span in &spans {
        for key in content {
            assert!(
                get(span, key).is_none(),
                "{} records {key} without capture",
                span.name
            );
        }
    }
}

#[test]
fn content_is_recorded_only_when_captured() {
    let spans = trace(TraceOrigin::default(), true, &session());
    let root = named(&spans, "invoke_agent a");
    assert!(string(root, "gen_ai.input.messages").contains("do it"));
    assert!(string(root, "gen_ai.output.messages").contains("all done"));
    let denied = named(&spans, "execute_tool write_file");
    assert_eq!(
        string(denied, "gen_ai.tool.call.arguments"),
        r#"{"path":"x"}"#
    );
    assert!(string(named(&spans, "execute_tool b"), "gen_ai.tool.call.result").contains("done"));
}

#[test]
fn a_session_with_a_parent_joins_its_trace_and_links_the_batch() {
    let parent = TraceParent::new_trace();
    let batch = TraceParent::new_trace();
    let origin = TraceOrigin {
        parent: Some(parent),
        links: vec![batch],
        batch_id: Some("b-7".into()),
        item_id: Some("item-2".into()),
    };
    let spans = trace(origin, false, &session());
    let root = named(&spans, "invoke_agent a");
    assert_eq!(root.span_context.trace_id(), parent.trace_id);
    assert_eq!(root.parent_span_id, parent.span_id);
    assert!(root.parent_span_is_remote);
    assert_eq!(string(root, "golem_forge.batch.id"), "b-7");
    assert_eq!(string(root, "golem_forge.batch.item"), "item-2");
    let links = &root.links.links;
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].span_context.trace_id(), batch.trace_id);
    assert!(
        spans
            .iter()
            .all(|s| s.span_context.trace_id() == parent.trace_id)
    );
}

#[test]
fn each_turn_is_a_trace_of_its_own_and_open_spans_end_with_the_session() {
    let mut events = session();
    events.pop();
    events.push((
        200,
        event(json!({"type": "workerStarted", "workerId": "w3", "workerName": "a", "depth": 0})),
    ));
    events.push((210, event(json!({"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}, "total": {"inputTokens": 1, "outputTokens": 1},
        "call": {"provider": "openai", "requestModel": "gpt-x", "durationMs": 5, "purpose": "conversation", "error": "HTTP 500"}}))));
    events.push((
        220,
        event(json!({"type": "sessionEnded", "reason": "interrupted"})),
    ));
    let spans = trace(TraceOrigin::default(), false, &events);
    let roots: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent a")
        .collect();
    assert_eq!(roots.len(), 2);
    assert_ne!(
        roots[0].span_context.trace_id(),
        roots[1].span_context.trace_id()
    );
    let second = roots[1];
    assert!(
        matches!(second.status, Status::Error { .. }),
        "cut off by the session's end"
    );
    let failed = spans
        .iter()
        .find(|s| s.name == "chat gpt-x" && is_child(s, second))
        .expect("the failed request's span");
    assert_eq!(failed.status, Status::error("HTTP 500"));
    assert_eq!(string(failed, "error.type"), "model_request_failed");
}
