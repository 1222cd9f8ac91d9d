//! The session host driven with protocol messages only, as a browser page or a script would:
//! no terminal. A whole session (input, streamed answer, an approval answered with edited
//! arguments, the tool's result, a model switch, the end) and what its transcript keeps; the
//! headless denial when no front end can answer; questions answered while a turn waits; and
//! an interrupted end that does not wait for the turn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use golem_protocol::{
    ActionEvent, ApprovalResponse, DisplayEvent, RememberScope, SessionAction, SessionEndReason,
    ToolStatus, TurnStatus,
};
use golem_runtime::host::{Attachment, HostOptions, HostWorker, SessionHost};
use golem_runtime::session::{SessionStore, TranscriptEntry};
use golem_testkit::mock::MockServer;
use golem_testkit::openai;
use serde_json::{Value, json};

/// How long any one expected event may take.
const WAIT: Duration = Duration::from_secs(20);

pub(crate) use golem_testkit::program::mock_program as program;

pub(crate) fn options(worker: &Path) -> HostOptions {
    HostOptions {
        keeps_history: true,
        ..HostOptions::new(HostWorker::File(worker.to_owned()))
    }
}

/// Appends `text` to the program config of the program in `dir`.
fn append_config(dir: &tempfile::TempDir, text: &str) {
    let config = dir.path().join("golem-forge.config.yaml");
    let mut current = std::fs::read_to_string(&config).unwrap();
    current.push_str(text);
    std::fs::write(&config, current).unwrap();
}

/// Reads events until one matches `want`; returns it and every event before it.
pub(crate) async fn until(
    ui: &mut Attachment,
    want: impl Fn(&DisplayEvent) -> bool,
) -> (DisplayEvent, Vec<DisplayEvent>) {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(WAIT, ui.recv())
            .await
            .unwrap_or_else(|_| panic!("no such event in time; saw {seen:#?}"))
            .unwrap_or_else(|| panic!("the session closed; saw {seen:#?}"));
        if want(&event) {
            return (event, seen);
        }
        seen.push(event);
    }
}

fn write_call(content: &str) -> Value {
    json!({"path": "/out/a.txt", "content": content})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_through_the_host_with_protocol_messages_only() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("proposed\n"))]),
        openai::text("Saved it."),
        openai::text("The second model speaks."),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();

    let (started, _) = until(&mut ui, |e| {
        matches!(e, DisplayEvent::SessionStarted { .. })
    })
    .await;
    let DisplayEvent::SessionStarted {
        session_id, model, ..
    } = started
    else {
        unreachable!()
    };
    assert_eq!(model, "mock:m1");

    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save a note".into(),
    });
    let (asked, before) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
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
        !dir.path().join("out/a.txt").exists(),
        "nothing is written before the answer"
    );
    let mut response = ApprovalResponse::approve(request.request_id.clone());
    response.modified_args = Some(write_call("edited\n"));
    ui.send(ActionEvent::ApprovalResponse(response));

    let (result, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ToolResult { .. })).await;
    let DisplayEvent::ToolResult { status, .. } = result else {
        unreachable!()
    };
    assert_eq!(status, ToolStatus::Success);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/a.txt")).unwrap(),
        "edited\n",
        "the edited arguments ran"
    );
    let (ended, before) = until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
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
    ui.send(ActionEvent::SetModel {
        request_id: Some("m".into()),
        model: "mock:m2".into(),
    });
    let (switched, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ActionResult(_))).await;
    let DisplayEvent::ActionResult(switched) = switched else {
        unreachable!()
    };
    assert_eq!(
        (switched.request_id.as_deref(), switched.action, switched.ok),
        (Some("m"), SessionAction::SetModel, true)
    );
    assert_eq!(switched.message, "model: mock:m2");
    ui.send(ActionEvent::GetStatus {
        request_id: Some("s".into()),
    });
    let (status, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionStatus(_))).await;
    let DisplayEvent::SessionStatus(status) = status else {
        unreachable!()
    };
    assert_eq!(status.model, "mock:m2");
    assert_eq!(status.session_id, session_id);
    assert_eq!(status.messages, 4, "input, tool call, tool result, answer");
    assert!(!status.busy);
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "and now?".into(),
    });
    until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["model"], "m1");
    assert_eq!(requests[2].body["model"], "m2");

    ui.send(ActionEvent::EndSession { reason: None });
    let (end, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
    assert!(
        matches!(&end, DisplayEvent::SessionEnded { reason: SessionEndReason::Completed, message: Some(m), .. } if m == "The second model speaks."),
        "{end:?}"
    );
    running.closed().await;

    // The transcript holds the tool call once, with its three sets of arguments.
    let transcript = SessionStore::new(dir.path()).load(&session_id).unwrap();
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
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("x\n"))]),
        openai::text("Could not."),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(false);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save".into(),
    });
    let (result, seen) = until(&mut ui, |e| matches!(e, DisplayEvent::ToolResult { .. })).await;
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
    assert!(!dir.path().join("out/a.txt").exists());
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_are_answered_while_a_turn_waits_and_an_interrupted_end_does_not_wait() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("x\n"))]),
        openai::text("never sent"),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save".into(),
    });
    until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
    // The turn waits for an answer; the host still answers questions.
    ui.send(ActionEvent::GetStatus { request_id: None });
    let (status, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionStatus(_))).await;
    assert!(matches!(status, DisplayEvent::SessionStatus(s) if s.busy));
    ui.send(ActionEvent::ListManualTools {
        request_id: Some("t".into()),
    });
    let (tools, _) = until(&mut ui, |e| {
        matches!(e, DisplayEvent::ManualToolsAvailable { .. })
    })
    .await;
    assert!(
        matches!(tools, DisplayEvent::ManualToolsAvailable { request_id: Some(id), .. } if id == "t")
    );
    ui.send(ActionEvent::EndSession {
        reason: Some(SessionEndReason::Interrupted),
    });
    let (end, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
    assert!(matches!(
        end,
        DisplayEvent::SessionEnded {
            reason: SessionEndReason::Interrupted,
            ..
        }
    ));
    tokio::time::timeout(WAIT, running.closed()).await.unwrap();
    assert!(!dir.path().join("out/a.txt").exists());
    let id = SessionStore::new(dir.path()).list().unwrap()[0].id.clone();
    let transcript = SessionStore::new(dir.path()).load(&id).unwrap();
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
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("x\n"))]),
        openai::text("Done."),
    ])
    .await;
    let (_dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save".into(),
    });
    let (asked, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    let mut response = ApprovalResponse::approve(request.request_id);
    response.remember = RememberScope::Session;
    ui.send(ActionEvent::ApprovalResponse(response));
    until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    ui.send(ActionEvent::ListApprovals { request_id: None });
    let (listed, _) = until(&mut ui, |e| {
        matches!(e, DisplayEvent::ApprovalsRemembered { .. })
    })
    .await;
    let DisplayEvent::ApprovalsRemembered { approvals, .. } = listed else {
        unreachable!()
    };
    assert_eq!(approvals.len(), 1);
    assert_eq!(
        (approvals[0].index, approvals[0].tool_name.as_str()),
        (1, "write_file")
    );
    ui.send(ActionEvent::ForgetApprovals {
        request_id: None,
        index: Some(2),
    });
    let (refused, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ActionResult(_))).await;
    assert!(
        matches!(&refused, DisplayEvent::ActionResult(r) if !r.ok && r.message == "no remembered approval number 2"),
        "{refused:?}"
    );
    ui.send(ActionEvent::ForgetApprovals {
        request_id: None,
        index: Some(1),
    });
    let (forgot, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ActionResult(_))).await;
    assert!(
        matches!(&forgot, DisplayEvent::ActionResult(r) if r.ok),
        "{forgot:?}"
    );
    ui.send(ActionEvent::ListApprovals { request_id: None });
    let (listed, _) = until(&mut ui, |e| {
        matches!(e, DisplayEvent::ApprovalsRemembered { .. })
    })
    .await;
    assert!(
        matches!(listed, DisplayEvent::ApprovalsRemembered { approvals, .. } if approvals.is_empty())
    );
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_session_interrupts_the_running_turn_and_drops_queued_input() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("x\n"))]),
        openai::text("never sent"),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "save".into(),
    });
    until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "queued behind the approval".into(),
    });
    ui.send(ActionEvent::EndSession { reason: None });
    let (end, seen) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
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
    running.closed().await;
    assert_eq!(server.requests().len(), 1);
    assert!(!dir.path().join("out/a.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prices_from_the_program_config_put_costs_in_usage_turns_status_and_the_end() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "file_exists", json!({"path": "/out/a.txt"}))]),
        openai::text("It does not."),
    ])
    .await;
    let (dir, worker) = program(&server, "");
    // Each mock reply is 10 input and 5 output tokens: $0.001 + $0.001 at these prices.
    append_config(
        &dir,
        "prices:\n  \"mock:m*\": { input: 100, output: 200 }\n",
    );
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "is there a.txt?".into(),
    });
    let (ended, seen) = until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
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
    ui.send(ActionEvent::GetStatus { request_id: None });
    let (status, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionStatus(_))).await;
    let DisplayEvent::SessionStatus(status) = status else {
        unreachable!()
    };
    assert!((status.cost.unwrap() - 0.004).abs() < 1e-12);
    ui.send(ActionEvent::EndSession { reason: None });
    let (end, _) = until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
    assert!(
        matches!(end, DisplayEvent::SessionEnded { cost: Some(c), .. } if (c - 0.004).abs() < 1e-12)
    );
    running.closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_a_price_has_no_cost() {
    let server = MockServer::start(vec![openai::text("Hi.")]).await;
    let (_dir, worker) = program(&server, "");
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "hello".into(),
    });
    let (ended, seen) = until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    assert!(
        seen.iter()
            .all(|e| !matches!(e, DisplayEvent::Usage { cost: Some(_), .. }))
    );
    assert!(matches!(ended, DisplayEvent::TurnEnded { cost: None, .. }));
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
}

/// Appends `notify:` to the program's config: `sh -c` appending the tool and risk to
/// `notified.txt` in the program root.
fn with_notify(dir: &tempfile::TempDir, after_seconds: u64) -> PathBuf {
    let log = dir.path().join("notified.txt");
    append_config(
        dir,
        &format!(
            "notify:\n  command: [sh, -c, 'echo \"$GOLEM_FORGE_TOOL $GOLEM_FORGE_RISK\" >> {}']\n  after_seconds: {after_seconds}\n",
            log.display()
        ),
    );
    log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_command_runs_once_per_approval_that_waits() {
    let server = MockServer::start(vec![
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
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let log = with_notify(&dir, 0);
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "write both".into(),
    });
    for expected_lines in [1, 2] {
        let (asked, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
        let DisplayEvent::ApprovalRequired(request) = asked else {
            unreachable!()
        };
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
        ui.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
            request.request_id,
        )));
    }
    until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "write_file medium\nwrite_file medium\n",
        "once per waiting approval"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_in_time_runs_no_notify_command() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("one\n"))]),
        openai::text("Written."),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    let log = with_notify(&dir, 3600);
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "write".into(),
    });
    let (asked, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    ui.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
        request.request_id,
    )));
    until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
    assert!(!log.exists(), "nobody was nudged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notify_command_that_cannot_start_is_a_warning_and_the_approval_still_waits() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("one\n"))]),
        openai::text("Written."),
    ])
    .await;
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
    append_config(
        &dir,
        "notify: { command: [/nonexistent/notifier], after_seconds: 0 }\n",
    );
    let host = SessionHost::open(options(&worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: "write".into(),
    });
    let (asked, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
    let (warning, _) = until(&mut ui, |e| matches!(e, DisplayEvent::Status { .. })).await;
    assert!(
        matches!(&warning, DisplayEvent::Status { message, .. } if message.contains("`/nonexistent/notifier` could not start")),
        "{warning:?}"
    );
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    ui.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
        request.request_id,
    )));
    let (result, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ToolResult { .. })).await;
    assert!(matches!(
        result,
        DisplayEvent::ToolResult {
            status: ToolStatus::Success,
            ..
        }
    ));
    ui.send(ActionEvent::EndSession { reason: None });
    running.closed().await;
}

#[test]
fn a_session_killed_while_an_approval_waited_asks_it_again_on_resume() {
    let server = MockServer::start_blocking(vec![
        openai::tool_calls(&[("call_1", "write_file", write_call("saved\n"))]),
        openai::text("Saved after the resume."),
    ]);
    let (dir, worker) = program(&server, "      approval: { create: ask }\n");
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
        let host = SessionHost::open(options(&worker)).unwrap();
        let id = host.session_id();
        let mut ui = host.attach(true);
        let _running = host.start();
        ui.send(ActionEvent::UserInput {
            request_id: None,
            content: "save a note".into(),
        });
        until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
        let file = dir.path().join(format!(".golem-forge/sessions/{id}.jsonl"));
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
    first.shutdown_background();

    // The resumed session asks the same call again before the new input.
    let second = runtime();
    second.block_on(async {
        let host = SessionHost::open(HostOptions {
            worker: HostWorker::Resume {
                program_root: dir.path().to_owned(),
                id: id.clone(),
            },
            ..options(&worker)
        })
        .unwrap();
        let mut ui = host.attach(true);
        let running = host.start();
        ui.send(ActionEvent::UserInput {
            request_id: None,
            content: "go on".into(),
        });
        let (asked, _) = until(&mut ui, |e| matches!(e, DisplayEvent::ApprovalRequired(_))).await;
        let DisplayEvent::ApprovalRequired(request) = asked else {
            unreachable!()
        };
        assert_eq!(request.tool_call_id, "call_1");
        assert_eq!(request.args, write_call("saved\n"));
        ui.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
            request.request_id,
        )));
        let (ended, _) = until(&mut ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
        assert!(
            matches!(&ended, DisplayEvent::TurnEnded { status: TurnStatus::Completed, response: Some(r), .. } if r == "Saved after the resume."),
            "{ended:?}"
        );
        ui.send(ActionEvent::EndSession { reason: None });
        running.closed().await;
    });
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/a.txt")).unwrap(),
        "saved\n"
    );
    // The model sees the call's result, then the new input.
    let requests = server.requests();
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
    let transcript = SessionStore::new(dir.path()).load(&id).unwrap();
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
