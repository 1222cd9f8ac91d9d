//! `/model`: showing the current model, switching (the next message goes to the new one, the
//! conversation kept), and refusing a name that does not resolve while keeping the old model.

use super::*;

/// Both providers pointed at `server`, so a switch between them can be seen in its requests.
fn both_providers(server: &MockServer) -> Vec<(&'static str, String)> {
    Wire::ALL
        .into_iter()
        .flat_map(|wire| provider_env(wire, server))
        .collect()
}

fn start_anthropic(env: &TestEnv, server: &MockServer) -> Chat {
    let worker = format!("proj/{WORKER}.worker");
    Chat::start(
        env,
        &["chat", &worker, "--model", model_for(Wire::Anthropic)],
        &both_providers(server),
    )
}

#[test]
fn model_without_a_name_shows_the_current_one() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    let shown = chat.turn("/model");
    assert!(shown.contains("anthropic:claude-mock"), "{}", chat.dump());
    assert!(server.requests().is_empty());
}

#[test]
fn model_switches_and_the_next_message_goes_to_the_new_model() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    let server = MockServer::start_blocking(vec![
        Wire::Anthropic.text("Anthropic here."),
        Wire::OpenAi.text("OpenAI here."),
    ]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    assert!(
        chat.turn("first").contains("Anthropic here."),
        "{}",
        chat.dump()
    );
    let shown = chat.turn("/model openai:gpt-mock");
    assert!(shown.contains("model: openai:gpt-mock"), "{}", chat.dump());
    assert!(
        chat.turn("second").contains("OpenAI here."),
        "{}",
        chat.dump()
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{:#?}", bodies(&server));
    assert_eq!(requests[0].path, Wire::Anthropic.path());
    assert_eq!(requests[1].path, Wire::OpenAi.path());
    let second = requests[1].body.to_string();
    assert!(
        second.contains("Anthropic here.") && second.contains("second"),
        "the conversation moves to the new model: {second}"
    );
    assert!(
        chat.turn("/model").contains("openai:gpt-mock"),
        "{}",
        chat.dump()
    );
}

#[test]
fn model_switches_to_the_offline_test_model() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    let server = MockServer::start_blocking(vec![]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    let shown = chat.turn("/model test:default");
    assert!(shown.contains("model: test:default"), "{}", chat.dump());
    let shown = chat.turn("hi");
    assert!(
        shown.contains("Test model: you said"),
        "the test model answers:\n{}",
        chat.dump()
    );
    assert!(server.requests().is_empty(), "{:#?}", bodies(&server));
}

#[test]
fn an_unknown_model_is_refused_and_the_old_one_kept() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    let server = MockServer::start_blocking(vec![Wire::Anthropic.text("Still Anthropic.")]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    let shown = chat.turn("/model nope:x");
    assert!(
        shown.contains("nope"),
        "the error names the model:\n{}",
        chat.dump()
    );
    assert!(!shown.contains("model: nope:x"), "{shown}");
    assert!(
        chat.turn("/model").contains("anthropic:claude-mock"),
        "{}",
        chat.dump()
    );
    assert!(
        chat.turn("hello").contains("Still Anthropic."),
        "{}",
        chat.dump()
    );
    assert_eq!(server.requests()[0].path, Wire::Anthropic.path());
}

#[test]
fn new_starts_a_fresh_conversation_in_a_new_transcript() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    let server = MockServer::start_blocking(vec![
        Wire::Anthropic.text("First answer."),
        Wire::Anthropic.text("Second answer."),
    ]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    assert!(
        chat.turn("remember the word marmalade")
            .contains("First answer.")
    );
    let shown = chat.turn("/new");
    assert!(shown.contains("new session"), "{}", chat.dump());
    assert!(chat.turn("hello again").contains("Second answer."));
    let requests = bodies(&server);
    assert_eq!(requests.len(), 2);
    assert!(
        !requests[1].to_string().contains("marmalade"),
        "the new conversation starts empty: {}",
        requests[1]
    );
    // Both sessions may start within one second, so tell them apart by what they hold, not by
    // their (time-sortable, then random) ids.
    let transcripts: Vec<String> = env
        .transcripts("proj")
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    assert_eq!(transcripts.len(), 2, "one transcript per session");
    let (first, second) = if transcripts[0].contains("marmalade") {
        (&transcripts[0], &transcripts[1])
    } else {
        (&transcripts[1], &transcripts[0])
    };
    assert!(
        first.contains("marmalade") && first.contains("continued as session"),
        "{first}"
    );
    assert!(
        second.contains("hello again") && !second.contains("marmalade"),
        "{second}"
    );
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&output.stdout);
    let (new_at, old_at) = (listed.find("hello again"), listed.find("marmalade"));
    assert!(
        new_at.is_some() && old_at.is_some() && new_at < old_at,
        "newest first:\n{listed}"
    );
}

#[test]
fn a_priced_model_shows_what_each_turn_and_the_session_cost_and_the_context_fill() {
    let env = TestEnv::new();
    project(&env, &plain_worker());
    env.write(
        "proj/golem-forge.config.yaml",
        "prices:\n  \"anthropic:claude-mock\": { input: 1000, output: 2000 }\n\
         context_windows:\n  \"anthropic:claude-mock\": 60\n",
    );
    let server = MockServer::start_blocking(vec![Wire::Anthropic.text("Priced.")]);
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    let shown = chat.turn("hello");
    // The mock's usage: 10 input and 5 output tokens, $0.01 + $0.01; 15 of a 60-token window.
    assert!(
        shown.contains("── 10 in · 5 out · $0.02 · ctx 25 % ·"),
        "{}",
        chat.dump()
    );
    let status = chat.turn("/status");
    assert!(
        status.contains("tokens: 10 in · 5 out · $0.02"),
        "{}",
        chat.dump()
    );
    assert!(
        status.contains("context: 25 % of 60 tokens"),
        "{}",
        chat.dump()
    );
}

#[test]
fn compact_summarises_the_chat_before_its_last_turn_with_the_focus() {
    let env = TestEnv::new();
    project(&env, &worker("context:\n  keep_turns: 1\n"));
    let server = MockServer::start_blocking(vec![
        Wire::Anthropic.text("One."),
        Wire::Anthropic.text("Two."),
        Wire::Anthropic.text("Three."),
    ]);
    server.answer_when(
        "[The conversation above is about to be replaced",
        Wire::Anthropic.text("SUMMARY: the user counted to three."),
    );
    let mut chat = start_anthropic(&env, &server);
    chat.ready();
    for input in ["count", "go on", "once more"] {
        chat.turn(input);
    }
    let shown = chat.turn("/compact the numbers");
    assert!(
        shown.contains("⟲ context compacted (requested): 4 messages summarised, about"),
        "{}",
        chat.dump()
    );
    assert!(
        shown.contains("compacted: 4 messages summarised"),
        "{}",
        chat.dump()
    );
    let asked = server.requests().last().unwrap().body.to_string();
    assert!(asked.contains("[Keep in focus: the numbers]"), "{asked}");
    let status = chat.turn("/status");
    assert!(
        status.contains("conversation: 3 messages"),
        "{}",
        chat.dump()
    );
    // The next turn sends the summary and the last turn only.
    server.set_fallback(Wire::Anthropic.text("Four."));
    chat.turn("and now?");
    let sent = server.requests().last().unwrap().body.clone();
    let messages = sent["messages"].as_array().unwrap();
    // The summary and the kept question go out as one user turn (the wire merges them).
    assert_eq!(messages.len(), 3, "{sent}");
    assert!(
        messages[0]
            .to_string()
            .contains("SUMMARY: the user counted to three."),
        "{sent}"
    );
}
