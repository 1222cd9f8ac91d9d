//! `sessions export --format otlp-json`: a session run for real (a worker delegating to one
//! that calls a tool, against the mock model) exported as spans and read back through the
//! official OTLP messages: names, the tree, the session id and trace of the root run, times
//! inside the session; a damaged transcript refused; an old one without line times exported at
//! its start.

use std::path::Path;

use golem_session::Transcript;
use golem_testkit::cli::{fs_front_matter, worker};
use golem_testkit::otlp::{ReceivedSpan, flatten};

use super::*;

/// `sessions export ID --format otlp-json` run in `dir`: the spans, decoded through
/// `ExportTraceServiceRequest` (the type `flatten` takes), and the raw JSON.
fn export(env: &TestEnv, dir: &Path, id: &str) -> (Vec<ReceivedSpan>, serde_json::Value) {
    let output = env
        .command()
        .current_dir(dir)
        .args(["sessions", "export", id, "--format", "otlp-json"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    let request = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (flatten(&request), serde_json::from_str(&text).unwrap())
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no span {name}: {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

fn is_child(child: &ReceivedSpan, parent: &ReceivedSpan) -> bool {
    child.trace_id == parent.trace_id && child.parent_span_id.as_deref() == Some(&parent.span_id)
}

/// The root run's `traceContext` as the transcript recorded it.
fn root_trace_context(transcript: &Transcript) -> String {
    transcript
        .entries
        .iter()
        .find_map(|entry| match entry {
            TranscriptEntry::Event {
                event:
                    DisplayEvent::WorkerStarted {
                        depth: 0,
                        trace_context: Some(context),
                        ..
                    },
            } => Some(context.clone()),
            _ => None,
        })
        .expect("the root run's workerStarted records its trace context")
}

#[test]
fn a_delegating_session_exports_as_the_tree_of_its_spans() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    env.project(&[
        (
            "a.worker",
            worker(
                "a",
                &format!(
                    "{}  workers:\n    allowed_workers: [b]\n",
                    fs_front_matter("")
                ),
            ),
        ),
        ("b.worker", worker("b", &fs_front_matter(""))),
    ]);
    env.write("proj/out/note.txt", "hello");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "b", json!({"input": "read the note"}))]),
        wire.tool_calls(&[("call_b", "read_file", json!({"path": "/out/note.txt"}))]),
        wire.text("b read it"),
        wire.text("a is done"),
    ]);
    let proj = env.path().join("proj");
    let output = env
        .command()
        .current_dir(&proj)
        .args(["run", "a.worker", "go", "-a", "approve_all"])
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, &server))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let store = SessionStore::new(&proj);
    let id = store.list().unwrap()[0].id.clone();
    let transcript = store.load(&id).unwrap();
    let (spans, json) = export(&env, &proj, &id);

    let root = named(&spans, "invoke_agent a");
    let delegation = named(&spans, "execute_tool b");
    let sub = named(&spans, "invoke_agent b");
    let read = named(&spans, "execute_tool read_file");
    let model = transcript.meta.model.split_once(':').unwrap().1;
    let chat = format!("chat {model}");
    let chats: Vec<&ReceivedSpan> = spans.iter().filter(|s| s.name == chat).collect();
    assert_eq!(chats.len(), 4, "one per model request: {spans:#?}");
    assert_eq!(chats.iter().filter(|c| is_child(c, root)).count(), 2);
    assert_eq!(chats.iter().filter(|c| is_child(c, sub)).count(), 2);

    // The tree: the delegated run under the call that started it, its call under it (its
    // approval event names the worker the record does not).
    assert_eq!(root.parent_span_id, None);
    assert!(is_child(delegation, root), "{delegation:#?}");
    assert!(is_child(sub, delegation), "{sub:#?}");
    assert!(is_child(read, sub), "{read:#?}");
    let calls: Vec<&str> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .filter_map(|s| s.attr_str("gen_ai.tool.call.id"))
        .collect();
    assert_eq!(calls.len(), 2, "one span per call: {calls:?}");
    assert_eq!(read.attr_str("golem_forge.tool.status"), Some("success"));

    // The root run names the session, and keeps the trace the transcript recorded.
    assert_eq!(root.attr_str("golem_forge.session.id"), Some(id.as_str()));
    assert_eq!(root.attr_str("golem_forge.worker"), Some("a"));
    let context = root_trace_context(&transcript);
    let parts: Vec<&str> = context.split('-').collect();
    assert_eq!(root.trace_id, parts[1], "{context}");
    assert_eq!(root.span_id, parts[2], "{context}");
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id));

    // Every span lies within the session's time window.
    let first = transcript.meta_at.unwrap();
    let last = transcript.times.iter().flatten().max().copied().unwrap();
    let (from, to) = (first * 1_000_000, last * 1_000_000);
    for span in &spans {
        assert!(span.end_unix_nanos >= span.start_unix_nanos, "{span:#?}");
        assert!(
            span.start_unix_nanos >= from,
            "{span:#?} starts before {from}"
        );
        assert!(span.end_unix_nanos <= to, "{span:#?} ends after {to}");
    }
    assert_eq!(root.resource["service.name"], json!("golem-forge"));

    // `sessions show` names the trace, so the session leads to it.
    let shown = env
        .command()
        .current_dir(&proj)
        .args(["sessions", "show", &transcript.id])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(&format!("\ntrace {}\n", root.trace_id)),
        "{shown}"
    );

    // The OTLP/JSON encoding: hex ids, nanoseconds as strings; no content by default.
    let raw = &json["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert!(raw["traceId"].as_str().unwrap().len() == 32, "{raw}");
    assert!(raw["startTimeUnixNano"].is_string(), "{raw}");
    let text = json.to_string();
    for content in [
        "read the note",
        "hello",
        "a is done",
        "gen_ai.input.messages",
    ] {
        assert!(!text.contains(content), "{content:?} in {text}");
    }
}

#[test]
fn a_corrupt_line_is_refused_naming_the_file_and_line() {
    let env = TestEnv::new();
    let store = fixture(&env);
    let path = store.dir().join("20261122-031500-0b1c.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(
        &path,
        format!("{first}\n{{\"kind\":\"input\",\"content\":7}}\n{rest}"),
    )
    .unwrap();
    let out = run(
        &env,
        &[
            "sessions",
            "export",
            "20261122-031500-0b1c",
            "--format",
            "otlp-json",
        ],
    );
    assert_snapshot!(out, @r"
    [stderr]
    Error: [ROOT]/.golem-forge/sessions/20261122-031500-0b1c.jsonl line 2: not a transcript entry: invalid type: integer `7`, expected a string
    Hint: Run `golem-forge sessions show 20261122-031500-0b1c --json` to print the stored lines
    [exit status: 1]
    ");
}

/// The lines of a transcript written before lines carried their time: no `at` anywhere, and
/// no `sessionStarted` event (the export makes one from the meta), and one call's result in a
/// `toolResult` event as still older transcripts kept it.
fn old_transcript() -> String {
    let meta = meta("greeter", "openai:gpt-4o", "single", "2026-11-22T02:45:12Z");
    let events = [
        json!({"type": "workerStarted", "workerId": "w1", "workerName": "greeter", "depth": 0, "model": "openai:gpt-4o"}),
        json!({"type": "usage", "usage": {"inputTokens": 3, "outputTokens": 2}, "total": {"inputTokens": 3, "outputTokens": 2},
            "call": {"provider": "openai", "requestModel": "gpt-4o", "durationMs": 900, "purpose": "conversation"}}),
    ];
    let denied = ToolCallRecord {
        decided_by: Some(DecidedBy::User),
        error: Some(ToolError::new(ToolErrorCode::Denied, "not today")),
        ..call(
            "call_1",
            "delete_file",
            ToolStatus::Denied,
            json!({"path": "/x"}),
        )
    };
    let mut lines = vec![
        serde_json::to_value(TranscriptEntry::Meta(meta)).unwrap(),
        serde_json::to_value(input("hello")).unwrap(),
    ];
    for event in events {
        lines.push(json!({"kind": "event", "event": event}));
    }
    lines.push(serde_json::to_value(TranscriptEntry::ToolCall(denied)).unwrap());
    // Older still: the result in a `toolResult` event of its own, next to a record without it.
    lines.push(json!({"kind": "event", "event": {"type": "toolResult", "toolCallId": "call_2", "toolName": "list_files", "status": "success",
        "value": {"kind": "text", "data": {"content": "a.txt"}}, "durationMs": 1, "invokedBy": "model"}}));
    lines.push(
        serde_json::to_value(TranscriptEntry::ToolCall(call(
            "call_2",
            "list_files",
            ToolStatus::Success,
            json!({"path": "/"}),
        )))
        .unwrap(),
    );
    lines.push(json!({"kind": "event", "event": {"type": "workerFinished", "workerId": "w1", "workerName": "greeter", "depth": 0, "success": true, "durationMs": 5}}));
    lines.push(serde_json::to_value(ended(SessionEndReason::Completed, Some("Hi"))).unwrap());
    lines.iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn an_old_transcript_without_line_times_exports_at_its_start() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    std::fs::create_dir_all(store.dir()).unwrap();
    let id = "20261122-024512-01d0";
    std::fs::write(store.dir().join(format!("{id}.jsonl")), old_transcript()).unwrap();
    let transcript = store.load(id).unwrap();
    assert!(transcript.meta_at.is_none() && transcript.times.iter().all(Option::is_none));

    let (spans, _) = export(&env, env.path(), id);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(spans.len(), 4, "one span per call: {names:?}");
    assert!(is_child(
        named(&spans, "execute_tool list_files"),
        named(&spans, "invoke_agent greeter")
    ));
    let root = named(&spans, "invoke_agent greeter");
    let denied = named(&spans, "execute_tool delete_file");
    let chat = named(&spans, "chat gpt-4o");
    assert_eq!(root.attr_str("golem_forge.session.id"), Some(id));
    assert!(is_child(denied, root) && is_child(chat, root));
    assert_eq!(denied.attr_str("golem_forge.tool.status"), Some("denied"));
    assert_eq!(denied.attr_str("error.type"), Some("DENIED"));
    assert_eq!(denied.status_message, "not today");
    // 2026-11-22T02:45:12Z; durations do not reach before it.
    let started = 1_795_315_512_000_000_000;
    for span in &spans {
        assert_eq!(
            (span.start_unix_nanos, span.end_unix_nanos),
            (started, started),
            "{span:#?}"
        );
    }
}

fn event(value: serde_json::Value) -> TranscriptEntry {
    TranscriptEntry::Event {
        event: serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}")),
    }
}

/// Display events are written by a subscriber, after the runtime's own lines: here both calls'
/// records come before their approval events, the delegation's before the run it started.
#[test]
fn a_record_written_before_its_events_still_hangs_where_its_call_ran() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    let id = "20261122-024512-1a9e";
    let b = json!({"name": "b", "depth": 1, "id": "w2"});
    let mut read = call(
        "call_b",
        "read_file",
        ToolStatus::Success,
        json!({"path": "/out/note.txt"}),
    );
    read.value = Some(golem_protocol::ToolResultValue::text("hello"));
    write(
        &store,
        id,
        meta("a", "test:default", "single", "2026-11-22T02:45:12Z"),
        &[
            input("go"),
            event(
                json!({"type": "sessionStarted", "protocolVersion": "1.16", "sessionId": id, "worker": "a", "model": "test:default"}),
            ),
            event(
                json!({"type": "workerStarted", "workerId": "w1", "workerName": "a", "depth": 0}),
            ),
            TranscriptEntry::ToolCall(call(
                "call_a",
                "b",
                ToolStatus::Success,
                json!({"input": "x"}),
            )),
            event(
                json!({"type": "approvalResolved", "toolCallId": "call_a", "toolName": "b", "approved": true, "decidedBy": "policy"}),
            ),
            event(
                json!({"type": "workerStarted", "workerId": "w2", "parentId": "w1", "workerName": "b", "depth": 1, "parentToolCallId": "call_a"}),
            ),
            TranscriptEntry::ToolCall(read),
            event(
                json!({"type": "approvalResolved", "toolCallId": "call_b", "toolName": "read_file", "approved": true, "decidedBy": "policy", "worker": b}),
            ),
            event(
                json!({"type": "workerFinished", "workerId": "w2", "workerName": "b", "depth": 1, "success": true, "durationMs": 1}),
            ),
            event(
                json!({"type": "workerFinished", "workerId": "w1", "workerName": "a", "depth": 0, "success": true, "durationMs": 2}),
            ),
            ended(SessionEndReason::Completed, Some("done")),
        ],
    );
    let (spans, _) = export(&env, env.path(), id);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(spans.len(), 4, "one span per run and per call: {names:?}");
    let root = named(&spans, "invoke_agent a");
    let delegation = named(&spans, "execute_tool b");
    let sub = named(&spans, "invoke_agent b");
    let read = named(&spans, "execute_tool read_file");
    assert!(is_child(delegation, root), "{delegation:#?}");
    assert!(is_child(sub, delegation), "{sub:#?}");
    assert!(is_child(read, sub), "{read:#?}");
    assert_eq!(
        read.attr_str("golem_forge.approval.decided_by"),
        Some("policy")
    );
}
