//! The session menu's actions: a new session empties the conversation (the next answer appears
//! alone, the model is not sent the old one, a reload shows only the new session, and the old
//! transcript stays on disk); clearing the history keeps the conversation on the page under a
//! divider, and the model no longer sees it; "Undo last turn" puts back what the turn's
//! `write_file` and `run_code` changed, and says so.

use golem_testkit::mock::MockServer;

use crate::common::TestEnv;
use crate::harness::{Ui, WIRE, fs_worker, project, tid, worker, write_args};

/// A session that has had one turn (`what is one?` → `First answer.`), whose model answers
/// `Second answer.` to anything after.
fn after_one_turn(name: &str) -> (TestEnv, MockServer, Ui) {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![WIRE.text("First answer.")]);
    server.set_fallback(WIRE.text("Second answer."));
    let ui = Ui::open(name, &env, &server, &worker, &[]);
    ui.turn("what is one?", "First answer.");
    (env, server, ui)
}

/// Opens the session menu and clicks `action` in it.
fn session_action(ui: &Ui, action: &str) {
    ui.click(&tid("session-button"));
    ui.wait_element(&tid("session-menu"));
    ui.click(&tid(action));
}

#[test]
fn a_new_session_empties_the_conversation() {
    let (env, server, ui) = after_one_turn("a_new_session_empties_the_conversation");
    session_action(&ui, "new-session");
    ui.wait_gone(&tid("session-menu"));
    ui.wait("the conversation to empty", |ui| {
        (ui.count(&tid("message")) == 0).then_some(())
    });
    ui.wait_text(&tid("notice"), "new session");
    assert_eq!(ui.last_turn(), None, "no turn yet\n{}", ui.describe());

    ui.turn("what is two?", "Second answer.");
    let alone = |ui: &Ui| {
        assert_eq!(ui.messages("user"), ["what is two?"], "{}", ui.describe());
        assert_eq!(
            ui.messages("assistant"),
            ["Second answer."],
            "{}",
            ui.describe()
        );
    };
    alone(&ui);
    let sent = server.requests()[1].body.to_string();
    assert!(sent.contains("what is two?"), "{sent}");
    assert!(
        !sent.contains("what is one?") && !sent.contains("First answer."),
        "the new session starts without history: {sent}"
    );

    ui.reload();
    ui.wait_connected();
    ui.wait_message("assistant", "Second answer.");
    ui.wait_idle();
    alone(&ui);

    let transcripts = env.transcripts("proj");
    assert_eq!(transcripts.len(), 2, "the old session stays on disk");
    let text: Vec<String> = transcripts
        .iter()
        .map(|lines| lines.iter().map(|l| l.to_string()).collect())
        .collect();
    assert_eq!(
        text.iter().filter(|t| t.contains("what is one?")).count(),
        1,
        "{text:?}"
    );
    assert_eq!(
        text.iter().filter(|t| t.contains("what is two?")).count(),
        1,
        "{text:?}"
    );
}

#[test]
fn clearing_the_history_leaves_a_divider() {
    let (_env, server, ui) = after_one_turn("clearing_the_history_leaves_a_divider");
    session_action(&ui, "clear-history");
    let divider = ui.wait_text(&tid("history-cleared"), "conversation cleared");
    assert!(
        divider.contains("the model no longer sees what is above"),
        "{divider:?}"
    );
    assert_eq!(
        ui.messages("assistant"),
        ["First answer."],
        "the conversation stays on the page\n{}",
        ui.describe()
    );

    ui.turn("what is two?", "Second answer.");
    let sent = server.requests()[1].body.to_string();
    assert!(
        sent.contains("what is two?") && !sent.contains("what is one?"),
        "the model no longer sees the cleared turn: {sent}"
    );
    // The divider sits between the two turns, also after a reload.
    ui.reload();
    ui.wait_connected();
    ui.wait_message("assistant", "Second answer.");
    let order = ui.js(
        "return [...document.querySelectorAll('[data-testid=\"message\"], [data-testid=\"history-cleared\"]')]
            .map(e => e.dataset.testid === 'message' ? e.dataset.role : 'divider');",
        vec![],
    );
    assert_eq!(
        order,
        serde_json::json!(["user", "assistant", "divider", "user", "assistant"]),
        "{}",
        ui.describe()
    );
}

#[test]
fn undo_last_turn_puts_back_a_write_and_a_changeset() {
    let env = TestEnv::new();
    let worker_path = project(
        &env,
        &worker(
            "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { create: \
             preApproved, write: preApproved }\ntoolsets:\n  filesystem: {}\n  code: {}\n",
        ),
    );
    env.write("proj/out/a.txt", "old a\n");
    env.write("proj/out/old.txt", "old\n");
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[("call_w", "write_file", write_args("/out/a.txt", "new a\n"))]),
        WIRE.tool_calls(&[(
            "call_c",
            "run_code",
            serde_json::json!({"language": "bash", "code": "echo made > made.txt; echo changed > old.txt"}),
        )]),
        WIRE.text("Done."),
    ]);
    server.set_fallback(WIRE.text("I see."));
    let ui = Ui::open(
        "undo_last_turn_puts_back_a_write_and_a_changeset",
        &env,
        &server,
        &worker_path,
        &[],
    );
    ui.turn("change things", "Done.");
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("new a\n"));
    assert_eq!(env.read("proj/out/made.txt").as_deref(), Some("made\n"));

    session_action(&ui, "undo-turn");
    let said = ui.wait_text(&tid("notice"), "undid turn 1");
    assert!(said.contains("/out/a.txt"), "{said}");
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old a\n"));
    assert_eq!(env.read("proj/out/old.txt").as_deref(), Some("old\n"));
    assert!(!env.path().join("proj/out/made.txt").exists());

    // Again: nothing left, said as an error.
    session_action(&ui, "undo-turn");
    ui.wait_text(&tid("notice"), "nothing to undo");
}
