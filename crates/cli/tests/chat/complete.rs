//! Tab completion of zone paths and `@path` attachments: `/read_file /` + Tab completes the
//! worker's zones and their entries (never a host path, never the line editor's placeholder),
//! a path with no match leaves the line as typed, names with spaces come back quoted as the
//! parser reads them, `@/notes/` completes in a message, and a message with `@path` sends the
//! file's text with it — in the model's request, the transcript (`sessions show`) and a resume —
//! while a path outside the zones, a missing file, a directory or a binary file sends nothing.

use super::basics::{resume_line, run_printed};
use super::*;

/// What every file attached or completed here says.
const SUMMARY: &str = "The summary says: tangerines are orange.";

/// `scribe` with the read-only zone `notes` (`proj/notes/`: `summary.md`, `my file.md`,
/// `sub/deep.txt`, `blob.bin`, the 340,000-byte `big.txt`) and the filesystem tools; `proj/secret.txt` is outside it.
fn session(wire: Wire, replies: Vec<Reply>) -> (TestEnv, MockServer, Chat) {
    let env = TestEnv::new();
    project(
        &env,
        &worker(
            "sandbox:\n  zones:\n    - name: notes\n      mode: ro\ntoolsets:\n  filesystem: {}\n",
        ),
    );
    env.write("proj/notes/summary.md", &format!("{SUMMARY}\n"));
    env.write("proj/notes/my file.md", "spaced out\n");
    env.write("proj/notes/sub/deep.txt", "deep\n");
    std::fs::write(
        env.path().join("proj/notes/blob.bin"),
        b"\x00\x01\x02binary",
    )
    .unwrap();
    env.write("proj/notes/big.txt", &"0123456789abcdef\n".repeat(20_000));
    env.write("proj/secret.txt", "host secret, never shown\n");
    let server = MockServer::start_blocking(replies);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    (env, server, chat)
}

/// Waits until the prompt's line reads `line` exactly.
fn wait_line(chat: &mut Chat, line: &str) {
    let want = format!("{PROMPT}{line}");
    chat.poll(&format!("the line {want:?}"), |view, _| {
        (view.cursor_line() == want.trim_end() || view.cursor_line() == want).then_some(())
    });
}

/// The placeholder reedline's menu shows when it has nothing to offer.
const PLACEHOLDER: &str = "NO RECORDS FOUND";

#[test]
fn tab_after_a_path_argument_completes_zone_entries_and_never_host_paths() {
    let (_env, server, mut chat) = session(Wire::Anthropic, vec![]);
    // One zone: `/` completes to it at once, ending in `/` so that Tab goes on.
    chat.send("/read_file /\t");
    wait_line(&mut chat, "/read_file /notes/");
    // Several entries: the menu lists them, the prompt line stays as typed.
    chat.send("\t");
    chat.poll("the menu of /notes/", |view, from| {
        let shown = view.text_from(from);
        (shown.contains("summary.md") && shown.contains("sub/")).then_some(())
    });
    let shown = chat.history();
    assert!(
        shown.contains(&format!("{PROMPT}/read_file /notes/")),
        "the prompt is intact:\n{}",
        chat.dump()
    );
    for never in [
        PLACEHOLDER,
        "secret.txt",
        "scribe.worker",
        "golem-forge.config",
        "| /read",
    ] {
        assert!(
            !chat.raw().contains(never),
            "{never} shown:\n{}",
            chat.dump()
        );
    }
    // Typing narrows to one entry and Tab takes it; Enter runs the tool on it.
    chat.send("summ\t");
    wait_line(&mut chat, "/read_file /notes/summary.md ");
    chat.send("\r");
    chat.wait_for(SUMMARY);
    chat.wait_prompt();
    assert!(server.requests().is_empty());
}

#[test]
fn tab_with_no_match_leaves_the_line_as_typed() {
    let (_env, server, mut chat) = session(Wire::Anthropic, vec![]);
    for typed in [
        "/read_file /nope",
        "/read_file /../",
        "/read_file /notes/../../",
    ] {
        chat.send(&format!("{typed}\t"));
        // What is typed after the Tab lands after it: the line was left alone.
        chat.send("Z");
        wait_line(&mut chat, &format!("{typed}Z"));
        chat.key_clear_line();
        wait_line(&mut chat, "");
    }
    // A word that is no path argument (`--limit`'s value) offers nothing either.
    chat.send("/read_file --limit \tZ");
    wait_line(&mut chat, "/read_file --limit Z");
    assert!(
        !chat.raw().contains(PLACEHOLDER),
        "the placeholder is never shown:\n{}",
        chat.dump()
    );
    assert!(server.requests().is_empty());
}

#[test]
fn options_that_take_paths_complete_too() {
    let (_env, _server, mut chat) = session(Wire::Anthropic, vec![]);
    chat.send("/read_file --path /notes/sub\t");
    wait_line(&mut chat, "/read_file --path /notes/sub/");
    chat.send("\t");
    wait_line(&mut chat, "/read_file --path /notes/sub/deep.txt ");
    chat.key_clear_line();
    chat.send("/tool read_file --path=/notes/su\t");
    chat.poll("the menu of /notes/su", |view, from| {
        let shown = view.text_from(from);
        (shown.contains("summary.md") && shown.contains("sub/")).then_some(())
    });
    assert!(!chat.raw().contains(PLACEHOLDER), "{}", chat.dump());
}

#[test]
fn a_name_with_a_space_is_quoted_the_way_the_parser_reads_it() {
    let (_env, server, mut chat) = session(Wire::Anthropic, vec![]);
    chat.send("/read_file /notes/my\t");
    wait_line(&mut chat, "/read_file '/notes/my file.md' ");
    chat.send("\r");
    chat.wait_for("spaced out");
    chat.wait_prompt();
    assert!(server.requests().is_empty());
}

#[test]
fn at_paths_complete_in_a_message() {
    let (_env, server, mut chat) = session(Wire::Anthropic, vec![]);
    chat.send("please summarise @/no\t");
    wait_line(&mut chat, "please summarise @/notes/");
    chat.send("summ\t");
    wait_line(&mut chat, "please summarise @/notes/summary.md ");
    chat.key_clear_line();
    chat.send("and @/notes/my\t");
    wait_line(&mut chat, "and @'/notes/my file.md' ");
    chat.key_clear_line();
    // An e-mail address is no mention: nothing to complete.
    chat.send("mail someone@/no\tZ");
    wait_line(&mut chat, "mail someone@/noZ");
    assert!(!chat.raw().contains(PLACEHOLDER), "{}", chat.dump());
    assert!(server.requests().is_empty());
}

/// The user message of the model request at `index`.
fn user_text(server: &MockServer, index: usize) -> String {
    let body = &server.requests()[index].body;
    let messages = body["messages"].as_array().expect("messages");
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    match &last_user["content"] {
        Value::String(text) => text.clone(),
        content => content
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
    }
}

/// Whether `value` holds the string `text` anywhere.
fn holds(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => s == text,
        Value::Array(items) => items.iter().any(|v| holds(v, text)),
        Value::Object(map) => map.values().any(|v| holds(v, text)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[test]
fn an_at_path_attaches_the_file_for_the_model_the_transcript_and_a_resume() {
    let wire = Wire::Anthropic;
    let (env, server, mut chat) = session(
        wire,
        vec![wire.text("Orange, it says."), wire.text("Still orange.")],
    );
    let shown = chat.turn("summarise @/notes/summary.md please");
    assert!(shown.contains("Orange, it says."), "{}", chat.dump());
    let sent = user_text(&server, 0);
    let expected = format!(
        "summarise @/notes/summary.md please\n\nAttached file /notes/summary.md:\n```\n{SUMMARY}\n```"
    );
    assert_eq!(sent, expected, "the message the model got");

    chat.send("/exit\r");
    assert_eq!(chat.wait_exit(LIMIT), 0, "{}", chat.dump());
    let (id, command) = resume_line(&chat.history());
    // The transcript keeps the message as the model got it.
    let transcripts = env.transcripts("proj");
    assert_eq!(transcripts.len(), 1);
    assert!(
        transcripts[0].iter().any(|entry| holds(entry, &expected)),
        "the transcript records the attached message: {:#?}",
        transcripts[0]
    );
    let show = run_printed(
        &env,
        wire,
        &server,
        &format!("cd proj && golem-forge sessions show {id}"),
    );
    let show_text = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success(), "{}", cli::render(&show));
    assert!(
        show_text.contains("Attached file /notes/summary.md:") && show_text.contains(SUMMARY),
        "sessions show: {show_text}"
    );
    // A resume sends the same message again as history.
    let resumed = run_printed(&env, wire, &server, &command);
    assert!(resumed.status.success(), "{}", cli::render(&resumed));
    let request = &server.requests()[1].body;
    let first_user = request["messages"][0].to_string();
    assert!(
        first_user.contains("Attached file /notes/summary.md:") && first_user.contains(SUMMARY),
        "the resumed history carries the attachment: {first_user}"
    );
}

#[test]
fn a_path_that_cannot_be_attached_sends_nothing() {
    let wire = Wire::Anthropic;
    let (_env, server, mut chat) = session(wire, vec![wire.text("Plain.")]);
    for (line, why) in [
        ("read @/../secret.txt", "would leave the root"),
        ("read @/notes/../../secret.txt", "would leave zone notes"),
        ("read @/etc/passwd", "unknown zone `etc`"),
        ("read @/notes/missing.md", "it does not exist"),
        ("read @/notes/sub", "it is a directory"),
        ("read @/notes/sub/", "it is a directory"),
        ("read @/notes/blob.bin", "it is a binary file"),
        (
            "read @/notes/big.txt",
            "it is too large to attach (340000 bytes",
        ),
        ("read @/", "the list of zones"),
        (
            "both @/notes/summary.md and @/notes/missing.md",
            "it does not exist",
        ),
        ("read @'/notes/summary.md", "is never closed"),
    ] {
        let shown = chat.turn(line);
        assert!(
            shown.contains(why) && shown.contains("nothing was sent"),
            "{line}: {why}\n{}",
            chat.dump()
        );
        assert!(!shown.contains("host secret"), "{line}\n{}", chat.dump());
        assert!(server.requests().is_empty(), "{line}: nothing was sent");
    }
    // An `@` that is no path stays plain text.
    let line = "mail someone@example.com or @alice, and @ alone";
    assert!(chat.turn(line).contains("Plain."), "{}", chat.dump());
    assert_eq!(user_text(&server, 0), line);
}
