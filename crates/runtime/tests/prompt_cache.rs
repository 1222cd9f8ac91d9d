//! Prompt caching through the session host: every model request of a session carries the
//! session's id as its cache key (OpenAI's `prompt_cache_key`), a new session gets its own,
//! and a resumed session sends the same key and a prompt that starts with exactly what the
//! session sent before (same tools, same instructions, same messages), so that the cache
//! written before the resume is read after it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use golem_protocol::{ActionEvent, DisplayEvent};
use golem_runtime::host::{Attachment, HostOptions, HostWorker, SessionHost};
use golem_testkit::mock::MockServer;
use golem_testkit::openai;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// A program whose `openai` provider is the mock (a definition with a built-in's name replaces
/// it), and `main.worker` with the filesystem tools.
fn program(server: &MockServer) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("golem-forge.config.yaml"),
        format!(
            "providers:\n  openai:\n    base_url: {}/v1\n",
            server.base_url
        ),
    )
    .unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    let worker = root.join("main.worker");
    std::fs::write(
        &worker,
        "---\nname: main\nmodel: openai:m1\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n\
         toolsets:\n  filesystem: {}\n---\nYou are the main worker.\n",
    )
    .unwrap();
    (dir, worker)
}

fn options(worker: HostWorker) -> HostOptions {
    HostOptions {
        keeps_history: true,
        ..HostOptions::new(worker)
    }
}

async fn until(ui: &mut Attachment, want: impl Fn(&DisplayEvent) -> bool) -> DisplayEvent {
    loop {
        let event = tokio::time::timeout(WAIT, ui.recv())
            .await
            .expect("the event in time")
            .expect("the session open");
        if want(&event) {
            return event;
        }
    }
}

/// Sends `input` and waits for the end of its turn.
async fn turn(ui: &mut Attachment, input: &str) {
    ui.send(ActionEvent::UserInput {
        request_id: None,
        content: input.into(),
    });
    until(ui, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
}

/// Opens a session, waits for `sessionStarted` and returns the host's attachment, its running
/// session and the session id.
async fn open(worker: HostWorker) -> (Attachment, golem_runtime::host::RunningSession, String) {
    let host = SessionHost::open(options(worker)).unwrap();
    let mut ui = host.attach(true);
    let running = host.start();
    let started = until(&mut ui, |e| {
        matches!(e, DisplayEvent::SessionStarted { .. })
    })
    .await;
    let DisplayEvent::SessionStarted { session_id, .. } = started else {
        unreachable!()
    };
    (ui, running, session_id)
}

async fn end(mut ui: Attachment, running: golem_runtime::host::RunningSession) {
    ui.send(ActionEvent::EndSession { reason: None });
    until(&mut ui, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
    tokio::time::timeout(WAIT, running.closed()).await.unwrap();
}

fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_one_cache_key_and_a_resumed_session_the_same_prefix() {
    let server = MockServer::start(vec![
        openai::text("one"),
        openai::text("two"),
        openai::text("fresh"),
        openai::text("resumed"),
    ])
    .await;
    let (dir, worker) = program(&server);

    let (mut ui, running, first_id) = open(HostWorker::File(worker)).await;
    turn(&mut ui, "first").await;
    turn(&mut ui, "second").await;
    ui.send(ActionEvent::NewSession { request_id: None });
    let started = until(&mut ui, |e| {
        matches!(e, DisplayEvent::SessionStarted { .. })
    })
    .await;
    let DisplayEvent::SessionStarted {
        session_id: second_id,
        ..
    } = started
    else {
        unreachable!()
    };
    assert_ne!(second_id, first_id);
    turn(&mut ui, "another").await;
    end(ui, running).await;

    let (mut ui, running, resumed_id) = open(HostWorker::Resume {
        program_root: dir.path().to_owned(),
        id: first_id.clone(),
    })
    .await;
    assert_eq!(resumed_id, first_id);
    turn(&mut ui, "third").await;
    end(ui, running).await;

    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 4);
    let keys: Vec<&Value> = bodies.iter().map(|b| &b["prompt_cache_key"]).collect();
    assert_eq!(
        keys,
        [
            &json!(first_id),
            &json!(first_id),
            &json!(second_id),
            &json!(first_id)
        ],
        "one key per session, the same after a resume"
    );
    for body in &bodies[1..] {
        assert!(!bodies[0]["tools"].as_array().unwrap().is_empty());
        assert_eq!(
            body["tools"], bodies[0]["tools"],
            "tools byte-stable, same order"
        );
        assert_eq!(messages(body)[0], messages(&bodies[0])[0], "instructions");
    }
    // Each request of the first session starts with the one before (and the answer to it).
    let (before, after) = (messages(&bodies[1]), messages(&bodies[3]));
    assert_eq!(&after[..before.len()], before);
    assert_eq!(
        after[before.len()],
        json!({"role": "assistant", "content": "two"})
    );
    assert_eq!(
        &messages(&bodies[1])[..messages(&bodies[0]).len()],
        messages(&bodies[0])
    );
}

#[test]
fn the_same_worker_in_two_places_sends_the_same_tools_and_instructions() {
    // The same worker at two paths gives the same instructions: nothing machine-specific is
    // added to what is cached.
    let server = MockServer::start_blocking(Vec::new());
    let (_a, one) = program(&server);
    let (_b, two) = program(&server);
    let first = SessionHost::open(options(HostWorker::File(one))).unwrap();
    let second = SessionHost::open(options(HostWorker::File(two))).unwrap();
    assert_eq!(
        first.definition().instructions,
        second.definition().instructions
    );
    let tools = |host: &SessionHost| {
        host.registry()
            .llm_definitions()
            .into_iter()
            .map(|t| serde_json::to_string(&t).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(tools(&first), tools(&second));
    assert!(Path::new(&first.definition().path) != Path::new(&second.definition().path));
}
