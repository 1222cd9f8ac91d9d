//! How a run ends and where its input comes from: max iterations and model errors (exit 1),
//! missing keys and bad worker files (exit 2), input precedence, and `--record` / `replay:`.

use super::*;

#[test]
fn max_iterations_fails_the_run_with_exit_1() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let look = |id: &str| wire.tool_calls(&[(id, "file_exists", json!({"path": "/out/x"}))]);
    let server = MockServer::start_blocking(vec![
        look("call_1"),
        look("call_2"),
        wire.text("never asked for"),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "loop", "--max-iterations", "2"],
    );
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("max_iterations"),
        "{}",
        render(&output)
    );
    assert_eq!(stdout(&output), "", "no answer is printed");
    assert_eq!(server.requests().len(), 2, "the model is asked twice");

    // With --json the end is an event.
    let server = MockServer::start_blocking(vec![look("call_1"), look("call_2")]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "loop",
            "--max-iterations",
            "1",
            "--json",
        ],
    );
    assert_exit(&output, 1);
    let events = events(&output);
    let ended = events.last().unwrap();
    assert_eq!(ended["type"], "sessionEnded");
    assert_eq!(ended["reason"], "failed");
    assert!(
        ended["message"]
            .as_str()
            .unwrap()
            .contains("max_iterations"),
        "{ended}"
    );
}

#[test]
fn a_model_error_fails_the_run_with_exit_1() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        // 400 is not retried.
        let server = MockServer::start_blocking(vec![Reply::json(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}"#,
        )]);
        let output = run(&env, wire, &server, &["proj/main.worker", "hello"]);
        assert_exit(&output, 1);
        assert!(
            stderr(&output).contains("prompt is too long"),
            "{wire:?}: the provider's message is shown: {}",
            render(&output)
        );
        assert_eq!(stdout(&output), "");
        let transcripts = env.transcripts("proj");
        let last = transcripts[0].last().unwrap();
        assert_eq!(
            (&last["kind"], &last["reason"]),
            (&json!("ended"), &json!("failed"))
        );
    }
}

#[test]
fn input_comes_from_the_flag_then_the_file_then_the_words_then_stdin() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    env.write("task.txt", "from the file");
    let cases: [(&[&str], Option<&str>, &str); 4] = [
        (
            &["-i", "from the flag", "-f", "task.txt", "from", "words"],
            Some("from stdin"),
            "from the flag",
        ),
        (
            &["-f", "task.txt", "from", "words"],
            Some("from stdin"),
            "from the file",
        ),
        (&["from", "words"], Some("from stdin"), "from words"),
        (&[], Some("from stdin"), "from stdin"),
    ];
    for (args, stdin, expected) in cases {
        let server = MockServer::start_blocking(vec![wire.text("ok")]);
        let mut cmd = env.command();
        cmd.args(["run", "proj/main.worker"])
            .args(args)
            .args(["--model", model_for(wire)])
            .envs(provider_env(wire, &server));
        if let Some(stdin) = stdin {
            cmd.write_stdin(stdin);
        }
        let output = cmd.output().unwrap();
        assert_exit(&output, 0);
        let body = server.requests()[0].body["messages"].to_string();
        assert!(body.contains(expected), "{args:?}: {body}");
        for other in ["from the flag", "from the file", "from words", "from stdin"] {
            assert!(
                other == expected || !body.contains(other),
                "{args:?}: {other:?} must not be sent: {body}"
            );
        }
    }
}

#[test]
fn a_recorded_run_replays_offline() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/r.txt", "content": "recorded"}),
        )]),
        wire.text("Recorded answer."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "go",
            "-a",
            "approve_all",
            "--record",
            "session.rec",
        ],
    );
    assert_exit(&output, 0);
    std::fs::remove_file(env.path().join("proj/out/r.txt")).unwrap();
    drop(server);

    let output = env
        .command()
        .args(["run", "proj/main.worker", "go", "-a", "approve_all"])
        .args(["--model", "replay:session.rec"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Recorded answer.\n");
    assert_eq!(env.read("proj/out/r.txt").as_deref(), Some("recorded"));
}

#[test]
fn a_missing_api_key_exits_2_with_a_hint_naming_the_variable() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let output = env
            .command()
            .args([
                "run",
                "proj/main.worker",
                "hello",
                "--model",
                model_for(wire),
            ])
            .output()
            .unwrap();
        assert_exit(&output, 2);
        let stderr = stderr(&output);
        let hint = stderr
            .lines()
            .find(|l| l.starts_with("Hint:"))
            .unwrap_or_else(|| panic!("{wire:?}: no hint: {stderr}"));
        assert!(hint.contains(api_key_env(wire)), "{wire:?}: {stderr}");
        assert_eq!(stdout(&output), "");
    }
}

#[test]
fn a_bad_worker_file_exits_2_naming_the_file_line_and_key() {
    let env = TestEnv::new();
    env.write(
        "proj/main.worker",
        "---\nname: main\ntoolset:\n  filesystem: {}\n---\nHello.\n",
    );
    let server = MockServer::start_blocking(Vec::new());
    let output = run(
        &env,
        Wire::Anthropic,
        &server,
        &["proj/main.worker", "hello"],
    );
    assert_exit(&output, 2);
    let stderr = stderr(&output);
    assert!(stderr.contains("main.worker"), "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
    assert!(stderr.contains("`toolset`"), "{stderr}");
    assert!(server.requests().is_empty(), "no model is asked");
}

/// A run whose first model reply is an `overloaded_error` event in a 200 stream, then an
/// answer; with `env` set.
fn run_after_a_stream_error(env_vars: &[(&str, &str)], keep_no_color: bool) -> Output {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let overloaded = Reply::sse(vec![golem_testkit::mock::sse(
        Some("error"),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )]);
    let server = MockServer::start_blocking(vec![overloaded, wire.text("done")]);
    let mut command = env.command();
    command
        .arg("run")
        .args(["proj/main.worker", "hello"])
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, &server))
        .envs(env_vars.iter().copied());
    if !keep_no_color {
        command.env_remove("NO_COLOR");
    }
    let output = command.output().unwrap();
    assert_exit(&output, 0);
    assert_eq!(server.requests().len(), 2);
    output
}

#[test]
fn a_retry_is_shown_once_as_a_stream_error() {
    let output = run_after_a_stream_error(&[], true);
    let stderr = stderr(&output);
    let retries: Vec<&str> = stderr.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(retries.len(), 1, "{}", render(&output));
    assert!(
        retries[0].contains("anthropic reported an error in the stream: overloaded_error"),
        "{}",
        retries[0]
    );
    assert!(!retries[0].contains("HTTP"), "{}", retries[0]);
    assert!(stdout(&output).contains("done"), "{}", render(&output));
}

#[test]
fn logs_on_a_redirected_stderr_have_no_colour() {
    let output = run_after_a_stream_error(&[("GOLEM_FORGE_LOG", "debug")], false);
    let stderr = stderr(&output);
    assert!(
        stderr.contains("retrying the model request"),
        "the debug log is on: {}",
        render(&output)
    );
    assert!(!stderr.contains('\u{1b}'), "{}", render(&output));
}

#[test]
fn the_retry_budget_comes_from_the_program_config() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    env.write(
        "proj/golem-forge.config.yaml",
        "model_requests:\n  max_retries: 1\n",
    );
    let server = MockServer::start_blocking(Vec::new());
    server.set_fallback(Reply::json(
        500,
        r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
    ));
    let output = run(&env, wire, &server, &["proj/main.worker", "hello"]);
    assert_exit(&output, 1);
    // One retry in all, not one per HTTP attempt and turn.
    assert_eq!(server.requests().len(), 2, "{}", render(&output));
    let stderr = stderr(&output);
    let retries: Vec<&str> = stderr.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(retries.len(), 1, "{}", render(&output));
    assert!(retries[0].contains("(HTTP 500)"), "{}", retries[0]);
}
