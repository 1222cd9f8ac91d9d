//! What happened is in the record: a turn the user interrupted keeps its answer so far, is
//! marked in the conversation the model is sent next (here, on resuming), and in `sessions
//! show` and `export`; an undo (`sessions undo`, or `/undo` in a chat) appears in `show` and
//! `export` where it happened, with the files it put back.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use golem_llm::Message;
use golem_protocol::{ActionResult, DisplayEvent, SessionAction, SessionEndReason};
use golem_runtime::runner::INTERRUPTED_ANSWER_NOTE;
use golem_session::SessionStore;
use golem_testkit::Wire;
use golem_testkit::mock::{Chunk, MockServer, Reply};
use serde_json::json;

use super::{assistant, ended, input, meta, run, write};
use golem_testkit::cli::{TestEnv, model_for, provider_env, render};

/// How long a test waits for anything (never reached when things work).
const LIMIT: Duration = Duration::from_secs(15);

/// Writes the project `proj/`: a program config, the zone `out` (writes pre-approved) and the
/// worker `main` with the filesystem tools.
fn project(env: &TestEnv) {
    env.write("proj/golem-forge.config.yaml", "{}\n");
    env.mkdir("proj/out");
    env.write(
        "proj/main.worker",
        "---\nname: main\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: \
         { create: preApproved, write: preApproved }\ntoolsets:\n  filesystem: {}\n---\nYou are \
         main.\n",
    );
}

/// `golem-forge ARGS` in `proj/`, `wire`'s provider pointed at `server`.
fn in_proj(env: &TestEnv, wire: Wire, server: &MockServer, args: &[&str]) -> String {
    render(
        &env.command()
            .current_dir(env.path().join("proj"))
            .args(args)
            .envs(provider_env(wire, server))
            .output()
            .unwrap(),
    )
}

/// The id of the one session of `proj`.
fn only_session(env: &TestEnv) -> String {
    let sessions = SessionStore::new(&env.path().join("proj")).list().unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].id.clone()
}

/// A reply that streams the first half of `text`, then nothing more until interrupted.
fn stalled(wire: Wire, text: &str) -> Reply {
    wire.text_stalled(text, Chunk::Hang)
}

#[test]
fn an_interrupted_turn_keeps_its_answer_so_far_and_says_so_to_the_model_and_in_the_record() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env);
        let server =
            MockServer::start_blocking(vec![stalled(wire, "Once upon a time. It never ever ends")]);
        server.set_fallback(wire.text("Where were we?"));
        let mut child = env
            .std_command()
            .args(["run", "proj/main.worker", "tell me a story", "--json"])
            .args(["--model", model_for(wire)])
            .envs(provider_env(wire, &server))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Interrupted once the first half of the answer is out.
        let (lines_tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if lines_tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        loop {
            let line = lines
                .recv_timeout(LIMIT)
                .unwrap_or_else(|_| panic!("{wire:?}: the answer never streamed"));
            if line.contains("\"streaming\"") && line.contains("Once upon") {
                break;
            }
        }
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(child.wait());
        });
        let code = done.recv_timeout(LIMIT).unwrap().unwrap().code();
        assert_eq!(code, Some(130), "{wire:?}");
        let id = only_session(&env);

        // show and export: the answer so far, then the interrupt.
        let shown = in_proj(&env, wire, &server, &["sessions", "show", &id]);
        // The turn's trace id has a block of its own, after the input.
        let (trace, shown) = match shown.split_once("\n\ntrace ") {
            Some((before, after)) => {
                let (id, rest) = after.split_once('\n').unwrap();
                (id.to_owned(), format!("{before}\n{rest}"))
            }
            None => panic!("{wire:?}: no trace block: {shown}"),
        };
        assert_eq!(trace.len(), 32, "{wire:?}: {trace}");
        assert!(
            shown.contains(
                "user\n  tell me a story\n\nassistant\n  Once upon a time.\n\ninterrupted by \
                 the user\n\nended: interrupted"
            ),
            "{wire:?}: {shown}"
        );
        let report = in_proj(&env, wire, &server, &["sessions", "export", &id]);
        assert!(
            report.contains(
                "> tell me a story\n\n### Assistant\n\nOnce upon a time.\n\n### Interrupted by \
                 the user\n"
            ),
            "{wire:?}: {report}"
        );

        // The model's next request has the answer so far and the note after it, then the
        // next input.
        let resumed = in_proj(&env, wire, &server, &["sessions", "resume", &id, "go on"]);
        assert!(resumed.contains("Where were we?"), "{wire:?}: {resumed}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{wire:?}");
        let body = requests[1].body.to_string();
        let at = |needle: &str| {
            body.find(needle)
                .unwrap_or_else(|| panic!("{wire:?}: no {needle:?} in {body}"))
        };
        assert!(at("tell me a story") < at("Once upon a time."), "{body}");
        assert!(
            at("Once upon a time.") < at(INTERRUPTED_ANSWER_NOTE),
            "{body}"
        );
        assert!(at(INTERRUPTED_ANSWER_NOTE) < at("go on"), "{body}");
        assert!(!body.contains("It never ever ends"), "{body}");
    }
}

#[test]
fn sessions_undo_appears_in_show_and_export_with_the_files_put_back() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env);
    env.write("proj/out/a.txt", "old a\n");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "new a\n"}),
        )]),
        wire.tool_calls(&[(
            "call_2",
            "write_file",
            json!({"path": "/out/b.txt", "content": "new b\n"}),
        )]),
        wire.text("Wrote them."),
    ]);
    let ran = in_proj(
        &env,
        wire,
        &server,
        &["run", "main.worker", "write", "--model", model_for(wire)],
    );
    assert!(ran.ends_with("[exit status: 0]\n"), "{ran}");
    let id = only_session(&env);
    let undone = in_proj(&env, wire, &server, &["sessions", "undo", &id]);
    assert!(undone.ends_with("[exit status: 0]\n"), "{undone}");
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old a\n"));
    assert_eq!(
        env.read("proj/out/b.txt"),
        None,
        "the file the turn made is gone"
    );

    // What was there is put back; what the turn made is removed, and said so.
    let shown = in_proj(&env, wire, &server, &["sessions", "show", &id]);
    assert!(
        shown.contains(
            "ended: completed\n\nundo\n  undid turn 1: /out/a.txt put back; /out/b.txt removed\n"
        ),
        "{shown}"
    );
    let report = in_proj(&env, wire, &server, &["sessions", "export", &id]);
    assert!(
        report.contains("\n### Undo\n\n> undid turn 1: /out/a.txt put back; /out/b.txt removed\n"),
        "{report}"
    );
}

#[test]
fn a_chat_undo_appears_between_the_turns_it_came_between_and_a_refused_one_does_not() {
    // What a chat's `/undo` records: the model's note and the `actionResult`.
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    let undo = |ok: bool, message: &str| {
        DisplayEvent::ActionResult(ActionResult {
            request_id: Some("r1".into()),
            action: SessionAction::Undo,
            ok,
            message: message.into(),
        })
        .into()
    };
    write(
        &store,
        "20261128-100000-0d0e",
        meta("scribe", "test:default", "chat", "2026-11-28T10:00:00Z"),
        &[
            input("change things"),
            assistant("Changed a.txt and made.txt.", &[]),
            Message::user("[The user undid the file changes of turn 1: …]").into(),
            undo(true, "undid turn 1: /out/a.txt, /out/made.txt put back"),
            undo(false, "nothing to undo: every turn is undone already"),
            input("what now?"),
            assistant("Nothing.", &[]),
            ended(SessionEndReason::Completed, None),
        ],
    );
    let shown = run(&env, &["sessions", "show", "20261128-100000-0d0e"]);
    assert!(
        shown.contains(
            "assistant\n  Changed a.txt and made.txt.\n\nundo\n  undid turn 1: /out/a.txt, \
             /out/made.txt put back\n\nuser\n  what now?"
        ),
        "{shown}"
    );
    assert!(!shown.contains("nothing to undo"), "{shown}");
    let report = run(&env, &["sessions", "export", "20261128-100000-0d0e"]);
    assert!(
        report.contains(
            "\n### Undo\n\n> undid turn 1: /out/a.txt, /out/made.txt put back\n\n## Turn 2: user"
        ),
        "{report}"
    );
}
