//! The approval prompt of a model's file write: the box (tool, arguments, diff preview,
//! choices), each answer one key acting at once (no Enter): `y` once, `s` for the session (a
//! second identical call in a later turn is not asked, and `/approvals` lists it), `p` always
//! in this project (a rule for the path, kept in `.golem-forge/approvals.yaml`), `n` then a note
//! the model receives (Enter alone: none), a stray Enter or another key deciding nothing, and
//! `q` stopping the turn.

use super::*;

/// Sends `line` and waits until the approval prompt is ready for an answer.
fn until_asked(chat: &mut Chat, line: &str) -> String {
    chat.send_line(line);
    chat.wait_for(CHOICES);
    chat.wait_prompt_text(ANSWER);
    chat.since()
}

#[test]
fn y_approves_once_and_the_file_is_written() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write("proj/out/a.txt", "old line\n");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "new line\n"),
        )]),
        wire.text("Saved."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = until_asked(&mut chat, "update a.txt");
    let boxed = approval_box(&shown);
    assert!(boxed.starts_with("┌ Approve write_file?"), "{boxed}");
    for expected in ["/out/a.txt", "old line", "new line"] {
        assert!(
            boxed.contains(expected),
            "{expected} missing from the box (arguments and diff preview):\n{boxed}"
        );
    }
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("old line\n"),
        "nothing is written before the answer"
    );
    insta::assert_snapshot!(chat.screen());

    // The key alone, no Enter.
    chat.send("y");
    chat.wait_prompt();
    let shown = chat.since();
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("new line\n"));
    assert!(shown.contains("⏺ write_file"), "{}", chat.dump());
    assert!(shown.contains("Saved."), "{}", chat.dump());
    let status = shown
        .lines()
        .rfind(|l| l.trim_start().starts_with("──"))
        .unwrap_or_else(|| panic!("no status line\n{}", chat.dump()));
    assert!(
        status.contains("tool"),
        "the status counts the tool: {status}"
    );

    let results = wire.tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].tool_call_id, "call_1");
    assert!(!wire.is_error(&results[0]), "{results:?}");
}

#[test]
fn s_remembers_so_an_identical_call_in_a_later_turn_is_not_asked() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write("proj/out/a.txt", "original\n");
    let call = |id| wire.tool_calls(&[(id, "write_file", write_args("/out/a.txt", "same\n"))]);
    let server = MockServer::start_blocking(vec![
        call("call_1"),
        wire.text("Wrote it."),
        call("call_2"),
        wire.text("Wrote it again."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_asked(&mut chat, "write it");
    chat.send("s");
    chat.wait_prompt();
    assert!(chat.since().contains("Wrote it."), "{}", chat.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("same\n"));

    env.write("proj/out/a.txt", "changed behind its back\n");
    let shown = chat.turn("write it again");
    assert!(
        !shown.contains("Approve"),
        "the remembered approval answers the second call:\n{shown}"
    );
    assert!(shown.contains("⏺ write_file"), "{}", chat.dump());
    assert!(shown.contains("Wrote it again."), "{}", chat.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("same\n"));
    assert_eq!(count(&chat.history(), "┌ Approve write_file?"), 1);
    let results = wire.tool_results(&server.requests()[3]);
    let last = results.last().unwrap();
    assert_eq!(last.tool_call_id, "call_2");
    assert!(!wire.is_error(last), "{results:?}");

    let shown = chat.turn("/approvals");
    assert!(
        shown.contains("write_file"),
        "/approvals lists the remembered approval:\n{shown}"
    );
}

#[test]
fn p_keeps_a_project_rule_so_a_later_write_to_the_path_is_not_asked() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "one\n"))]),
        wire.text("Wrote it."),
        wire.tool_calls(&[("call_2", "write_file", write_args("/out/a.txt", "two\n"))]),
        wire.text("Wrote it again."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_asked(&mut chat, "write it");
    chat.send("p");
    chat.wait_prompt();
    let shown = chat.since();
    assert!(
        shown.contains("always approved in this project: write_file"),
        "{}",
        chat.dump()
    );
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("one\n"));
    let rules = env.read("proj/.golem-forge/approvals.yaml").unwrap();
    assert!(
        rules.contains("tool: write_file") && rules.contains("\"/out/a.txt\""),
        "{rules}"
    );

    let shown = chat.turn("write other content");
    assert!(
        !shown.contains("Approve"),
        "the project rule answers the second call:\n{shown}"
    );
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("two\n"));
    let shown = chat.turn("/approvals");
    assert!(
        shown.contains("Project rules (.golem-forge/approvals.yaml)"),
        "/approvals lists the rule:\n{shown}"
    );
}

#[test]
fn n_with_a_note_denies_and_the_model_receives_the_note() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        env.write("proj/out/a.txt", "original\n");
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                write_args("/out/a.txt", "overwritten\n"),
            )]),
            wire.text("Understood, I will not."),
        ]);
        let mut chat = start(&env, wire, &server);
        chat.ready();
        until_asked(&mut chat, "change a.txt");
        chat.send("n");
        chat.wait_prompt_text(NOTE);
        chat.send_line("please write b.txt instead");
        chat.wait_prompt();
        assert!(
            chat.since().contains("Understood, I will not."),
            "{wire:?}\n{}",
            chat.dump()
        );
        assert_eq!(
            env.read("proj/out/a.txt").as_deref(),
            Some("original\n"),
            "{wire:?}"
        );
        let results = wire.tool_results(&server.requests()[1]);
        assert_eq!(results.len(), 1, "{wire:?}: {results:?}");
        assert!(wire.is_error(&results[0]), "{wire:?}: {results:?}");
        let text = wire.result_text(&results[0]);
        assert!(text.starts_with("[DENIED]"), "{wire:?}: {text}");
        assert!(
            text.contains("please write b.txt instead"),
            "{wire:?}: the note reaches the model: {text}"
        );
    }
}

#[test]
fn n_with_an_empty_note_denies_without_one() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", write_args("/out/new.txt", "x"))]),
        wire.text("Fine."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_asked(&mut chat, "make a file");
    chat.send("n");
    chat.wait_prompt_text(NOTE);
    // Enter alone sends no note.
    chat.send("\r");
    chat.wait_prompt();
    assert_eq!(env.read("proj/out/new.txt"), None);
    let results = wire.tool_results(&server.requests()[1]);
    let text = wire.result_text(&results[0]);
    assert!(text.starts_with("[DENIED]"), "{text}");
    assert!(!text.contains("note"), "no empty note is passed on: {text}");
}

#[test]
fn a_stray_enter_or_another_key_decides_nothing_then_n_denies() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", write_args("/out/new.txt", "x"))]),
        wire.text("Not written."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_asked(&mut chat, "make a file");
    // Enter, space, an arrow key and a letter that is no choice: the keys are read in order,
    // so once the letter is answered the others were read and decided nothing.
    chat.send("\r \x1b[Ax");
    chat.wait_for("`x` is not a choice: press y, s, p, n, e or q");
    chat.wait_prompt_text(ANSWER);
    assert_eq!(env.read("proj/out/new.txt"), None, "{}", chat.dump());
    assert_eq!(
        server.requests().len(),
        1,
        "the call still waits for an answer:\n{}",
        chat.dump()
    );
    assert!(!chat.history().contains("⏺ write_file"), "{}", chat.dump());
    chat.send("n");
    assert_eq!(
        chat.wait_for_any(&[NOTE.trim_end(), "Not written."]),
        0,
        "n asks for the note before the turn goes on:\n{}",
        chat.dump()
    );
    chat.wait_prompt_text(NOTE);
    chat.send_line("because");
    chat.wait_prompt();
    assert!(chat.since().contains("Not written."), "{}", chat.dump());
    assert_eq!(env.read("proj/out/new.txt"), None);
    let results = wire.tool_results(&server.requests()[1]);
    let text = wire.result_text(&results[0]);
    assert!(text.starts_with("[DENIED]"), "{text}");
    assert!(
        text.contains("because"),
        "the note reaches the model: {text}"
    );
}

#[test]
fn q_stops_the_turn_and_the_prompt_comes_back() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![wire.tool_calls(&[
        ("call_1", "write_file", write_args("/out/one.txt", "1")),
        ("call_2", "write_file", write_args("/out/two.txt", "2")),
    ])]);
    server.set_fallback(wire.text("Back again."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_asked(&mut chat, "make two files");
    chat.send("q");
    chat.wait_for("interrupted");
    chat.wait_prompt();
    let shown = chat.since();
    assert!(
        !shown.contains("Approve"),
        "the second call is not asked after q:\n{shown}"
    );
    assert_eq!(env.read("proj/out/one.txt"), None);
    assert_eq!(env.read("proj/out/two.txt"), None);
    let shown = chat.turn("still there?");
    assert!(shown.contains("Back again."), "{}", chat.dump());
}
