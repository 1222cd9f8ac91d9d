//! What the chat prints while an answer is still streaming: `⏹ interrupting…` after Esc and a
//! line typed during the turn (`/help`) are drawn above the streamed line that is still open,
//! and every line of the answer is drawn once, before and after, however the stream ends
//! (interrupted, or going on once the command's output is shown).

use golem_testkit::mock::Gate;

use super::*;

/// One paragraph line, cut by the mock in its middle (`halves`): the first half ends mid-line.
const STORY: &str = "Once upon a time a golem guarded the forge at the edge of the old town.\n";

/// The first half of `text`, as the mock streams it before its pause.
fn first_half(text: &str) -> &str {
    &text[..text.len() / 2]
}

/// The screen with the status line's duration (which varies) as `[DURATION]`.
fn steady(screen: &str) -> String {
    screen
        .lines()
        .map(|line| match line.strip_prefix("── ") {
            Some(rest) => match rest.rsplit_once(" · ") {
                Some((counts, _)) => format!("── {counts} · [DURATION]"),
                None => line.to_owned(),
            },
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every row of the whole session that shows part of `text`, for failure messages.
fn rows_with(history: &str, text: &str) -> Vec<String> {
    history
        .lines()
        .filter(|line| line.contains(text))
        .map(str::to_owned)
        .collect()
}

#[test]
fn esc_mid_line_draws_the_streamed_line_once_and_interrupting_once() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![stalled(wire, STORY)]);
    server.set_fallback(wire.text("Second answer."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("tell me a story");
    let shown = first_half(STORY);
    chat.wait_for(shown);
    chat.key_esc();
    chat.wait_for("⏹ interrupted\n");
    chat.wait_prompt();
    let history = chat.history();
    assert_eq!(
        rows_with(&history, "Once upon a time").len(),
        1,
        "the streamed line is drawn once: {:#?}\n{}",
        rows_with(&history, "Once upon a time"),
        chat.dump()
    );
    assert_eq!(count(&history, "⏹ interrupting…"), 1, "{}", chat.dump());
    assert!(!history.contains("edge of the old town"), "{}", chat.dump());
    insta::assert_snapshot!(steady(&chat.screen()));
    // The chat goes on as usual.
    assert!(
        chat.turn("still there?").contains("Second answer."),
        "{}",
        chat.dump()
    );
}

#[test]
fn help_typed_mid_line_is_shown_above_the_open_line_which_is_drawn_once() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let gate = Gate::new();
    let answer = format!("{STORY}\nThe end.\n");
    let server =
        MockServer::start_blocking(vec![wire.text_stalled(&answer, Chunk::Until(gate.clone()))]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("tell me a story");
    chat.wait_for(first_half(&answer));
    chat.send_line("/help");
    chat.wait_for("Ctrl+D (or Ctrl+C twice) exits.");
    // The rest of the answer comes only now that the help is on the screen.
    gate.open();
    chat.wait_for("The end.");
    chat.wait_prompt();
    let history = chat.history();
    assert_eq!(
        rows_with(&history, "Once upon a time").len(),
        1,
        "the streamed line is drawn once, whole: {:#?}\n{}",
        rows_with(&history, "Once upon a time"),
        chat.dump()
    );
    assert_eq!(
        rows_with(&history, "edge of the old town."),
        vec![STORY.trim_end().to_owned()],
        "the line is not split by the help: {}",
        chat.dump()
    );
    assert_eq!(count(&history, "Commands:"), 1, "{}", chat.dump());
    assert!(
        server.requests().len() == 1 && !request_text(&server, 0).contains("/help"),
        "/help is not sent to the model: {:#?}",
        bodies(&server)
    );
    insta::assert_snapshot!(steady(&chat.screen()));
}

#[test]
fn a_line_typed_mid_stream_that_does_not_work_during_a_turn_is_said_once_above_the_open_line() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let gate = Gate::new();
    let server =
        MockServer::start_blocking(vec![wire.text_stalled(STORY, Chunk::Until(gate.clone()))]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("tell me a story");
    chat.wait_for(first_half(STORY));
    chat.send_line("/status");
    chat.wait_for("send it after the turn");
    gate.open();
    chat.wait_prompt();
    let history = chat.history();
    assert_eq!(
        rows_with(&history, "Once upon a time"),
        vec![STORY.trim_end().to_owned()],
        "{}",
        chat.dump()
    );
    let said = history.find("send it after the turn").unwrap();
    let story = history.find("Once upon a time").unwrap();
    assert!(
        said < story,
        "the answer to the typed line is above the open line\n{history}"
    );
    assert_eq!(
        count(&history, "/status: while a turn runs"),
        1,
        "{history}"
    );
}
