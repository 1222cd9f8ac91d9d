//! `e` at the approval prompt: the arguments edited in `$EDITOR` / `$VISUAL` (a script that
//! rewrites the JSON file), or inline as one line of JSON when neither is set; invalid JSON and
//! arguments failing the schema are refused and asked again; the edited call is the one run.

use super::*;

/// A script that replaces `draft` with `final` in the file it is given, as an editor would.
fn editor_script(env: &TestEnv) -> String {
    let path = env.write("edit.sh", "#!/bin/sh\nsed -i 's/draft/final/' \"$1\"\n");
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path.display().to_string()
}

/// A model that writes `draft text` to `/out/a.txt`, then answers `Done.`.
fn drafting_model(wire: Wire) -> MockServer {
    MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "draft text\n"),
        )]),
        wire.text("Done."),
    ])
}

#[test]
fn e_runs_the_editor_on_the_arguments_and_the_edited_call_runs() {
    let wire = Wire::Anthropic;
    for variable in ["EDITOR", "VISUAL"] {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        let server = drafting_model(wire);
        let mut envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
        envs.push((variable, editor_script(&env)));
        let worker = format!("proj/{WORKER}.worker");
        let mut chat = Chat::start(&env, &["chat", &worker, "--model", model_for(wire)], &envs);
        chat.ready();
        chat.send_line("write a draft");
        chat.wait_for(CHOICES);
        chat.wait_prompt_text(ANSWER);
        chat.send("e");
        chat.wait_prompt();
        assert_eq!(
            env.read("proj/out/a.txt").as_deref(),
            Some("final text\n"),
            "{variable}: the edited arguments are the ones run\n{}",
            chat.dump()
        );
        assert!(
            chat.since().contains("Done."),
            "{variable}\n{}",
            chat.dump()
        );
        let results = wire.tool_results(&server.requests()[1]);
        assert!(!wire.is_error(&results[0]), "{variable}: {results:?}");
    }
}

const INLINE: &str = "arguments (JSON)› ";

/// Waits for the inline arguments prompt (it may come filled with the arguments to edit),
/// clears it and enters `json`.
fn edit_inline(chat: &mut Chat, json: &str) {
    chat.wait_prompt_prefilled(INLINE);
    chat.key_clear_line();
    chat.send_line(json);
}

#[test]
fn e_without_an_editor_asks_for_json_inline_until_it_is_valid() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = drafting_model(wire);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("write a draft");
    chat.wait_for(CHOICES);
    chat.wait_prompt_text(ANSWER);
    chat.send("e");
    let mut errors = Vec::new();
    // Not JSON, then JSON that is not what write_file takes (`contents` for `content`): each
    // is refused with an error, and nothing runs.
    for bad in ["{not json", r#"{"path": "/out/a.txt", "contents": "typo"}"#] {
        edit_inline(&mut chat, bad);
        let again = chat.poll("the question asked again", |view, from| {
            let line = view.cursor_line();
            let fresh = view.cursor.0 > from;
            if fresh && line.starts_with(INLINE.trim_end()) {
                Some(INLINE)
            } else if fresh && line == ANSWER.trim_end() {
                Some(ANSWER)
            } else {
                None
            }
        });
        // The rows between the line entered and the new prompt: the error.
        let shown = chat.since();
        let rows: Vec<&str> = shown.lines().collect();
        let error = rows[1..rows.len() - 1].join("\n");
        assert!(
            !error.trim().is_empty(),
            "{bad}: an error is shown before asking again:\n{shown}"
        );
        errors.push(error);
        assert_eq!(env.read("proj/out/a.txt"), None, "{bad}: nothing ran yet");
        if again == ANSWER {
            chat.send("e");
        }
    }
    assert!(
        errors[1].contains("content"),
        "the schema error names the problem: {errors:?}"
    );
    let boxes = count(&chat.history(), "┌ Approve write_file?");

    edit_inline(
        &mut chat,
        r#"{"path": "/out/a.txt", "content": "edited inline\n"}"#,
    );
    chat.wait_prompt();
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("edited inline\n"),
        "{}",
        chat.dump()
    );
    assert!(chat.since().contains("Done."), "{}", chat.dump());
    assert_eq!(
        count(&chat.history(), "┌ Approve write_file?"),
        boxes,
        "valid edited arguments are run, not asked about again"
    );
    let results = wire.tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(!wire.is_error(&results[0]), "{results:?}");
}
