//! Traces end to end: `golem-forge run` and `sessions resume` with the OpenTelemetry
//! environment pointing at a local OTLP receiver (HTTP/protobuf and gRPC), the spans decoded
//! with the official protobuf definitions (golem_testkit::otlp). One session with a delegated
//! worker, a call its policy blocks, a jailed run and a compaction gives the tree of spans the
//! GenAI conventions name; a parked turn continued after `inbox approve` is one trace.

use golem_testkit::otlp::{OtlpReceiver, Protocol, ReceivedSpan};

use super::*;

/// A text only the runtime's summary requests hold.
const SUMMARY_ASKED: &str = "[The conversation above is about to be replaced";

/// How long spans may take to arrive (the exporter sends them at exit).
const ARRIVAL: Duration = Duration::from_secs(10);

/// The OpenTelemetry environment for `receiver`, with a header and a resource attribute.
fn otel_env(receiver: &OtlpReceiver) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            receiver.protocol().env_value().to_owned(),
        ),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-team-key=s3cr%20t".to_owned(),
        ),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=ci".to_owned(),
        ),
    ]
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    let found = named(spans, name);
    assert_eq!(
        found.len(),
        1,
        "one span {name}: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

fn child_of(child: &ReceivedSpan, parent: &ReceivedSpan) -> bool {
    child.trace_id == parent.trace_id && child.parent_span_id.as_deref() == Some(&parent.span_id)
}

/// The W3C `traceparent` of the root run recorded in the session's transcript, per turn.
fn recorded_root_traces(env: &TestEnv) -> Vec<String> {
    env.transcripts("proj")
        .concat()
        .iter()
        .filter(|line| {
            line["kind"] == "event"
                && line["event"]["type"] == "workerStarted"
                && line["event"]["depth"] == 0
        })
        .map(|line| line["event"]["traceContext"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_session_with_delegation_a_blocked_call_a_jailed_run_and_a_compaction_is_a_tree_of_spans() {
    for protocol in [Protocol::Http, Protocol::Grpc] {
        let wire = Wire::Anthropic;
        let receiver = OtlpReceiver::start_blocking(protocol);
        let env = TestEnv::new();
        let zone = "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { delete: blocked }\n";
        project(
            &env,
            &[
                (
                    "main.worker",
                    worker(
                        "main",
                        &format!(
                            "{zone}toolsets:\n  code: {{}}\n  workers:\n    allowed_workers: [helper]\n\
                             context: {{ elide_at: never, compact_at: 0.3, keep_turns: 1 }}\n"
                        ),
                    ),
                ),
                (
                    "helper.worker",
                    worker("helper", &format!("{zone}toolsets:\n  filesystem: {{}}\n")),
                ),
            ],
        );
        env.write(
            "proj/golem-forge.config.yaml",
            &format!("context_windows:\n  \"{}\": 8000\n", model_for(wire)),
        );
        env.write("proj/out/a.txt", "keep me");
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_d", "helper", json!({"input": "delete a.txt"}))]),
            wire.tool_calls(&[("call_x", "delete_file", json!({"path": "/out/a.txt"}))]),
            wire.text("It is protected."),
            wire.tool_calls(&[(
                "call_c",
                "run_code",
                // About 4000 tokens of output: the second turn's request is past
                // `compact_at`, and the first turn's exchange is what it compacts.
                json!({"language": "bash", "code": "head -c 16000 /dev/zero | tr '\\0' x; exit 3"}),
            )]),
            wire.text("Done."),
            wire.text("Again done."),
        ]);
        server.answer_when(SUMMARY_ASKED, wire.text("SUMMARY: a.txt is kept."));
        let output = env
            .command()
            .arg("run")
            .args(["proj/main.worker", "tidy up", "-a", "approve_all", "--json"])
            .args(["--model", model_for(wire)])
            .envs(provider_env(wire, &server))
            .envs(otel_env(&receiver))
            .output()
            .unwrap();
        assert_exit(&output, 0);
        assert!(
            !stderr(&output).contains("traces cannot be sent"),
            "{}",
            stderr(&output)
        );
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("keep me"));
        let session = events(&output)[0]["sessionId"].as_str().unwrap().to_owned();
        // A second turn, which compacts the first.
        let resumed = env
            .command()
            .args(["sessions", "resume", &session, "and again"])
            .current_dir(env.path().join("proj"))
            .args(["--model", model_for(wire), "-a", "approve_all", "--json"])
            .envs(provider_env(wire, &server))
            .envs(otel_env(&receiver))
            .output()
            .unwrap();
        assert_exit(&resumed, 0);
        assert!(
            events(&resumed)
                .iter()
                .any(|e| e["type"] == "contextCompacted"),
            "{protocol:?}: the second turn compacts: {}",
            stdout(&resumed)
        );

        let spans = receiver.wait_for_named("invoke_agent main", 2, ARRIVAL);
        let roots = named(&spans, "invoke_agent main");
        assert_eq!(
            roots.len(),
            2,
            "{protocol:?}: one root span per turn: {spans:#?}"
        );
        let (first, second) = (roots[0], roots[1]);
        assert_ne!(first.trace_id, second.trace_id, "each turn is a trace");
        let recorded = recorded_root_traces(&env);
        assert_eq!(
            recorded,
            [
                format!("00-{}-{}-01", first.trace_id, first.span_id),
                format!("00-{}-{}-01", second.trace_id, second.span_id)
            ],
            "{protocol:?}: the transcript names each turn's span"
        );
        for root in [first, second] {
            assert_eq!(root.parent_span_id, None);
            assert_eq!(
                root.attr_str("golem_forge.session.id"),
                Some(session.as_str())
            );
            assert_eq!(
                root.attr_str("gen_ai.conversation.id"),
                Some(session.as_str())
            );
            assert_eq!(root.attr_str("golem_forge.worker"), Some("main"));
            assert_eq!(root.attr_str("gen_ai.operation.name"), Some("invoke_agent"));
            assert_eq!(root.attr_str("gen_ai.agent.name"), Some("main"));
            assert_eq!(root.kind, 1, "internal");
            assert_eq!(root.resource["service.name"], "golem-forge");
            assert_eq!(root.resource["deployment.environment"], "ci");
            assert_eq!(root.scope_name, "golem-forge");
            assert!(root.end_unix_nanos >= root.start_unix_nanos);
        }
        let headers = receiver.headers();
        assert!(
            headers
                .iter()
                .all(|h| h.get("x-team-key").map(String::as_str) == Some("s3cr t")),
            "{protocol:?}: every export carries the header: {headers:?}"
        );

        // The first turn: main → execute_tool helper → invoke_agent helper → the blocked
        // delete; main → execute_tool run_code → the jailed run; a chat span per request.
        let delegation = one(&spans, "execute_tool helper");
        let helper = one(&spans, "invoke_agent helper");
        let blocked = one(&spans, "execute_tool delete_file");
        let code = one(&spans, "execute_tool run_code");
        let jailed = one(&spans, "run_jailed bash");
        assert!(child_of(delegation, first));
        assert!(
            child_of(helper, delegation),
            "{protocol:?}: the sub-worker hangs under its call"
        );
        assert!(child_of(blocked, helper));
        assert!(child_of(code, first));
        assert!(child_of(jailed, code));
        assert_eq!(delegation.attr_str("gen_ai.tool.call.id"), Some("call_d"));
        assert_eq!(
            delegation.attr_str("golem_forge.tool.status"),
            Some("success")
        );
        assert_eq!(blocked.attr_str("golem_forge.tool.status"), Some("blocked"));
        assert_eq!(
            blocked.attr_str("golem_forge.approval.requirement"),
            Some("blocked")
        );
        assert_eq!(
            blocked.attr_str("golem_forge.approval.decision"),
            Some("denied")
        );
        assert_eq!(
            blocked.attr_str("golem_forge.approval.decided_by"),
            Some("policy")
        );
        assert_eq!(
            blocked.status_code, 2,
            "{protocol:?}: a blocked call is an error"
        );
        assert_eq!(blocked.attr_str("error.type"), Some("BLOCKED"));
        assert!(blocked.events.iter().any(|(name, _)| name == "exception"));
        assert_eq!(jailed.attr_i64("golem_forge.jail.exit_code"), Some(3));
        assert_eq!(jailed.attr_str("golem_forge.jail.network"), Some("none"));
        assert!(
            jailed
                .attr_i64("golem_forge.jail.limit.wall_ms")
                .is_some_and(|ms| ms > 0)
        );
        assert!(jailed.attr_i64("golem_forge.jail.limit.cpu_secs").is_some());
        assert_eq!(jailed.attr_str("error.type"), Some("exit_code"));
        assert_eq!(code.attr_str("gen_ai.tool.type"), Some("function"));

        let chats: Vec<&ReceivedSpan> = spans
            .iter()
            .filter(|s| s.name.starts_with("chat "))
            .collect();
        assert_eq!(
            chats.len(),
            7,
            "{protocol:?}: one per request, the summary's included"
        );
        let model = model_for(wire).split_once(':').unwrap().1;
        for chat in &chats {
            assert_eq!(chat.name, format!("chat {model}"));
            assert_eq!(chat.kind, 3, "client");
            assert_eq!(chat.attr_str("gen_ai.operation.name"), Some("chat"));
            assert_eq!(chat.attr_str("gen_ai.provider.name"), Some("anthropic"));
            assert_eq!(chat.attr_str("gen_ai.request.model"), Some(model));
            assert_eq!(chat.attr_str("server.address"), Some("127.0.0.1"));
            assert!(chat.attr_i64("gen_ai.usage.input_tokens").unwrap() > 0);
            assert!(chat.attr("gen_ai.response.finish_reasons").is_some());
        }
        assert_eq!(chats.iter().filter(|c| child_of(c, helper)).count(), 2);
        assert_eq!(chats.iter().filter(|c| child_of(c, first)).count(), 3);
        let summary = chats
            .iter()
            .find(|c| c.attr_str("golem_forge.model_call.purpose") == Some("summary"))
            .expect("the summary request's span");
        assert!(child_of(summary, second));

        // The second turn compacted the first.
        let compaction = one(&spans, "compact_context main");
        assert!(child_of(compaction, second));
        assert_eq!(
            compaction.attr_str("golem_forge.context.compaction_reason"),
            Some("threshold")
        );
        assert!(
            compaction
                .attr_i64("golem_forge.context.tokens_before")
                .unwrap()
                > 0
        );

        // Content is not recorded unless asked for.
        for span in &spans {
            for key in ["gen_ai.tool.call.arguments", "gen_ai.input.messages"] {
                assert!(span.attr(key).is_none(), "{}: {key}", span.name);
            }
        }
    }
}

#[test]
fn a_parked_turn_continued_after_inbox_approve_is_one_trace() {
    let wire = Wire::OpenAi;
    let receiver = OtlpReceiver::start_http_blocking();
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "later"}),
        )]),
        wire.text("Written."),
    ]);
    let parked = env
        .command()
        .arg("run")
        .args(["proj/main.worker", "write it", "--approval", "defer"])
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, &server))
        .envs(otel_env(&receiver))
        .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        .output()
        .unwrap();
    assert_exit(&parked, 4);
    let approved = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "approve", "1", "--resume"])
        .envs(provider_env(wire, &server))
        .envs(otel_env(&receiver))
        .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        .output()
        .unwrap();
    assert_exit(&approved, 0);
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("later"));

    let spans = receiver.wait_for_named("invoke_agent main", 2, ARRIVAL);
    let roots = named(&spans, "invoke_agent main");
    assert_eq!(roots.len(), 2, "{spans:#?}");
    let (parked_run, continued) = (roots[0], roots[1]);
    assert!(
        child_of(continued, parked_run),
        "the continuation is a child of the parked run, in its trace"
    );
    assert!(
        spans.iter().all(|s| s.trace_id == parked_run.trace_id),
        "one trace"
    );
    let writes = named(&spans, "execute_tool write_file");
    let decided = writes
        .iter()
        .find(|w| w.attr_str("golem_forge.approval.decision") == Some("approved"))
        .expect("the approved call's span");
    assert_eq!(
        decided.attr_str("golem_forge.approval.decided_by"),
        Some("user")
    );
    assert!(child_of(decided, continued));
    assert!(
        writes
            .iter()
            .any(|w| w.attr_str("golem_forge.approval.decision") == Some("deferred")),
        "the parked call's span says it was deferred: {writes:#?}"
    );
    // Content was asked for: the input and the call's arguments are there.
    assert!(
        parked_run
            .attr_str("gen_ai.input.messages")
            .is_some_and(|m| m.contains("write it")),
        "{parked_run:#?}"
    );
    assert!(
        decided
            .attr_str("gen_ai.tool.call.arguments")
            .is_some_and(|a| a.contains("later")),
        "{decided:#?}"
    );
}
