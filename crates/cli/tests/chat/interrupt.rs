//! Interrupting: Ctrl+C or Esc while the answer streams stops the turn, shows `interrupted`,
//! and the prompt comes back working; at an empty prompt one Ctrl+C does not end the session
//! but two do (status 0).

use super::*;

const FIRST: &str = "Once upon a time.\n\n";
const REST: &str = "It never ever ends\n";

/// Sends a message whose answer stalls mid-stream, and waits until its first half is shown.
fn until_streaming(chat: &mut Chat) {
    chat.send_line("tell me a story");
    chat.wait_for("Once upon a time.");
}

/// A model whose first answer stalls after [`FIRST`]; every later request gets `Second answer.`.
fn storyteller(wire: Wire) -> MockServer {
    assert_eq!(FIRST.len(), REST.len(), "the stream is cut at the middle");
    let server = MockServer::start_blocking(vec![stalled(wire, &format!("{FIRST}{REST}"))]);
    server.set_fallback(wire.text("Second answer."));
    server
}

/// After an interrupt: `interrupted` is shown, the prompt is back, the rest never came, and
/// the next message gets an answer.
fn assert_back_at_a_working_prompt(chat: &mut Chat, server: &MockServer, what: &str) {
    chat.wait_for("interrupted");
    chat.wait_prompt();
    assert!(
        !chat.history().contains("It never ever ends"),
        "{what}\n{}",
        chat.dump()
    );
    let shown = chat.turn("are you still there?");
    assert!(shown.contains("Second answer."), "{what}\n{}", chat.dump());
    let requests = server.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("are you still there?"), "{what}: {last}");
}

#[test]
fn ctrl_c_while_streaming_interrupts_and_the_prompt_works_again() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        let server = storyteller(wire);
        let mut chat = start(&env, wire, &server);
        chat.ready();
        until_streaming(&mut chat);
        chat.key_ctrl_c();
        assert_back_at_a_working_prompt(&mut chat, &server, &format!("{wire:?}"));
    }
}

#[test]
fn esc_while_streaming_interrupts_too() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = storyteller(wire);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    until_streaming(&mut chat);
    chat.key_esc();
    assert_back_at_a_working_prompt(&mut chat, &server, "Esc");
}

#[test]
fn ctrl_c_while_waiting_for_the_first_token_interrupts() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server =
        MockServer::start_blocking(vec![wire.text("too late").delayed(Duration::from_secs(60))]);
    server.set_fallback(wire.text("Second answer."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("think hard");
    assert!(server.wait_for_requests(1, LIMIT), "{}", chat.dump());
    chat.key_ctrl_c();
    chat.wait_for("interrupted");
    chat.wait_prompt();
    assert!(!chat.history().contains("too late"));
    assert!(
        chat.turn("again").contains("Second answer."),
        "{}",
        chat.dump()
    );
}

#[test]
fn one_ctrl_c_at_an_empty_prompt_does_not_exit() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    chat.key_ctrl_c();
    chat.wait_prompt();
    let shown = chat.turn("/help");
    assert!(shown.contains("/tools"), "still running:\n{}", chat.dump());
}

#[test]
fn ctrl_c_twice_at_an_empty_prompt_exits_0() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    chat.key_ctrl_c();
    // The second press once the first has been seen (a fresh prompt), as a person would.
    chat.wait_prompt();
    chat.key_ctrl_c();
    assert_eq!(chat.wait_exit(LIMIT), 0, "{}", chat.dump());
}

#[test]
fn a_second_ctrl_c_stops_the_summary_after_tool_work() {
    // The model lists a folder (pre-approved), then stalls; after Ctrl+C the runtime asks for
    // a summary, which stalls too; a second Ctrl+C ends the turn at once.
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "list_files", json!({"path": "/out"}))]),
        wire.text("too late").delayed(Duration::from_secs(60)),
        wire.text("a summary too late")
            .delayed(Duration::from_secs(60)),
    ]);
    server.set_fallback(wire.text("Second answer."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.send_line("look around");
    assert!(server.wait_for_requests(2, LIMIT), "{}", chat.dump());
    chat.key_ctrl_c();
    chat.wait_for("summarising… (Ctrl+C again to stop)");
    assert!(server.wait_for_requests(3, LIMIT), "{}", chat.dump());
    let second = std::time::Instant::now();
    chat.key_ctrl_c();
    chat.wait_for("interrupted");
    chat.wait_prompt();
    // Not a measurement: the summary's own bound is 10 s, and without the second interrupt
    // the turn would end only then.
    assert!(
        second.elapsed() < Duration::from_secs(6),
        "the second Ctrl+C did not stop the summary\n{}",
        chat.dump()
    );
    assert!(!chat.history().contains("too late"), "{}", chat.dump());
    assert!(
        chat.turn("again").contains("Second answer."),
        "{}",
        chat.dump()
    );
}
