//! `/mode`: alone it says the session's approval mode; `/mode approve_all` makes a model's
//! write go through without asking, `/mode auto_deny` denies it, `/mode interactive` asks again;
//! an unknown mode is one error naming the four, `defer` is refused with its reason (a chat
//! cannot continue a turn parked in the inbox), and neither changes the mode; `/help` lists
//! the command and Tab completes its name.

use super::*;

/// A model that writes `/out/a.txt` with `content`, then says `after`.
fn writer(wire: Wire, id: &str, content: &str, after: &str) -> [Reply; 2] {
    [
        wire.tool_calls(&[(id, "write_file", write_args("/out/a.txt", content))]),
        wire.text(after),
    ]
}

#[test]
fn mode_alone_says_the_approval_mode() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let shown = chat.turn("/mode");
    assert!(
        shown.lines().any(|l| l == "approval mode: interactive"),
        "{}",
        chat.dump()
    );
    assert!(server.requests().is_empty(), "{:#?}", bodies(&server));
}

#[test]
fn approve_all_writes_without_asking_and_interactive_asks_again() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write("proj/out/a.txt", "old line\n");
    let mut replies = writer(wire, "call_1", "approved by mode\n", "Saved.").to_vec();
    replies.extend(writer(wire, "call_2", "asked again\n", "Saved again."));
    let server = MockServer::start_blocking(replies);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("/mode approve_all");
    assert!(
        shown.lines().any(|l| l == "approval mode: approve_all"),
        "{}",
        chat.dump()
    );
    assert!(
        chat.turn("/mode")
            .lines()
            .any(|l| l == "approval mode: approve_all"),
        "{}",
        chat.dump()
    );

    let shown = chat.turn("update a.txt");
    assert!(!shown.contains("┌ Approve"), "not asked\n{}", chat.dump());
    assert!(shown.contains("Saved."), "{}", chat.dump());
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("approved by mode\n")
    );

    chat.turn("/mode interactive");
    chat.send_line("update it again");
    chat.wait_for(CHOICES);
    chat.wait_prompt_text(ANSWER);
    chat.send("y");
    chat.wait_prompt();
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("asked again\n"));
}

#[test]
fn auto_deny_denies_a_write_without_asking() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write("proj/out/a.txt", "old line\n");
    let server = MockServer::start_blocking(
        writer(wire, "call_1", "never written\n", "I could not.").to_vec(),
    );
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("/MODE Auto_Deny");
    assert!(
        shown.lines().any(|l| l == "approval mode: auto_deny"),
        "names are read ignoring case\n{}",
        chat.dump()
    );
    let shown = chat.turn("update a.txt");
    assert!(!shown.contains("┌ Approve"), "not asked\n{}", chat.dump());
    assert!(shown.contains("⊘ denied:"), "{}", chat.dump());
    assert!(shown.contains("I could not."), "{}", chat.dump());
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("old line\n"));
    let results = wire.tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(wire.is_error(&results[0]), "{results:?}");
}

#[test]
fn an_unknown_mode_and_defer_are_refused_and_change_nothing() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let shown = chat.turn("/mode bogus");
    assert!(
        shown.lines().any(|l| l
            == "unknown approval mode bogus: the modes are interactive, approve_all, auto_deny \
                and defer"),
        "{}",
        chat.dump()
    );
    let shown = chat.turn("/mode defer");
    assert!(
        shown.contains("defer does not work in a chat: it parks calls in the approval inbox"),
        "{}",
        chat.dump()
    );
    for line in ["/mode approve_all auto_deny", "/mode --force approve_all"] {
        let shown = chat.turn(line);
        assert!(
            shown.contains("usage: /mode [interactive | approve_all | auto_deny]"),
            "{line}\n{}",
            chat.dump()
        );
    }
    assert!(
        chat.turn("/mode")
            .lines()
            .any(|l| l == "approval mode: interactive"),
        "{}",
        chat.dump()
    );
    assert!(server.requests().is_empty(), "{:#?}", bodies(&server));
}

#[test]
fn help_lists_mode_and_tab_completes_its_name() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start(&env, Wire::Anthropic, &server);
    chat.ready();
    let shown = chat.turn("/help");
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("/mode [mode]")
                && l.contains("interactive, approve_all or auto_deny")),
        "{}",
        chat.dump()
    );
    // `mode` and `model` both fit: the menu offers them, `mode` among them.
    chat.send("/mo\t");
    chat.poll("a menu offering mode", |view, from| {
        view.rows
            .iter()
            .enumerate()
            .skip(from)
            .filter(|(at, _)| *at != view.cursor.0)
            .any(|(_, row)| {
                row.text
                    .split_whitespace()
                    .any(|w| w == "mode" || w == "/mode")
            })
            .then_some(())
    });
}

#[test]
fn a_chat_started_in_defer_mode_is_refused_with_the_reason_and_no_session() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    let worker = format!("proj/{WORKER}.worker");
    let envs: Vec<(&str, String)> = provider_env(Wire::Anthropic, &server).into_iter().collect();
    let mut chat = Chat::start(
        &env,
        &[
            "chat",
            &worker,
            "--model",
            model_for(Wire::Anthropic),
            "--approval",
            "defer",
        ],
        &envs,
    );
    chat.wait_for("cannot use the approval mode `defer`");
    assert_eq!(
        chat.wait_exit(Duration::from_secs(10)),
        2,
        "{}",
        chat.dump()
    );
    assert!(chat.dump().contains("--approval defer"), "{}", chat.dump());
    assert!(server.requests().is_empty());
    let listed = env.run(&["sessions", "list"]);
    assert!(!listed.contains(WORKER), "no session was kept: {listed}");

    // The program config's mode is refused the same way.
    let config = env.read("proj/golem-forge.config.yaml").unwrap();
    env.write(
        "proj/golem-forge.config.yaml",
        &format!("{config}approval:\n  mode: defer\n"),
    );
    let mut chat = Chat::start(
        &env,
        &["chat", &worker, "--model", model_for(Wire::Anthropic)],
        &envs,
    );
    chat.wait_for("cannot use the approval mode `defer`");
    assert_eq!(
        chat.wait_exit(Duration::from_secs(10)),
        2,
        "{}",
        chat.dump()
    );
    let listed = env.run(&["sessions", "list"]);
    assert!(!listed.contains(WORKER), "no session was kept: {listed}");
}
