//! `/undo` in the chat: a turn's `write_file` and `run_code` changeset are put back byte for
//! byte and the model is told in its next request; an outside edit since is listed as a
//! conflict and nothing changes until `/undo --force`.

use super::*;
use crate::run::changes::zone_files;

/// `scribe` with the pre-approved rw zone `out`, the filesystem tools and `run_code`.
fn undo_worker() -> String {
    worker(
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { create: \
         preApproved, write: preApproved, delete: preApproved }\ntoolsets:\n  filesystem: {}\n  \
         code: {}\n",
    )
}

/// A turn that writes `out/a.txt` with `content` and runs bash that makes `made.txt` and
/// changes `old.txt`.
fn changing_turn(wire: Wire, content: &str) -> Vec<Reply> {
    vec![
        wire.tool_calls(&[("call_w", "write_file", write_args("/out/a.txt", content))]),
        wire.tool_calls(&[(
            "call_c",
            "run_code",
            json!({"language": "bash", "code": "echo made > made.txt; echo changed > old.txt"}),
        )]),
        wire.text("Done."),
    ]
}

#[test]
fn slash_undo_puts_back_a_turn_and_the_model_is_told() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &undo_worker());
    env.write("proj/out/a.txt", "old a\n");
    env.write("proj/out/old.txt", "old\n");
    let before = zone_files(&env);
    let mut replies = changing_turn(wire, "new a\n");
    replies.push(wire.text("Noted."));
    replies.extend(changing_turn(wire, "again\n"));
    let server = MockServer::start_blocking(replies);
    server.set_fallback(wire.text("I see."));
    let mut chat = start(&env, wire, &server);
    chat.ready();

    chat.turn("change things");
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("new a\n"));
    assert_eq!(env.read("proj/out/made.txt").as_deref(), Some("made\n"));

    let shown = chat.turn("/undo");
    assert!(shown.contains("undid turn 1"), "{}", chat.dump());
    assert!(shown.contains("/out/a.txt"), "{}", chat.dump());
    assert_eq!(zone_files(&env), before, "byte for byte as before the turn");

    // The model's next request carries the note.
    chat.turn("what now?");
    let last = server.requests().last().cloned().expect("a request");
    let body = last.body.to_string();
    assert!(
        body.contains("The user undid the file changes of turn 1"),
        "{body}"
    );

    // A second changing turn, then an edit by hand: a conflict, nothing changes.
    chat.turn("change them again");
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("again\n"));
    env.write("proj/out/made.txt", "edited by hand\n");
    let held = zone_files(&env);
    let shown = chat.turn("/undo");
    assert!(shown.contains("/out/made.txt"), "{}", chat.dump());
    assert!(
        shown.contains("changed since the session left"),
        "{}",
        chat.dump()
    );
    assert_eq!(zone_files(&env), held, "a conflict changes nothing");

    let shown = chat.turn("/undo --force");
    assert!(shown.contains("undid turn 3"), "{}", chat.dump());
    assert_eq!(zone_files(&env), before);
}
