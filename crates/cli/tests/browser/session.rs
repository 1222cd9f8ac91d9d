//! The session menu's actions: a new session empties the conversation (the next answer appears
//! alone, the model is not sent the old one, a reload shows only the new session, and the old
//! transcript stays on disk); clearing the history keeps the conversation on the page under a
//! divider, and the model no longer sees it; "Undo last turn" puts back what the turn's
//! `write_file` and `run_code` changed, and says so; "Compact" has the model summarise the
//! history, drawn as a compacted line, and the status bar's context fill follows.

use golem_testkit::mock::MockServer;

use crate::harness::{Ui, WIRE, fs_worker, project, tid, worker, write_args};
use golem_testkit::cli::TestEnv;

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

/// Takes the number after `before` in `text` (with its thousands separators) up to `after`.
fn number_between(text: &str, before: &str, after: &str) -> u64 {
    let start = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in {text:?}"))
        + before.len();
    let end = text[start..]
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {text:?}"))
        + start;
    text[start..end]
        .replace(',', "")
        .parse()
        .unwrap_or_else(|e| panic!("a number in {text:?}: {e}"))
}

/// The context fill the status bar shows: (the percent shown, the tokens used of its title).
fn context_fill(ui: &Ui) -> (u64, u64) {
    let shown = ui.text(&tid("context"));
    let title = ui.attr(&tid("context"), "title").unwrap_or_default();
    assert!(title.ends_with(" of 1,000 tokens"), "{title:?}");
    let used = number_between(&title, "", " of");
    assert_eq!(
        shown,
        format!("ctx {} %", used * 100 / 1000),
        "{title:?}\n{}",
        ui.describe()
    );
    (used * 100 / 1000, used)
}

#[test]
fn compacting_draws_a_line_and_the_context_fill_follows() {
    let env = TestEnv::new();
    let worker_path = project(&env, &worker("context: { keep_turns: 1 }\n"));
    env.write(
        "proj/golem-forge.config.yaml",
        "context_windows:\n  \"openai:gpt-mock\": 1000\n",
    );
    let server = MockServer::start_blocking(vec![WIRE.text("First answer.")]);
    server.set_fallback(WIRE.text("Second answer."));
    server.answer_when(
        "[The conversation above is about to be replaced",
        WIRE.text("SUMMARY: one, then two."),
    );
    let ui = Ui::open(
        "compacting_draws_a_line_and_the_context_fill_follows",
        &env,
        &server,
        &worker_path,
        &[],
    );
    assert!(!ui.exists(&tid("context")), "no fill before a model call");
    ui.turn("what is one?", "First answer.");
    ui.wait_element(&tid("context"));
    context_fill(&ui);
    ui.turn("what is two?", "Second answer.");

    session_action(&ui, "compact");
    let line = ui.wait_text(&tid("context-compacted"), "⟲ context compacted (requested)");
    assert!(line.contains(": 2 messages summarised, about "), "{line:?}");
    let said = ui.wait_text(&tid("notice"), "compacted: ");
    let sent = server.requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("about to be replaced"),
        "a summary request: {sent}"
    );
    // The fill is what is left after compacting.
    let after = number_between(&line, "→ ", " tokens");
    ui.wait("the fill to follow the compaction", |ui| {
        (context_fill(ui).1 == after).then_some(())
    });
    let order = ui.js(
        "return [...document.querySelectorAll('[data-testid=\"context-compacted\"], [data-testid=\"notice\"]')]
            .map(e => e.dataset.testid);",
        vec![],
    );
    assert_eq!(
        order.as_array().and_then(|o| o.last()),
        Some(&serde_json::json!("notice")),
        "the answer {said:?} comes after the line: {order}"
    );

    // A cleared history has no fill until the next call.
    session_action(&ui, "clear-history");
    ui.wait_element(&tid("history-cleared"));
    ui.wait_gone(&tid("context"));
    ui.turn("what is three?", "Second answer.");
    ui.wait_element(&tid("context"));
}
