//! The session host driven with protocol messages only, as a browser page or a script would:
//! no terminal. A whole session (input, streamed answer, an approval answered with edited
//! arguments, the tool's result, a model switch, the end) and what its transcript keeps; the
//! headless denial when no front end can answer; questions answered while a turn waits; and
//! an interrupted end that does not wait for the turn.

use std::path::PathBuf;
use std::time::Duration;

use golem_protocol::{
    ActionEvent, ApprovalResponse, ContextFill, DisplayEvent, RememberScope, SessionAction,
    SessionEndReason, ToolStatus, TurnStatus,
};
use golem_runtime::host::{HostOptions, HostWorker};
use golem_session::{SessionStore, TranscriptEntry};
use golem_testkit::openai;
use serde_json::{Value, json};

use crate::scenario::{Program, Scenario, WAIT};

pub(crate) fn write_call(content: &str) -> Value {
    json!({"path": "/out/a.txt", "content": content})
}

/// A program whose `out` zone asks before a file is created, and a model that asks to write
/// `/out/a.txt` with `content`, then answers `answer`.
async fn one_write(content: &str, answer: &str) -> Program {
    Scenario::new(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call(content))]),
        openai::text(answer),
    ])
    .ask_to_create()
    .build()
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_through_the_host_with_protocol_messages_only() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("proposed\n"))]),
        openai::text("Saved it."),
        openai::text("The second model speaks."),
    ])
    .ask_to_create()
    .build()
    .await;
    let mut s = program.start();

    let (started, _) = s
        .until(|e| matches!(e, DisplayEvent::SessionStarted { .. }))
        .await;
    let DisplayEvent::SessionStarted {
        session_id, model, ..
    } = started
    else {
        unreachable!()
    };
    assert_eq!(model, "mock:m1");

    s.input("save a note");
    let (asked, before) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalRequired(_)))
        .await;
    assert!(
        matches!(
            before.first(),
            Some(DisplayEvent::Message { message, .. })
                if message.role == golem_protocol::Role::User && message.content == "save a note"
        ),
        "the turn starts with the input, echoed for every front end: {before:#?}"
    );
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    assert_eq!(request.tool_name, "write_file");
    assert_eq!(request.args, write_call("proposed\n"));
    assert!(
        request.preview.is_some(),
        "a write is previewed as a diff: {request:?}"
    );
    assert!(
        !program.path("out/a.txt").exists(),
        "nothing is written before the answer"
    );
    let mut response = ApprovalResponse::approve(request.request_id.clone());
    response.modified_args = Some(write_call("edited\n"));
    s.send(ActionEvent::ApprovalResponse(response));

    let (result, _) = s
        .until(|e| matches!(e, DisplayEvent::ToolResult { .. }))
        .await;
    let DisplayEvent::ToolResult { status, .. } = result else {
        unreachable!()
    };
    assert_eq!(status, ToolStatus::Success);
    assert_eq!(
        std::fs::read_to_string(program.path("out/a.txt")).unwrap(),
        "edited\n",
        "the edited arguments ran"
    );
    let (ended, before) = s.turn_ended().await;
    let streamed: String = before
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Streaming { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Saved it.");
    assert!(
        matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::Completed, response: Some(r), .. } if r == "Saved it."),
        "{ended:?}"
    );

    // A model switch is an action too; the next turn goes to the new model.
    s.send(ActionEvent::SetModel {
        request_id: Some("m".into()),
        model: "mock:m2".into(),
    });
    let switched = s.action_result().await;
    assert_eq!(
        (switched.request_id.as_deref(), switched.action, switched.ok),
        (Some("m"), SessionAction::SetModel, true)
    );
    assert_eq!(switched.message, "model: mock:m2");
    s.send(ActionEvent::GetStatus {
        request_id: Some("s".into()),
    });
    let (status, _) = s
        .until(|e| matches!(e, DisplayEvent::SessionStatus(_)))
        .await;
    let DisplayEvent::SessionStatus(status) = status else {
        unreachable!()
    };
    assert_eq!(status.model, "mock:m2");
    assert_eq!(status.session_id, session_id);
    assert_eq!(status.messages, 4, "input, tool call, tool result, answer");
    assert!(!status.busy);
    s.input("and now?");
    s.turn_ended().await;
    let requests = program.server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["model"], "m1");
    assert_eq!(requests[2].body["model"], "m2");

    let (end, _) = s.end_with(None).await;
    assert!(
        matches!(&end, DisplayEvent::SessionEnded { reason: SessionEndReason::Completed, message: Some(m), .. } if m == "The second model speaks."),
        "{end:?}"
    );
    s.closed().await;

    // The transcript holds the tool call once, with its three sets of arguments.
    let transcript = program.transcript(&session_id);
    let calls: Vec<_> = transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "{:#?}", transcript.entries);
    let call = calls[0];
    assert_eq!(call.tool_call_id, "call_1");
    assert_eq!(call.proposed_args, write_call("proposed\n"));
    assert_eq!(call.approved_args, Some(write_call("edited\n")));
    assert_eq!(call.executed_args, Some(write_call("edited\n")));
    assert_eq!(call.status, ToolStatus::Success);
    assert!(call.value.is_some(), "the record keeps the result");
    let events_about_the_call = transcript
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e,
                TranscriptEntry::Event {
                    event: DisplayEvent::ToolStarted { .. } | DisplayEvent::ToolResult { .. }
                }
            )
        })
        .count();
    assert_eq!(events_about_the_call, 0, "the call is not recorded twice");
    let echoes = transcript
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e,
                TranscriptEntry::Event {
                    event: DisplayEvent::Message { .. }
                }
            )
        })
        .count();
    assert_eq!(
        echoes, 0,
        "the input is its `input` entry, not an event too"
    );
    assert!(matches!(
        transcript.entries.last(),
        Some(TranscriptEntry::Ended {
            reason: SessionEndReason::Completed,
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_front_end_that_answers_the_call_is_denied_with_the_headless_message() {
    let program = one_write("x\n", "Could not.").await;
    let mut s = program.start_headless();
    s.input("save");
    let (result, seen) = s
        .until(|e| matches!(e, DisplayEvent::ToolResult { .. }))
        .await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, DisplayEvent::ApprovalRequired(_))),
        "nobody is asked: {seen:#?}"
    );
    let DisplayEvent::ToolResult { status, value, .. } = result else {
        unreachable!()
    };
    assert_eq!(status, ToolStatus::Denied);
    assert!(
        value.to_model_text().contains("no terminal is attached"),
        "{value:?}"
    );
    assert!(!program.path("out/a.txt").exists());
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_are_answered_while_a_turn_waits_and_an_interrupted_end_does_not_wait() {
    let program = one_write("x\n", "never sent").await;
    let mut s = program.start();
    s.input("save");
    s.approval().await;
    // The turn waits for an answer; the host still answers questions.
    let status = s.status().await;
    assert!(status.busy);
    s.send(ActionEvent::ListManualTools {
        request_id: Some("t".into()),
    });
    let (tools, _) = s
        .until(|e| matches!(e, DisplayEvent::ManualToolsAvailable { .. }))
        .await;
    assert!(
        matches!(tools, DisplayEvent::ManualToolsAvailable { request_id: Some(id), .. } if id == "t")
    );
    let (end, _) = s.end_with(Some(SessionEndReason::Interrupted)).await;
    assert!(matches!(
        end,
        DisplayEvent::SessionEnded {
            reason: SessionEndReason::Interrupted,
            ..
        }
    ));
    tokio::time::timeout(WAIT, s.closed()).await.unwrap();
    assert!(!program.path("out/a.txt").exists());
    let id = SessionStore::new(program.dir.path()).list().unwrap()[0]
        .id
        .clone();
    let transcript = program.transcript(&id);
    assert!(matches!(
        transcript.entries.last(),
        Some(TranscriptEntry::Ended {
            reason: SessionEndReason::Interrupted,
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remembered_approvals_are_listed_and_forgotten_by_number() {
    let program = one_write("x\n", "Done.").await;
    let mut s = program.start();
    s.input("save");
    let request = s.approval().await;
    let mut response = ApprovalResponse::approve(request.request_id);
    response.remember = RememberScope::Session;
    s.send(ActionEvent::ApprovalResponse(response));
    s.turn_ended().await;
    s.send(ActionEvent::ListApprovals { request_id: None });
    let (listed, _) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalsRemembered { .. }))
        .await;
    let DisplayEvent::ApprovalsRemembered { approvals, .. } = listed else {
        unreachable!()
    };
    assert_eq!(approvals.len(), 1);
    assert_eq!(
        (approvals[0].index, approvals[0].tool_name.as_str()),
        (1, "write_file")
    );
    s.send(ActionEvent::ForgetApprovals {
        request_id: None,
        index: Some(2),
    });
    let refused = s.action_result().await;
    assert!(
        !refused.ok && refused.message == "no remembered approval number 2",
        "{refused:?}"
    );
    s.send(ActionEvent::ForgetApprovals {
        request_id: None,
        index: Some(1),
    });
    let forgot = s.action_result().await;
    assert!(forgot.ok, "{forgot:?}");
    s.send(ActionEvent::ListApprovals { request_id: None });
    let (listed, _) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalsRemembered { .. }))
        .await;
    assert!(
        matches!(listed, DisplayEvent::ApprovalsRemembered { approvals, .. } if approvals.is_empty())
    );
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_session_interrupts_the_running_turn_and_drops_queued_input() {
    let program = one_write("x\n", "never sent").await;
    let mut s = program.start();
    s.input("save");
    s.approval().await;
    s.input("queued behind the approval");
    let (end, seen) = s.end_with(None).await;
    assert!(
        matches!(
            end,
            DisplayEvent::SessionEnded {
                reason: SessionEndReason::Interrupted,
                ..
            }
        ),
        "the last turn was interrupted: {end:?}"
    );
    let turns = seen
        .iter()
        .filter(|e| matches!(e, DisplayEvent::TurnEnded { .. }))
        .count();
    assert_eq!(turns, 1, "the queued input never ran: {seen:#?}");
    s.closed().await;
    assert_eq!(program.server.requests().len(), 1);
    assert!(!program.path("out/a.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prices_from_the_program_config_put_costs_in_usage_turns_status_and_the_end() {
    // Each mock reply is 10 input and 5 output tokens: $0.001 + $0.001 at these prices.
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "file_exists", json!({"path": "/out/a.txt"}))]),
        openai::text("It does not."),
    ])
    .config("prices:\n  \"mock:m*\": { input: 100, output: 200 }\n")
    .build()
    .await;
    let mut s = program.start();
    s.input("is there a.txt?");
    let (ended, seen) = s.turn_ended().await;
    let costs: Vec<f64> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Usage { cost, .. } => *cost,
            _ => None,
        })
        .collect();
    assert_eq!(costs.len(), 2, "{seen:#?}");
    assert!(costs.iter().all(|c| (c - 0.002).abs() < 1e-12), "{costs:?}");
    let DisplayEvent::TurnEnded { cost, .. } = ended else {
        unreachable!()
    };
    assert!((cost.unwrap() - 0.004).abs() < 1e-12, "{cost:?}");
    let status = s.status().await;
    assert!((status.cost.unwrap() - 0.004).abs() < 1e-12);
    let (end, _) = s.end_with(None).await;
    assert!(
        matches!(end, DisplayEvent::SessionEnded { cost: Some(c), .. } if (c - 0.004).abs() < 1e-12)
    );
    s.closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_events_say_how_full_the_context_is_against_the_configured_window() {
    // Each mock reply is 10 input and 5 output tokens: 15 in the context after each call.
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "file_exists", json!({"path": "/out/a.txt"}))]),
        openai::text("It does not."),
    ])
    .config("context_windows:\n  \"mock:*\": 1000\n  \"other:*\": 5\n")
    .build()
    .await;
    let mut s = program.start();
    s.input("is there a.txt?");
    let (_, seen) = s.turn_ended().await;
    let fills: Vec<ContextFill> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Usage { context, .. } => *context,
            _ => None,
        })
        .collect();
    let fill = ContextFill {
        used: 15,
        window: 1000,
    };
    assert_eq!(fills, [fill, fill], "{seen:#?}");
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_programs_context_settings_elide_old_results_from_what_is_sent() {
    // Two reads of 12 KB (about 3000 tokens each) in a 3000-token window: the third request
    // passes 60 % of it and sends the first result as a stub, keeping the last turn's.
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "read_file", json!({"path": "/out/a.txt"}))]),
        openai::tool_calls(&[("call_2", "read_file", json!({"path": "/out/b.txt"}))]),
        openai::text("Read both."),
    ])
    .config("context_windows:\n  \"mock:*\": 3000\ncontext: {keep_turns: 1}\n")
    .build()
    .await;
    std::fs::create_dir_all(program.path("out")).unwrap();
    let lines = |c: &str| format!("{}\n", c.repeat(59)).repeat(200);
    std::fs::write(program.path("out/a.txt"), lines("a")).unwrap();
    std::fs::write(program.path("out/b.txt"), lines("b")).unwrap();
    let mut s = program.start();
    s.input("read a and b");
    let (ended, seen) = s.turn_ended().await;
    assert!(
        matches!(
            ended,
            DisplayEvent::TurnEnded {
                status: TurnStatus::Completed,
                ..
            }
        ),
        "{seen:#?}"
    );
    let requests = program.server.requests();
    let sent = openai::tool_results(&requests[2].body);
    assert!(
        sent[0].content.starts_with("[read_file /out/a.txt: ")
            && sent[0]
                .content
                .ends_with(" KB, elided; call it again to see it]"),
        "{:?}",
        sent[0]
    );
    assert!(sent[1].content.contains(&"b".repeat(59)), "{:?}", sent[1]);
    // The request before sent it whole.
    assert!(
        openai::tool_results(&requests[1].body)[0]
            .content
            .contains(&"a".repeat(59))
    );
    assert!(
        seen.iter().any(|e| matches!(
            e,
            DisplayEvent::ContextElided {
                window: 3000,
                results: 1,
                harder: false,
                worker: None,
                ..
            }
        )),
        "{seen:#?}"
    );
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_overflow_fails_the_turn_naming_the_window_and_what_to_do() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 1000 tokens. However, your messages resulted in 1200 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let program = Scenario::new(vec![
        golem_testkit::mock::Reply::json(400, overflow),
        openai::text("never sent"),
    ])
    .config("context_windows:\n  \"mock:*\": 1000\n")
    .build()
    .await;
    let mut s = program.start();
    s.input("hello");
    let (ended, seen) = s.turn_ended().await;
    let DisplayEvent::TurnEnded {
        status: TurnStatus::Failed,
        error: Some(error),
        ..
    } = &ended
    else {
        panic!("{ended:?} {seen:#?}")
    };
    assert!(
        error.contains("maximum context length is 1000 tokens"),
        "{error}"
    );
    assert!(
        error.contains("the context window of mock:m1 (1000 tokens as golem-forge knows it)"),
        "{error}"
    );
    assert!(error.contains("start a new session"), "{error}");
    assert_eq!(
        program.server.requests().len(),
        1,
        "an overflow is not retried"
    );
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_runs_with_the_default_window() {
    let program = Scenario::new(vec![openai::text("Hi.")]).build().await;
    let mut s = program.start();
    s.input("hello");
    let (_, seen) = s.turn_ended().await;
    let windows: Vec<u64> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Usage {
                context: Some(fill),
                ..
            } => Some(fill.window),
            _ => None,
        })
        .collect();
    assert_eq!(windows, [golem_llm::context::DEFAULT_CONTEXT_WINDOW]);
    s.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_a_price_has_no_cost() {
    let program = Scenario::new(vec![openai::text("Hi.")]).build().await;
    let mut s = program.start();
    s.input("hello");
    let (ended, seen) = s.turn_ended().await;
    assert!(
        seen.iter()
            .all(|e| !matches!(e, DisplayEvent::Usage { cost: Some(_), .. }))
    );
    assert!(matches!(ended, DisplayEvent::TurnEnded { cost: None, .. }));
    s.end().await;
}

/// Appends `notify:` to the program's config: `sh -c` appending the tool and risk to
/// `notified.txt` in the program root.
fn with_notify(program: &Program, after_seconds: u64) -> PathBuf {
    let log = program.path("notified.txt");
    program.append_config(&format!(
        "notify:\n  command: [sh, -c, 'echo \"$GOLEM_FORGE_TOOL $GOLEM_FORGE_RISK\" >> {}']\n  after_seconds: {after_seconds}\n",
        log.display()
    ));
    log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_command_runs_once_per_approval_that_waits() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[
            ("call_1", "write_file", write_call("one\n")),
            (
                "call_2",
                "write_file",
                json!({"path": "/out/b.txt", "content": "two\n"}),
            ),
        ]),
        openai::text("Both written."),
    ])
    .ask_to_create()
    .build()
    .await;
    let log = with_notify(&program, 0);
    let mut s = program.start();
    s.input("write both");
    for expected_lines in [1, 2] {
        let request = s.approval().await;
        // The request waits unanswered until its nudge has run.
        let deadline = std::time::Instant::now() + WAIT;
        while std::fs::read_to_string(&log)
            .map(|t| t.lines().count())
            .unwrap_or(0)
            < expected_lines
        {
            assert!(std::time::Instant::now() < deadline, "no nudge");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        s.approve(&request.request_id);
    }
    s.turn_ended().await;
    s.end().await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "write_file medium\nwrite_file medium\n",
        "once per waiting approval"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_in_time_runs_no_notify_command() {
    let program = one_write("one\n", "Written.").await;
    let log = with_notify(&program, 3600);
    let mut s = program.start();
    s.input("write");
    let request = s.approval().await;
    s.approve(&request.request_id);
    s.turn_ended().await;
    s.end().await;
    assert!(!log.exists(), "nobody was nudged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notify_command_that_cannot_start_is_a_warning_and_the_approval_still_waits() {
    let program = one_write("one\n", "Written.").await;
    program.append_config("notify: { command: [/nonexistent/notifier], after_seconds: 0 }\n");
    let mut s = program.start();
    s.input("write");
    let is_status = |e: &DisplayEvent| matches!(e, DisplayEvent::Status { .. });
    // With `after_seconds: 0` the warning may come before the approval's event or after it.
    let (asked, before) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalRequired(_)))
        .await;
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    let warning = match before.into_iter().find(is_status) {
        Some(warning) => warning,
        None => s.until(is_status).await.0,
    };
    assert!(
        matches!(&warning, DisplayEvent::Status { message, .. } if message.contains("`/nonexistent/notifier` could not start")),
        "{warning:?}"
    );
    s.approve(&request.request_id);
    let (result, _) = s
        .until(|e| matches!(e, DisplayEvent::ToolResult { .. }))
        .await;
    assert!(matches!(
        result,
        DisplayEvent::ToolResult {
            status: ToolStatus::Success,
            ..
        }
    ));
    s.end().await;
}

#[test]
fn a_session_killed_while_an_approval_waited_asks_it_again_on_resume() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("saved\n"))]),
        openai::text("Saved after the resume."),
    ])
    .ask_to_create()
    .build_blocking();
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    // The first process asks, and dies before anyone answers.
    let first = runtime();
    let id = first.block_on(async {
        let mut s = program.start();
        let id = s.id().to_owned();
        s.input("save a note");
        s.approval().await;
        let file = program.path(&format!(".golem-forge/sessions/{id}.jsonl"));
        let deadline = std::time::Instant::now() + WAIT;
        while !std::fs::read_to_string(&file)
            .unwrap()
            .contains("approvalRequired")
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the request was never recorded"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        id
    });
    // Its tasks are dropped, not finished (as in a kill), and gone before the resume: the
    // transcript's lock goes with them.
    first.shutdown_timeout(Duration::from_secs(5));

    // The resumed session asks the same call again before the new input.
    let second = runtime();
    second.block_on(async {
        let options = HostOptions {
            worker: HostWorker::Resume {
                program_root: program.dir.path().to_owned(),
                id: id.clone(),
            },
            ..program.options()
        };
        let mut s = program.start_with(options, true);
        s.input("go on");
        let request = s.approval().await;
        assert_eq!(request.tool_call_id, "call_1");
        assert_eq!(request.args, write_call("saved\n"));
        s.approve(&request.request_id);
        let (ended, _) = s.turn_ended().await;
        assert!(
            matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::Completed, response: Some(r), .. } if r == "Saved after the resume."),
            "{ended:?}"
        );
        s.end().await;
    });
    assert_eq!(
        std::fs::read_to_string(program.path("out/a.txt")).unwrap(),
        "saved\n"
    );
    // The model sees the call's result, then the new input.
    let requests = program.server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{messages:#?}"
    );
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[4]["content"], "go on");
    // And the transcript has the call once, settled by the user this time.
    let transcript = program.transcript(&id);
    let calls: Vec<_> = transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolStatus::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_and_dropped_before_it_starts_leaves_nothing_behind() {
    let program = one_write("x", "Done.").await;
    let store = SessionStore::new(program.dir.path());
    let host = golem_runtime::host::SessionHost::open(program.options()).unwrap();
    let id = host.session_id();
    assert_eq!(store.list().unwrap().len(), 1, "open writes the session");
    drop(host);
    assert!(
        store.list().unwrap().is_empty(),
        "dropped unstarted: removed"
    );
    assert!(
        !program
            .path(&format!(".golem-forge/sessions/{id}.jsonl"))
            .exists()
            && !program.path(&format!(".golem-forge/undo/{id}")).exists()
    );
    // A session that started is kept, whatever it did.
    let s = program.start();
    let id = s.id().to_owned();
    s.end().await;
    let listed: Vec<String> = store.list().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, [id]);
}
