//! Session transcripts of runs: what a transcript holds and where it goes, sub-workers' calls,
//! and resuming a killed session.

use super::*;

#[test]
fn the_transcript_records_the_run_under_the_program_root() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    env.write("proj/golem-forge.config.yaml", "");
    env.write("proj/workers/main.worker", &fs_worker(""));
    env.mkdir("proj/workers/out");
    let args = json!({"path": "/out/t.txt", "content": "traced"});
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", args.clone())]),
        wire.text("Wrote it."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/workers/main.worker",
            "write t.txt",
            "-a",
            "approve_all",
        ],
    );
    assert_exit(&output, 0);
    assert!(
        env.transcripts("proj/workers").is_empty(),
        "the program root is the config's directory, not the worker's"
    );
    let transcripts = env.transcripts("proj");
    assert_eq!(transcripts.len(), 1);
    let lines = &transcripts[0];
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();

    assert_eq!(kinds[0], "meta");
    assert_eq!(lines[0]["worker"], "main");
    assert_eq!(lines[0]["model"], model_for(wire));
    let input = lines.iter().find(|l| l["kind"] == "input").unwrap();
    assert_eq!(input["content"], "write t.txt");
    assert_eq!(*kinds.last().unwrap(), "ended");
    let ended = lines.last().unwrap();
    assert_eq!(
        (&ended["reason"], &ended["message"]),
        (&json!("completed"), &json!("Wrote it."))
    );

    let call = lines.iter().find(|l| l["kind"] == "toolCall").unwrap();
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["status"], "success");
    assert_eq!(call["proposedArgs"], args);
    assert_eq!(call["executedArgs"], args);
    assert_eq!(call["decidedBy"], "mode");

    // The conversation: the input, the assistant's call, the result, the answer.
    let messages: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "message")
        .map(|l| &l["message"])
        .collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].to_string().contains("write t.txt"));
    assert!(messages[1].to_string().contains("call_1"));
    assert!(messages[2].to_string().contains("call_1"));
    assert!(messages[3].to_string().contains("Wrote it."));

    // Every display event, in the order printed, from sessionStarted to sessionEnded.
    let events: Vec<&str> = lines
        .iter()
        .filter(|l| l["kind"] == "event")
        .map(|l| l["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(events.first(), Some(&"sessionStarted"));
    assert_eq!(events.last(), Some(&"sessionEnded"));
    // The call is recorded once, as its `toolCall` line, result included.
    assert!(
        !events.contains(&"toolResult") && !events.contains(&"toolStarted"),
        "{events:?}"
    );
    assert_eq!(call["value"]["kind"], "diff", "{call}");
    let order = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(order("input") < order("toolCall"), "{kinds:?}");
}

#[test]
fn sub_worker_tool_calls_are_in_the_transcript() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let zone = "sandbox:\n  zones:\n    - name: out\n      mode: rw\n";
    project(
        &env,
        &[
            (
                "main.worker",
                worker(
                    "main",
                    &format!("{zone}toolsets:\n  workers:\n    allowed_workers: [helper]\n"),
                ),
            ),
            (
                "helper.worker",
                worker("helper", &format!("{zone}toolsets:\n  filesystem: {{}}\n")),
            ),
        ],
    );
    let args = json!({"path": "/out/by-helper.txt", "content": "helped"});
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_main", "helper", json!({"input": "write it"}))]),
        wire.tool_calls(&[("call_helper", "write_file", args.clone())]),
        wire.text("written"),
        wire.text("The helper wrote it."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go", "-a", "approve_all"],
    );
    assert_exit(&output, 0);
    assert_eq!(
        env.read("proj/out/by-helper.txt").as_deref(),
        Some("helped")
    );
    let transcripts = env.transcripts("proj");
    let calls: Vec<&str> = transcripts[0]
        .iter()
        .filter(|l| l["kind"] == "toolCall")
        .map(|l| l["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        ["call_helper", "call_main"],
        "every settled call, the sub-worker's too, keeps its arguments in the transcript \
         (docs/protocol.md: every decision is auditable)"
    );
}

#[test]
fn without_a_program_config_the_transcript_goes_next_to_the_worker() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    env.write("solo/main.worker", &worker("main", ""));
    let server = MockServer::start_blocking(vec![wire.text("Hi.")]);
    let output = run(&env, wire, &server, &["solo/main.worker", "hello"]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Hi.\n");
    let transcripts = env.transcripts("solo");
    assert_eq!(transcripts.len(), 1);
    assert_eq!(transcripts[0][0]["kind"], "meta");
}

#[test]
fn resume_continues_a_killed_chat_session_with_its_history() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let mut chat = fs_worker("");
    chat = chat.replacen("name: main\n", "name: main\nmode: chat\n", 1);
    project(&env, &[("main.worker", chat)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/one.txt", "content": "first"}),
        )]),
        wire.text("never delivered")
            .delayed(Duration::from_secs(60)),
    ]);
    let child = spawn(
        &env,
        wire,
        &server,
        &["proj/main.worker", "write one.txt", "-a", "approve_all"],
    );
    assert!(server.wait_for_requests(2, LIMIT));
    send_signal(child.id(), "-KILL");
    let killed = wait_for_exit(child);
    assert_eq!(killed.status.code(), None, "killed by the signal");
    assert_eq!(env.read("proj/out/one.txt").as_deref(), Some("first"));
    let transcripts = env.transcripts("proj");
    let lines = &transcripts[0];
    assert!(
        lines.iter().any(|l| l["kind"] == "toolCall"),
        "flushed per entry: {lines:#?}"
    );
    let id = only_session_id(&env);

    let server = MockServer::start_blocking(vec![wire.text("Resumed and finished.")]);
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "resume", &id])
        .envs(provider_env(wire, &server))
        .write_stdin("now finish\n")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("Resumed and finished."),
        "{}",
        render(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].body.to_string();
    for earlier in ["write one.txt", "call_1", "now finish"] {
        assert!(
            body.contains(earlier),
            "the history has {earlier:?}: {body}"
        );
    }
    // The resumed run goes on in the same transcript.
    let transcripts = env.transcripts("proj");
    assert_eq!(transcripts.len(), 1);
    let inputs: Vec<_> = transcripts[0]
        .iter()
        .filter(|l| l["kind"] == "input")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["write one.txt", "now finish\n"]);
    let last = transcripts[0].last().unwrap();
    assert_eq!(
        (&last["kind"], &last["reason"]),
        (&json!("ended"), &json!("completed"))
    );
}

/// Every JSON lines file of a run — `--json` on stdout, the transcript, the `--record` file —
/// escapes U+2028 and U+2029, which JavaScript and Python line readers take for line breaks.
#[test]
fn line_separators_never_reach_a_json_lines_file_raw() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let content = "para\u{2029}line\u{2028}end\u{85}";
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/sep.txt", "content": content}),
        )]),
        wire.text("Done\u{2028}now."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "write\u{2028}it",
            "--json",
            "-a",
            "approve_all",
            "--record",
            "session.rec",
        ],
    );
    assert_exit(&output, 0);
    assert_eq!(env.read("proj/out/sep.txt").as_deref(), Some(content));

    let raw = |name: &str, text: &str| {
        for c in ['\u{85}', '\u{2028}', '\u{2029}'] {
            assert!(!text.contains(c), "{name}: a raw {c:?}: {text}");
        }
    };
    let out = stdout(&output);
    raw("stdout", &out);
    let events = events(&output);
    let ended = events.last().unwrap();
    assert_eq!(ended["type"], "sessionEnded");
    assert_eq!(ended["message"], "Done\u{2028}now.", "read back unchanged");

    let dir = env.path().join("proj/.golem-forge/sessions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let transcript = std::fs::read_to_string(file).unwrap();
    raw("transcript", &transcript);
    let lines = &env.transcripts("proj")[0];
    assert!(
        transcript.contains(r"para\u2029line\u2028end\u0085"),
        "{transcript}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "input" && l["content"] == "write\u{2028}it")
    );

    let recording = env.read("session.rec").unwrap();
    raw("recording", &recording);
    for line in recording.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

#[test]
fn a_session_in_use_by_another_process_is_refused_naming_it() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.text("never delivered")
            .delayed(Duration::from_secs(60)),
    ]);
    let child = spawn(&env, wire, &server, &["proj/main.worker", "take your time"]);
    assert!(server.wait_for_requests(1, LIMIT));
    let id = only_session_id(&env);
    let second = MockServer::start_blocking(vec![wire.text("must not run")]);
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "resume", &id, "me too"])
        .envs(provider_env(wire, &second))
        .output()
        .unwrap();
    assert_exit(&output, 2);
    let stderr = stderr(&output);
    assert!(
        stderr.contains(&format!("session {id} is in use by process {}", child.id())),
        "{stderr}"
    );
    assert!(second.requests().is_empty(), "the second process never ran");
    send_signal(child.id(), "-KILL");
    wait_for_exit(child);
    // Once the holder is gone (even killed), the session can be resumed.
    let third = MockServer::start_blocking(vec![wire.text("Now it runs.")]);
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "resume", &id, "now"])
        .envs(provider_env(wire, &third))
        .output()
        .unwrap();
    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("Now it runs."),
        "{}",
        render(&output)
    );
}

/// The id of the one session of the program `proj`.
pub(crate) fn only_session_id(env: &TestEnv) -> String {
    env.path()
        .join("proj/.golem-forge/sessions")
        .read_dir()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}
