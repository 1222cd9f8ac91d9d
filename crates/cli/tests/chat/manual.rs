//! Tools the user runs: `/tools` lists the manual ones (not the model-only `write_file`), the
//! direct, `/tool` and `/t` forms with options and positional values, `-i` forms prompting each
//! field, what the model is told about it, and refusals (a model-only tool, an unknown option).

use super::*;

const CONTENT: &str = "hello from the zone";

/// A session over a zone holding `a.txt` and `b.txt`; the model answers `I see.` to anything.
fn session(wire: Wire) -> (TestEnv, MockServer, Chat) {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write("proj/out/a.txt", &format!("{CONTENT}\n"));
    env.write("proj/out/b.txt", "bee\n");
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(wire.text("I see."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    (env, server, chat)
}

#[test]
fn tools_lists_the_manual_tools_but_not_the_model_only_ones() {
    let (_env, server, mut chat) = session(Wire::Anthropic);
    let shown = chat.turn("/tools");
    for tool in ["read_file", "list_files", "file_info", "file_exists"] {
        assert!(shown.contains(tool), "{tool} missing from /tools:\n{shown}");
    }
    for tool in ["write_file", "delete_file", "move_file", "edit_file"] {
        assert!(!shown.contains(tool), "{tool} is model-only:\n{shown}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_direct_command_with_options_runs_and_the_model_is_told() {
    let wire = Wire::Anthropic;
    let (_env, server, mut chat) = session(wire);
    let shown = chat.turn("/list_files --path /out");
    assert!(shown.contains("⏺ list_files"), "{}", chat.dump());
    assert!(
        shown.contains("a.txt") && shown.contains("b.txt"),
        "the listing is rendered:\n{}",
        chat.dump()
    );
    assert!(
        server.requests().is_empty(),
        "running a tool does not ask the model"
    );
    assert!(chat.turn("what did I see?").contains("I see."));
    let sent = request_text(&server, 0);
    assert!(sent.contains("[The user ran the tool"), "{sent}");
    assert!(sent.contains("list_files"), "{sent}");
    assert!(sent.contains("what did I see?"), "{sent}");
}

#[test]
fn tool_t_and_case_insensitive_forms_take_positional_values() {
    let (_env, server, mut chat) = session(Wire::Anthropic);
    for line in [
        "/tool read_file /out/a.txt",
        "/t read_file /out/a.txt",
        "/READ_FILE /out/a.txt",
    ] {
        let shown = chat.turn(line);
        assert!(
            shown.contains(CONTENT),
            "{line}: the file is shown\n{}",
            chat.dump()
        );
    }
    chat.turn("thanks");
    let sent = request_text(&server, 0);
    assert_eq!(
        count(&sent, "[The user ran the tool"),
        3,
        "every run is in the conversation: {sent}"
    );
}

/// What the `-i` form shows while it runs.
enum Form {
    /// A field's prompt (the cursor line).
    Field(String),
    /// The tool ran and its result is shown.
    Done,
}

/// Waits for the `-i` form's next field prompt, or for the read file's text (the tool ran).
fn next_form_step(chat: &mut Chat) -> Form {
    chat.poll("a field prompt or the result", |view, from| {
        if view.text_from(from).contains(CONTENT) {
            return Some(Form::Done);
        }
        // A field prompt is a fresh row `name (type, …)› ` with the cursor at its end.
        let line = view.cursor_line();
        let is_field = view.cursor.0 > from
            && line.ends_with('›')
            && line.contains(" (")
            && usize::from(view.cursor.1) == line.chars().count() + 1;
        is_field.then(|| Form::Field(line.to_owned()))
    })
}

#[test]
fn a_bad_form_answer_names_the_field_not_an_option_and_is_asked_again() {
    let (_env, _server, mut chat) = session(Wire::Anthropic);
    chat.send_line("/read_file -i");
    let mut answered_badly = false;
    loop {
        let next = next_form_step(&mut chat);
        match next {
            Form::Done => break,
            Form::Field(prompt) if prompt.starts_with("path (") => chat.send_line("/out/a.txt"),
            Form::Field(prompt) if prompt.starts_with("offset (") && !answered_badly => {
                answered_badly = true;
                chat.send_line("soon");
                chat.wait_for("invalid value 'soon' for offset: expected");
            }
            Form::Field(_) => chat.send_line(""),
        }
    }
    assert!(answered_badly, "no offset field\n{}", chat.dump());
    let screen = chat.dump();
    assert!(!screen.contains("--offset"), "{screen}");
}

#[test]
fn dash_i_prompts_each_field_then_runs() {
    let (_env, server, mut chat) = session(Wire::Anthropic);
    chat.send_line("/read_file -i");
    let mut prompts: Vec<String> = Vec::new();
    loop {
        let seen = prompts.len();
        let next = next_form_step(&mut chat);
        match next {
            Form::Done => break,
            Form::Field(prompt) => {
                assert!(
                    seen < 8,
                    "the form never ends: {prompts:?}\n{}",
                    chat.dump()
                );
                let answer = if prompt.starts_with("path (") {
                    "/out/a.txt"
                } else {
                    ""
                };
                prompts.push(prompt);
                chat.send_line(answer);
            }
        }
    }
    chat.wait_prompt();
    assert!(!prompts.is_empty(), "no field was asked\n{}", chat.dump());
    assert!(
        prompts[0].starts_with("path (") && prompts[0].contains("required"),
        "the required path comes first: {prompts:?}"
    );
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["path", "encoding", "offset", "limit"],
        "{prompts:?}"
    );
    for prompt in &prompts[1..] {
        assert!(prompt.contains("optional"), "{prompt}");
    }
    assert!(
        prompts[1].contains("utf-8") && prompts[1].contains("base64"),
        "the enum's choices are offered: {}",
        prompts[1]
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_model_only_tool_cannot_be_run_by_the_user() {
    let (env, server, mut chat) = session(Wire::Anthropic);
    let shown = chat.turn("/tool write_file --path /out/x.txt --content nope");
    assert!(
        shown.contains("write_file"),
        "the refusal names it:\n{shown}"
    );
    assert!(!shown.contains("Approve"), "{shown}");
    assert!(!shown.contains("⏺ write_file"), "{shown}");
    assert_eq!(env.read("proj/out/x.txt"), None);
    let shown = chat.turn("/write_file -i");
    assert!(
        !shown.contains("path ("),
        "no form for a model-only tool:\n{shown}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn an_unknown_option_is_refused_and_nothing_runs() {
    let (_env, server, mut chat) = session(Wire::Anthropic);
    let shown = chat.turn("/list_files --path /out --nope 1");
    assert!(
        shown.contains("--nope"),
        "the error names the option:\n{shown}"
    );
    assert!(!shown.contains("⏺ list_files"), "{shown}");
    assert!(!shown.contains("b.txt"), "{shown}");
    assert!(server.requests().is_empty());
}
