//! `run --approval interactive` at a terminal, in the chat's pseudo-terminal harness
//! (`chat.rs`): the approval box is the chat's, row for row, for the same call; `y` writes the
//! file, `n` with a note denies and the note reaches the model, `e` edits the arguments (checked
//! against the tool's schema), `q` or Ctrl+C stops the run with 130, Ctrl+D denies saying the
//! terminal closed; and with stdout redirected the prompt is asked on stderr, so stdout keeps
//! only the answer.

use super::*;
use crate::chat::{
    ANSWER, CHOICES, Chat, NOTE, WORKER, approval_box, fs_worker, project as chat_project,
    write_args,
};

/// The `run` arguments for `scribe` with `input`, asking at the terminal.
fn run_args(wire: Wire, input: &str) -> Vec<String> {
    [
        "run",
        &format!("proj/{WORKER}.worker"),
        input,
        "--approval",
        "interactive",
        "--model",
        model_for(wire),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `golem-forge run` in the pseudo-terminal.
fn start_run(env: &TestEnv, wire: Wire, server: &MockServer, input: &str) -> Chat {
    let envs: Vec<(&str, String)> = provider_env(wire, server).into_iter().collect();
    let args = run_args(wire, input);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Chat::start(env, &args, &envs)
}

/// Waits until the box is shown and the answer is asked for; returns the box.
fn until_asked(pty: &mut Chat) -> String {
    pty.wait_for(CHOICES);
    pty.wait_prompt_text(ANSWER);
    approval_box(&pty.history()).to_owned()
}

/// A project with the chat's `scribe` (writes to `out` ask) and `out/a.txt`.
fn scribe_project(env: &TestEnv) {
    chat_project(env, &fs_worker());
    env.write("proj/out/a.txt", "old line\n");
}

fn overwrite_model(wire: Wire) -> MockServer {
    MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "new line\n"),
        )]),
        wire.text("Saved."),
    ])
}

#[test]
fn the_box_is_the_chats_and_y_writes_the_file() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    scribe_project(&env);

    let chat_box = {
        let server = overwrite_model(wire);
        let envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
        let worker = format!("proj/{WORKER}.worker");
        let mut chat = Chat::start(&env, &["chat", &worker, "--model", model_for(wire)], &envs);
        chat.wait_for("Type /help for commands");
        chat.wait_prompt_text(&format!("{WORKER}› "));
        chat.send_line("update a.txt");
        until_asked(&mut chat)
        // Dropping the chat kills it before it is answered.
    };
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old line\n"));

    let server = overwrite_model(wire);
    let mut run = start_run(&env, wire, &server, "update a.txt");
    let run_box = until_asked(&mut run);
    assert_eq!(
        run_box,
        chat_box,
        "run shows the chat's box\n{}",
        run.dump()
    );
    for expected in ["/out/a.txt", "old line", "new line"] {
        assert!(run_box.contains(expected), "{expected}:\n{run_box}");
    }
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("old line\n"),
        "nothing is written before the answer"
    );

    run.send("y");
    run.wait_for("Saved.");
    assert_eq!(run.wait_exit(LIMIT), 0, "{}", run.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("new line\n"));
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(!wire.is_error(&results[0]), "{results:?}");
}

#[test]
fn n_with_a_note_denies_and_the_model_receives_the_note() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        scribe_project(&env);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                write_args("/out/a.txt", "overwritten\n"),
            )]),
            wire.text("Understood, I will not."),
        ]);
        let mut run = start_run(&env, wire, &server, "change a.txt");
        until_asked(&mut run);
        run.send("n");
        run.wait_prompt_text(NOTE);
        run.send_line("please write b.txt instead");
        run.wait_for("Understood, I will not.");
        assert_eq!(run.wait_exit(LIMIT), 0, "{wire:?}\n{}", run.dump());
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old line\n"));
        let results = results_sent(wire, &server, 1);
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
fn e_edits_the_arguments_inline_checked_against_the_schema() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    scribe_project(&env);
    let server = overwrite_model(wire);
    let mut run = start_run(&env, wire, &server, "update a.txt");
    until_asked(&mut run);
    run.send("e");
    run.wait_prompt_prefilled("arguments (JSON)› ");
    run.key_clear_line();
    run.send_line(r#"{"path": 1}"#);
    run.wait_for("the arguments do not fit the tool");
    run.wait_prompt_text(ANSWER);
    run.send("e");
    run.wait_prompt_prefilled("arguments (JSON)› ");
    run.key_clear_line();
    run.send_line(r#"{"path": "/out/b.txt", "content": "edited\n"}"#);
    assert_eq!(run.wait_exit(LIMIT), 0, "{}", run.dump());
    assert_eq!(env.read("proj/out/b.txt").as_deref(), Some("edited\n"));
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old line\n"));
}

#[test]
fn q_or_ctrl_c_stops_the_run_with_130_and_nothing_is_written() {
    let wire = Wire::Anthropic;
    for key in ["q", "\x03"] {
        let env = TestEnv::new();
        scribe_project(&env);
        let server = MockServer::start_blocking(vec![wire.tool_calls(&[
            ("call_1", "write_file", write_args("/out/one.txt", "1")),
            ("call_2", "write_file", write_args("/out/two.txt", "2")),
        ])]);
        server.set_fallback(wire.text("Summary: nothing written."));
        let mut run = start_run(&env, wire, &server, "make two files");
        until_asked(&mut run);
        run.send(key);
        run.wait_for("[Interrupted]");
        assert_eq!(run.wait_exit(LIMIT), 130, "{key:?}\n{}", run.dump());
        assert_eq!(
            run.history().matches("┌ Approve").count(),
            1,
            "{key:?}: the second call is not asked\n{}",
            run.dump()
        );
        assert_eq!(env.read("proj/out/one.txt"), None, "{key:?}");
        assert_eq!(env.read("proj/out/two.txt"), None, "{key:?}");
    }
}

#[test]
fn ctrl_d_denies_saying_the_terminal_closed() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    scribe_project(&env);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "overwritten\n"),
        )]),
        wire.text("No answer, no write."),
    ]);
    let mut run = start_run(&env, wire, &server, "change a.txt");
    until_asked(&mut run);
    run.key_ctrl_d();
    run.wait_for("No answer, no write.");
    assert_eq!(run.wait_exit(LIMIT), 0, "{}", run.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old line\n"));
    let results = results_sent(wire, &server, 1);
    let text = wire.result_text(&results[0]);
    assert!(
        text.contains("write_file was denied: the terminal closed before an answer"),
        "{text}"
    );
}

#[test]
fn with_stdout_redirected_the_prompt_is_asked_on_stderr_and_stdout_keeps_the_answer() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    scribe_project(&env);
    let server = overwrite_model(wire);
    let envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
    let mut args = vec![
        "-c".to_owned(),
        r#"exec "$0" "$@" > stdout.txt"#.to_owned(),
        env!("CARGO_BIN_EXE_golem-forge").to_owned(),
    ];
    args.extend(run_args(wire, "update a.txt"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut run = Chat::start_program(&env, "sh", &args, &envs);
    let shown = until_asked(&mut run);
    assert!(shown.contains("new line"), "{shown}");
    run.send("y");
    run.wait_for("⎿ ✓ +1 −1 lines");
    assert_eq!(run.wait_exit(LIMIT), 0, "{}", run.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("new line\n"));
    assert_eq!(
        env.read("stdout.txt").as_deref(),
        Some("Saved.\n"),
        "stdout keeps only the answer\n{}",
        run.dump()
    );
}
