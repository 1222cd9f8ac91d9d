//! The session itself: the banner, a message and its streamed answer with the status line, the
//! cache's reads and writes in the status line and `/status` when there are any, the
//! built-in commands that only show things (`/help`, `/status`, an unknown command), ending with
//! `/exit`, `/quit` or Ctrl+D (with the command that resumes the session, which works as
//! printed), history kept across sessions, and `NO_COLOR`.

use super::*;

#[test]
fn the_banner_names_worker_and_model_then_the_prompt_waits() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let history = chat.history();
    let first = history.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(first.contains("golem-forge chat"), "{first}");
    assert!(first.contains(WORKER), "{first}");
    assert!(first.contains("anthropic:claude-mock"), "{first}");
    assert!(
        server.requests().is_empty(),
        "nothing is asked before the user types"
    );
    insta::assert_snapshot!(chat.screen());
}

#[test]
fn a_message_streams_the_answer_then_a_status_line() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![
            wire.text("Hello there, friend of the forge. This answer came in two pieces."),
        ]);
        let mut chat = start(&env, wire, &server);
        chat.ready();
        let shown = chat.turn("hello golem");
        assert!(
            shown.contains("hello golem"),
            "{wire:?}: the input echoes\n{shown}"
        );
        assert!(
            shown.contains("Hello there, friend of the forge. This answer came in two pieces."),
            "{wire:?}: both halves of the stream are shown in order\n{}",
            chat.dump()
        );
        let status = shown
            .lines()
            .find(|l| l.trim_start().starts_with("──"))
            .unwrap_or_else(|| panic!("{wire:?}: no status line\n{}", chat.dump()));
        assert!(
            status.contains("in ·") && status.contains("out"),
            "{wire:?}: {status}"
        );
        assert!(
            !status.contains("tool"),
            "{wire:?}: no tool ran, so no tool count: {status}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{wire:?}: {:#?}", bodies(&server));
        assert_eq!(requests[0].path, wire.path());
        assert!(
            requests[0].body.to_string().contains("hello golem"),
            "{wire:?}: the message reaches the model"
        );
    }
}

#[test]
fn a_second_message_carries_the_first_exchange() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        wire.text("First answer."),
        wire.text("Second answer."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    assert!(
        chat.turn("one").contains("First answer."),
        "{}",
        chat.dump()
    );
    assert!(
        chat.turn("two").contains("Second answer."),
        "{}",
        chat.dump()
    );
    let second = request_text(&server, 1);
    assert!(
        second.contains("First answer.") && second.contains("\"two\""),
        "the conversation goes on: {second}"
    );
}

#[test]
fn exit_ends_the_session_with_status_0() {
    for command in ["/exit", "/quit"] {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![]);
        let mut chat = start(&env, Wire::Anthropic, &server);
        chat.ready();
        chat.send_line(command);
        assert_eq!(chat.wait_exit(LIMIT), 0, "{command}\n{}", chat.dump());
        assert!(server.requests().is_empty(), "{command}");
        assert!(
            chat.history().contains("Bye.") && !chat.history().contains("Resume it with"),
            "{command}: nothing was said, so there is nothing to resume\n{}",
            chat.dump()
        );
    }
}

/// Runs `command` as printed, through `sh` in the temp dir, with `golem-forge` on the PATH and
/// the model of `wire` pointed at `server`.
pub(crate) fn run_printed(
    env: &TestEnv,
    wire: Wire,
    server: &MockServer,
    command: &str,
) -> std::process::Output {
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("golem-forge");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_golem-forge"), &link).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(env.path())
        .env_clear()
        .env("HOME", env.path())
        .env("PATH", path)
        .envs(provider_env(wire, server))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The session id and the command of the `Session … saved. Resume it with: …` line in `shown`.
pub(crate) fn resume_line(shown: &str) -> (String, String) {
    let line = shown
        .lines()
        .find(|l| l.contains("Resume it with: "))
        .unwrap_or_else(|| panic!("no resume line:\n{shown}"));
    let id = line
        .trim_start()
        .strip_prefix("Session ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no session id in {line:?}"));
    let command = line.split_once("Resume it with: ").unwrap().1.trim();
    (id.to_owned(), command.to_owned())
}

#[test]
fn exit_after_a_turn_prints_the_command_that_resumes_the_session_and_it_works() {
    let wire = Wire::Anthropic;
    for (how, key) in [("/exit", "/exit\r"), ("Ctrl+D", "\x04")] {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![
            wire.text("First answer."),
            wire.text("Resumed and remembered."),
        ]);
        let mut chat = start(&env, wire, &server);
        chat.ready();
        chat.turn("remember the word tangerine");
        chat.send(key);
        assert_eq!(chat.wait_exit(LIMIT), 0, "{how}\n{}", chat.dump());
        let history = chat.history();
        let (id, command) = resume_line(&history);
        let bye = history.find("Bye.").expect("Bye.");
        assert!(
            bye < history.find("Resume it with").unwrap(),
            "{how}: {history}"
        );
        // The session lives in proj/, the chat ran one folder up: the command goes there.
        assert_eq!(
            command,
            format!("cd proj && golem-forge sessions resume {id} \"your next input\""),
            "{how}"
        );
        let sessions = env.transcripts("proj");
        assert_eq!(sessions.len(), 1, "{how}");

        let output = run_printed(&env, wire, &server, &command);
        assert!(output.status.success(), "{how}: {}", cli::render(&output));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "Resumed and remembered.\n",
            "{how}"
        );
        let request = request_text(&server, 1);
        for expected in ["tangerine", "First answer.", "your next input"] {
            assert!(
                request.contains(expected),
                "{how}: the resumed session carries {expected}: {request}"
            );
        }
        assert_eq!(
            env.transcripts("proj").len(),
            1,
            "{how}: the same session went on"
        );
    }
}

#[test]
fn ctrl_d_at_an_empty_prompt_exits_0() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    chat.key_ctrl_d();
    assert_eq!(chat.wait_exit(LIMIT), 0, "{}", chat.dump());
}

#[test]
fn help_lists_the_commands() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let shown = chat.turn("/help");
    for command in [
        "/help",
        "/model",
        "/clear",
        "/new",
        "/status",
        "/tools",
        "/tool",
        "/approvals",
        "/exit",
    ] {
        assert!(
            shown.contains(command),
            "{command} missing from /help:\n{shown}"
        );
    }
    assert!(
        server.requests().is_empty(),
        "/help is not sent to the model"
    );
}

#[test]
fn an_unknown_command_gets_a_suggestion_and_nothing_is_sent() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let shown = chat.turn("/tols");
    assert!(
        shown.contains("unknown command /tols (did you mean /tools?)"),
        "{}",
        chat.dump()
    );
    assert!(server.requests().is_empty(), "{:#?}", bodies(&server));
    // The session goes on.
    chat.send_line("/exit");
    assert_eq!(chat.wait_exit(LIMIT), 0);
}

#[test]
fn status_shows_worker_model_zones_and_tokens() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![wire.text("Counted.")]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    chat.turn("count my tokens");
    let shown = chat.turn("/status");
    // The worker, the model, the zones and the mock's usage (10 in, 5 out).
    insta::assert_snapshot!(chat.redacted(&shown));
}

/// `reply` (an Anthropic answer) with its usage saying `input` uncached input tokens, `read`
/// read from the cache and `write` written to it, as `message_start` reports them.
fn with_cache(mut reply: Reply, input: u64, read: u64, write: u64) -> Reply {
    let mut changed = 0;
    for chunk in &mut reply.chunks {
        if let Chunk::Data(frame) = chunk
            && frame.contains("\"message_start\"")
        {
            *frame = frame
                .replace("\"input_tokens\":10", &format!("\"input_tokens\":{input}"))
                .replace(
                    "\"cache_creation_input_tokens\":0",
                    &format!("\"cache_creation_input_tokens\":{write}"),
                )
                .replace(
                    "\"cache_read_input_tokens\":0",
                    &format!("\"cache_read_input_tokens\":{read}"),
                );
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "one message_start in {reply:?}");
    reply
}

/// The status line of the last turn in `shown`, without its duration (the last part).
fn status_line(chat: &Chat, shown: &str) -> String {
    let line = shown
        .lines()
        .rfind(|l| l.starts_with("── "))
        .unwrap_or_else(|| panic!("no status line\n{}", chat.dump()));
    line.rsplit_once(" · ").unwrap().0.to_owned()
}

#[test]
fn cache_reads_and_writes_are_shown_when_there_are_any() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        with_cache(wire.text("Cached both ways."), 1234, 12_345, 1870),
        with_cache(wire.text("Written only."), 1, 0, 1870),
        wire.text("Nothing cached."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("first");
    assert!(shown.contains("Cached both ways."), "{}", chat.dump());
    assert_eq!(
        status_line(&chat, &shown),
        "── 1,234 in · 5 out · 12,345 cache read · 1,870 cache write · ctx 7 %"
    );
    let shown = chat.turn("second");
    assert_eq!(
        status_line(&chat, &shown),
        "── 1 in · 5 out · 1,870 cache write · ctx 0 %",
        "a zero count adds nothing"
    );
    let shown = chat.turn("third");
    assert_eq!(status_line(&chat, &shown), "── 10 in · 5 out · ctx 0 %");

    let shown = chat.turn("/status");
    let tokens = shown
        .lines()
        .find(|l| l.starts_with("tokens: "))
        .unwrap_or_else(|| panic!("no tokens line\n{}", chat.dump()));
    assert_eq!(
        tokens, "tokens: 1,245 in · 15 out · 12,345 cache read · 3,740 cache write",
        "the session's totals"
    );
}

#[test]
fn history_is_kept_in_home_across_sessions() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    {
        let mut chat = start(&env, Wire::Anthropic, &server);
        chat.ready();
        chat.turn("/tools");
        chat.send_line("/exit");
        assert_eq!(chat.wait_exit(LIMIT), 0);
    }
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    // Up walks back through the earlier session's lines (`/exit` may or may not be kept).
    for _ in 0..3 {
        chat.key_up();
        std::thread::sleep(Duration::from_millis(100));
        if chat.view().cursor_line().contains("/tools") {
            return;
        }
    }
    panic!("/tools was not recalled from history\n{}", chat.dump());
}

/// The SGR sequences in `raw` that set a foreground or background colour (30–49, 90–107,
/// 38;…/48;…), each with the text that follows it.
fn colour_codes(raw: &str) -> Vec<String> {
    raw.split("\x1b[")
        .skip(1)
        .filter(|seq| {
            let end = seq
                .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                .unwrap_or(seq.len());
            seq[end..].starts_with('m')
                && seq[..end].split(';').any(|p| {
                    p.parse::<u32>()
                        .is_ok_and(|n| (30..=49).contains(&n) || (90..=107).contains(&n))
                })
        })
        .map(|seq| format!("ESC[{}", seq.chars().take(20).collect::<String>()))
        .collect()
}

#[test]
fn no_color_turns_colours_off() {
    let wire = Wire::Anthropic;
    let mut raws = Vec::new();
    for no_color in [false, true] {
        let env = TestEnv::new();
        project(&env, &fs_worker());
        env.write("proj/out/a.txt", "old line\n");
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_1", "read_file", json!({"path": "/out/a.txt"}))]),
            wire.text("# Title\n\nSome **bold** text and `code`."),
        ]);
        let mut envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
        if no_color {
            envs.push(("NO_COLOR", "1".to_owned()));
        }
        let worker = format!("proj/{WORKER}.worker");
        let mut chat = Chat::start(&env, &["chat", &worker, "--model", model_for(wire)], &envs);
        chat.ready();
        let shown = chat.turn("read a.txt");
        assert!(shown.contains("bold"), "{}", chat.dump());
        raws.push(chat.raw());
    }
    assert!(
        !colour_codes(&raws[0]).is_empty(),
        "without NO_COLOR the chat uses colour (else this test proves nothing)"
    );
    let codes = colour_codes(&raws[1]);
    assert!(
        codes.is_empty(),
        "NO_COLOR=1 but colours were set: {codes:#?}\nraw output: {:?}",
        raws[1]
    );
}

#[test]
fn the_answer_is_rendered_as_markdown() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![wire.text(
        "## Plan\n\nSome **bold** words and *emphasis*:\n\n- first item\n- second item\n\n```rust\nfn main() {}\n```\n",
    )]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("plan it");
    for text in [
        "Plan",
        "bold",
        "emphasis",
        "first item",
        "second item",
        "fn main() {}",
    ] {
        assert!(shown.contains(text), "{text} missing\n{}", chat.dump());
    }
    for markup in ["**bold**", "*emphasis*", "## "] {
        assert!(
            !shown.contains(markup),
            "{markup:?} is markup, not text\n{}",
            chat.dump()
        );
    }
}

#[test]
fn an_empty_line_sends_nothing() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    chat.turn("");
    chat.turn("   ");
    assert!(server.requests().is_empty(), "{:#?}", bodies(&server));
}

#[test]
fn unicode_input_reaches_the_model_intact() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![wire.text("Grüße zurück ✓")]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("héllo wörld ✓ 世界");
    assert!(shown.contains("Grüße zurück ✓"), "{}", chat.dump());
    let sent = &server.requests()[0].body;
    assert!(sent.to_string().contains("héllo wörld ✓ 世界"), "{sent}");
}

#[test]
fn a_model_error_is_shown_and_the_session_goes_on() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        Reply::json(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}"#,
        ),
        wire.text("Recovered."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("first try");
    assert!(
        shown.contains("prompt is too long"),
        "the provider's message is shown:\n{}",
        chat.dump()
    );
    assert!(
        chat.turn("second try").contains("Recovered."),
        "{}",
        chat.dump()
    );
}

#[test]
fn tab_completes_a_command_name() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    chat.send("/appr\t");
    // The single candidate is either filled in at once or offered in a menu (Enter takes it).
    let filled = |view: &View| view.cursor_line().contains("/approvals");
    let menu = chat.poll("a completion", |view, from| {
        if filled(view) {
            Some(false)
        } else {
            view.text_from(from).contains("approvals").then_some(true)
        }
    });
    if menu {
        chat.send("\r");
        chat.poll("/approvals taken from the menu", |view, _| {
            filled(view).then_some(())
        });
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_long_answer_scrolls_and_everything_stays_readable() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let items: String = (1..=60).map(|n| format!("- item number {n}\n")).collect();
    let server = MockServer::start_blocking(vec![wire.text(&items), wire.text("Short.")]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("list sixty things");
    for n in [1, 30, 60] {
        assert!(
            shown.contains(&format!("item number {n}\n")),
            "item {n}\n{}",
            chat.dump()
        );
    }
    assert!(
        chat.history().starts_with("golem-forge chat"),
        "rows scrolled off the top are kept"
    );
    assert!(chat.turn("and now?").contains("Short."), "{}", chat.dump());
}
