//! The session menu's actions: a new session empties the conversation (the next answer appears
//! alone, the model is not sent the old one, a reload shows only the new session, and the old
//! transcript stays on disk); clearing the history keeps the conversation on the page under a
//! divider, and the model no longer sees it; "Undo last turn" puts back what the turn's
//! `write_file` and `run_code` changed, and says so; "Compact" has the model summarise the
//! history, drawn as a compacted line, and the status bar's context fill follows; an elision
//! of old tool results is the info line it always was.

use golem_testkit::mock::MockServer;

use crate::harness::{HEIGHT, Ui, WIDTHS, WIRE, fs_worker, project, tid, worker, write_args};
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
    // Both cards show it: the write's diff and the program's changeset.
    for call in ["call_w", "call_c"] {
        ui.wait_element(&format!(
            "{}[data-call-id=\"{call}\"][data-undone=\"true\"] {}",
            tid("tool-card"),
            tid("undone")
        ));
    }
    // The changeset says it is undone, and is struck through.
    let changes = ui.js(
        "const c = document.querySelector('[data-call-id=\"call_c\"] .changes');
         return [getComputedStyle(c.querySelector('.stream-name'), '::after').content,
                 getComputedStyle(c.lastElementChild).textDecorationLine];",
        vec![],
    );
    assert_eq!(
        changes,
        serde_json::json!(["\" (undone)\"", "line-through"])
    );

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

#[test]
fn an_elision_is_the_info_line_it_always_was() {
    // Two reads of 12 KB (about 3000 tokens each) in a 3000-token window: the third request
    // passes 60 % of it and sends the first result as a stub, keeping the last turn's.
    let env = TestEnv::new();
    let front_matter = format!(
        "{}context: {{ keep_turns: 1 }}\n",
        golem_testkit::cli::fs_front_matter(golem_testkit::cli::WRITES_ASK)
    );
    let worker_path = project(&env, &worker(&front_matter));
    env.write(
        "proj/golem-forge.config.yaml",
        "context_windows:\n  \"openai:gpt-mock\": 3000\n",
    );
    let lines = |c: &str| format!("{}\n", c.repeat(59)).repeat(200);
    env.write("proj/out/a.txt", &lines("a"));
    env.write("proj/out/b.txt", &lines("b"));
    let read = |id: &str, path: &str| {
        WIRE.tool_calls(&[(id, "read_file", serde_json::json!({ "path": path }))])
    };
    let server = MockServer::start_blocking(vec![
        read("call_1", "/out/a.txt"),
        read("call_2", "/out/b.txt"),
        WIRE.text("Read both."),
    ]);
    let ui = Ui::open(
        "an_elision_is_the_info_line_it_always_was",
        &env,
        &server,
        &worker_path,
        &[],
    );
    ui.turn("read a and b", "Read both.");
    let info = format!("{}[data-level=\"info\"]", tid("notice"));
    let line = ui.wait_text(&info, "elided");
    let (percent, rest) = line
        .strip_prefix("context ")
        .and_then(|l| l.split_once(" % full: elided 1 old tool result (about "))
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(percent.parse::<u64>().is_ok_and(|p| p > 60), "{line:?}");
    let tokens = rest
        .strip_suffix(" tokens)")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(tokens.parse::<u64>().is_ok_and(|t| t > 0), "{line:?}");
    // A tab that connects later gets it too.
    ui.reload();
    ui.wait_connected();
    assert_eq!(ui.wait_text(&info, "elided"), line);
}

/// The modes the session menu's mode buttons say are on (`aria-pressed="true"`).
fn modes_on(ui: &Ui) -> Vec<String> {
    let on = ui.js(
        "return [...document.querySelectorAll('[data-testid=\"approval-mode\"][aria-pressed=\"true\"]')]
            .map(b => b.dataset.mode);",
        vec![],
    );
    serde_json::from_value(on).unwrap_or_default()
}

/// Opens the session menu (if it is not open) and waits until `mode`, alone, is pressed, with
/// a check mark drawn before its label; every mode button is inside the viewport.
fn wait_mode_on(ui: &Ui, mode: &str) {
    if !ui.exists(&tid("session-menu")) {
        ui.click(&tid("session-button"));
        ui.wait_element(&tid("session-menu"));
    }
    ui.wait(&format!("{mode} alone pressed in the session menu"), |ui| {
        (modes_on(ui) == [mode]).then_some(())
    });
    let looks = ui.js(
        "const bs = [...document.querySelectorAll('[data-testid=\"approval-mode\"]')];
         return bs.map(b => {
           const r = b.getBoundingClientRect();
           return { mode: b.dataset.mode, check: getComputedStyle(b, '::before').content,
                    inside: r.left >= 0 && r.right <= innerWidth && r.width > 0 };
         });",
        vec![],
    );
    let looks = looks.as_array().expect("the mode buttons");
    assert_eq!(looks.len(), 3, "Ask, Approve all, Deny all: {looks:?}");
    for button in looks {
        let on = button["mode"] == mode;
        let check = button["check"].as_str().unwrap_or_default();
        assert_eq!(check.contains('✓'), on, "{button} ({mode} on)");
        assert_eq!(button["inside"], true, "{button}\n{}", ui.describe());
    }
}

/// Clicks the mode button of `mode` in the open session menu.
fn click_mode(ui: &Ui, mode: &str) {
    ui.click(&format!("{}[data-mode=\"{mode}\"]", tid("approval-mode")));
}

#[test]
fn the_session_menu_shows_which_approval_mode_is_on() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let worker = project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![]);
        server.set_fallback(WIRE.tool_calls(&[(
            "call_w",
            "write_file",
            write_args("/out/a.txt", "a\n"),
        )]));
        let ui = Ui::open(
            &format!("the_session_menu_shows_which_approval_mode_is_on_{width}"),
            &env,
            &server,
            &worker,
            &["--approval", "approve_all"],
        );
        ui.set_viewport(width, HEIGHT);
        // The mode the session started in.
        wait_mode_on(&ui, "approve_all");

        // Switched here: the check mark moves, and the menu stays open to show it.
        click_mode(&ui, "auto_deny");
        wait_mode_on(&ui, "auto_deny");
        ui.wait_text(&tid("notice"), "approval mode: auto_deny");

        // Switched in another tab: this one follows.
        let (first, _second) = ui.open_second_window();
        ui.wait_connected();
        wait_mode_on(&ui, "auto_deny");
        click_mode(&ui, "interactive");
        wait_mode_on(&ui, "interactive");
        ui.switch_to(&first);
        wait_mode_on(&ui, "interactive");

        // And after a reload, from the session's status.
        ui.reload();
        ui.wait_connected();
        wait_mode_on(&ui, "interactive");
        // The mode shown is the mode the session decides by: a write now asks.
        ui.click("[aria-label=\"Close the session menu\"]");
        ui.wait_gone(&tid("session-menu"));
        ui.send("write it");
        ui.wait_element(&format!("{}[data-tool=\"write_file\"]", tid("approval")));
    }
}

/// How the tool card of call `id` shows itself: (`data-undone`, whether an `undone` badge is
/// shown, whether its diff rows are struck through).
fn undone_look(ui: &Ui, id: &str) -> (bool, bool, bool) {
    let look = ui.js(
        "const card = document.querySelector(`[data-testid=\"tool-card\"][data-call-id=\"${arguments[0]}\"]`);
         if (!card) return null;
         const badge = card.querySelector('[data-testid=\"undone\"]');
         const rows = card.querySelector('.diff-rows');
         return [card.dataset.undone === 'true',
                 !!badge && badge.getBoundingClientRect().width > 0 && badge.innerText.trim() === 'undone',
                 !!rows && getComputedStyle(rows).textDecorationLine.includes('line-through')];",
        vec![serde_json::json!(id)],
    );
    serde_json::from_value(look).unwrap_or_else(|e| panic!("the card {id}: {e}\n{}", ui.describe()))
}

/// Waits until the cards of `undone` show as undone and those of `applied` as applied.
fn wait_undone(ui: &Ui, undone: &[&str], applied: &[&str]) {
    ui.wait(
        &format!("cards {undone:?} undone and {applied:?} not"),
        |ui| {
            let ok = undone
                .iter()
                .all(|id| undone_look(ui, id) == (true, true, true))
                && applied
                    .iter()
                    .all(|id| matches!(undone_look(ui, id), (false, false, false)));
            ok.then_some(())
        },
    );
}

#[test]
fn undone_turns_show_their_changes_as_undone_also_after_a_reload() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let worker_path = project(
            &env,
            &worker(
                "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { create: \
                 preApproved, write: preApproved }\ntoolsets:\n  filesystem: {}\n",
            ),
        );
        env.write("proj/out/a.txt", "old a\n");
        let server = MockServer::start_blocking(vec![
            WIRE.tool_calls(&[("call_a", "write_file", write_args("/out/a.txt", "new a\n"))]),
            WIRE.text("One."),
            WIRE.tool_calls(&[
                ("call_b", "write_file", write_args("/out/b.txt", "b\n")),
                (
                    "call_r",
                    "read_file",
                    serde_json::json!({"path": "/out/a.txt"}),
                ),
            ]),
            WIRE.text("Two."),
        ]);
        server.set_fallback(WIRE.text("I see."));
        let ui = Ui::open(
            &format!("undone_turns_show_their_changes_as_undone_{width}"),
            &env,
            &server,
            &worker_path,
            &[],
        );
        ui.set_viewport(width, HEIGHT);
        ui.turn("first", "One.");
        ui.turn("second", "Two.");
        wait_undone(&ui, &[], &["call_a", "call_b", "call_r"]);

        // The last turn's write is undone; the turn before and the read are not.
        session_action(&ui, "undo-turn");
        ui.wait_text(&tid("notice"), "undid turn 2");
        assert!(!env.path().join("proj/out/b.txt").exists());
        wait_undone(&ui, &["call_b"], &["call_a", "call_r"]);
        let card = ui.text(&format!("{}[data-call-id=\"call_b\"]", tid("tool-card")));
        assert!(card.contains("put back"), "{card}");

        // An undo that fails marks nothing more.
        env.write("proj/out/a.txt", "edited outside\n");
        session_action(&ui, "undo-turn");
        ui.wait("the refused undo's notice", |ui| {
            (ui.count(&format!("{}[data-level=\"error\"]", tid("notice"))) == 1).then_some(())
        });
        wait_undone(&ui, &["call_b"], &["call_a", "call_r"]);

        // The turn before, forced by hand: both writes undone, and so they stay after a reload.
        env.write("proj/out/a.txt", "new a\n");
        session_action(&ui, "undo-turn");
        ui.wait_text(&tid("notice"), "undid turn 1");
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old a\n"));
        wait_undone(&ui, &["call_a", "call_b"], &["call_r"]);
        ui.reload();
        ui.wait_connected();
        ui.set_viewport(width, HEIGHT);
        wait_undone(&ui, &["call_a", "call_b"], &["call_r"]);
    }
}
