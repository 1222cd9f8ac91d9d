//! SIGINT during a model request and during a slow tool: exit 130, the summary turn only after
//! tool work, calls not yet run, and a second SIGINT.

use golem_testkit::mock::Chunk;

use super::*;

/// A reply of `wire` that streams its first words of `text`, then waits `pause` before the rest.
fn slow_stream(wire: Wire, text: &str, pause: Duration) -> Reply {
    wire.text_stalled(text, Chunk::Delay(pause))
}

#[test]
fn sigint_while_the_model_streams_with_no_tool_run_exits_130_at_once_without_a_summary() {
    // The model takes 20 s over every answer; the run must not wait for another one.
    let pause = Duration::from_secs(20);
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            slow_stream(wire, "Once upon a time, much later.", pause),
            slow_stream(wire, "Summary: nothing was done yet.", pause),
        ]);
        let child = spawn(&env, wire, &server, &["proj/main.worker", "slow task"]);
        assert!(
            server.wait_for_requests(1, LIMIT),
            "{wire:?}: the model was never asked"
        );
        let interrupted = std::time::Instant::now();
        send_signal(child.id(), "-INT");
        let output = wait_for_exit(child);
        let took = interrupted.elapsed();
        assert_exit(&output, 130);
        assert!(
            took < pause / 2,
            "{wire:?}: the run waited {took:?} after the interrupt"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{wire:?}: no summary request when no tool ran"
        );
        assert_eq!(stdout(&output), "[Interrupted]\n", "{wire:?}");
        assert!(
            !stderr(&output).contains("summarising"),
            "{wire:?}: {}",
            render(&output)
        );

        let transcripts = env.transcripts("proj");
        assert_eq!(transcripts.len(), 1, "{wire:?}");
        let last = transcripts[0].last().unwrap();
        assert_eq!(last["kind"], "ended", "{wire:?}: {last}");
        assert_eq!(last["reason"], "interrupted", "{wire:?}: {last}");
    }
}

#[test]
fn sigint_during_a_slow_tool_interrupts_it_and_skips_the_calls_not_yet_run() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(
            &env,
            &[
                (
                    "main.worker",
                    fs_worker("").replacen(
                        "toolsets:\n",
                        "toolsets:\n  workers:\n    allowed_workers: [helper]\n",
                        1,
                    ),
                ),
                ("helper.worker", worker("helper", "")),
            ],
        );
        // The slow tool is the delegation: the helper's model takes a minute to answer.
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                ("call_slow", "helper", json!({"input": "think hard"})),
                (
                    "call_next",
                    "write_file",
                    json!({"path": "/out/after.txt", "content": "x"}),
                ),
            ]),
            wire.text("too late").delayed(Duration::from_secs(60)),
            wire.text("Summary: the helper was interrupted."),
        ]);
        let child = spawn(
            &env,
            wire,
            &server,
            &["proj/main.worker", "go", "-a", "approve_all", "--json"],
        );
        assert!(server.wait_for_requests(2, LIMIT), "{wire:?}");
        send_signal(child.id(), "-INT");
        let output = wait_for_exit(child);
        assert_exit(&output, 130);
        assert_eq!(
            env.read("proj/out/after.txt"),
            None,
            "{wire:?}: a call not yet run never runs"
        );
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            3,
            "{wire:?}: the root's summary is the only request after the interrupt: {:#?}",
            requests.iter().map(|r| &r.body).collect::<Vec<_>>()
        );
        let results = results_sent(wire, &server, 2);
        let statuses: Vec<_> = results
            .iter()
            .map(|r| {
                (
                    r.tool_call_id.as_str(),
                    wire.result_text(r).contains("INTERRUPTED"),
                )
            })
            .collect();
        assert_eq!(
            statuses,
            [("call_slow", true), ("call_next", true)],
            "{wire:?}: {results:?}"
        );
        let events = events(&output);
        let ended = events.last().unwrap();
        assert_eq!(ended["type"], "sessionEnded", "{wire:?}");
        assert_eq!(ended["reason"], "interrupted", "{wire:?}");
        assert_eq!(
            ended["message"], "Summary: the helper was interrupted.",
            "{wire:?}"
        );
    }
}

/// Runs a worker that writes a file, then whose model and summary both hang, and interrupts
/// it twice: once while the model is asked, once while the summary is.
fn interrupt_twice(env: &TestEnv) -> Output {
    let wire = Wire::Anthropic;
    project(env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_write",
            "write_file",
            json!({"path": "/out/a.txt", "content": "x"}),
        )]),
        wire.text("too late").delayed(Duration::from_secs(60)),
        wire.text("summary too late")
            .delayed(Duration::from_secs(60)),
    ]);
    let child = spawn(
        env,
        wire,
        &server,
        &["proj/main.worker", "slow task", "-a", "approve_all"],
    );
    assert!(server.wait_for_requests(2, LIMIT));
    send_signal(child.id(), "-INT");
    assert!(
        server.wait_for_requests(3, LIMIT),
        "the summary is asked for after tool work"
    );
    send_signal(child.id(), "-INT");
    wait_for_exit(child)
}

#[test]
fn a_second_sigint_ends_the_run_even_while_the_summary_hangs() {
    let env = TestEnv::new();
    let output = interrupt_twice(&env);
    assert_exit(&output, 130);
    let transcripts = env.transcripts("proj");
    let last = transcripts[0].last().unwrap();
    assert_eq!(
        (&last["kind"], &last["reason"]),
        (&json!("ended"), &json!("interrupted"))
    );
}

#[test]
fn a_second_sigint_exits_at_once_instead_of_interrupting_again() {
    let env = TestEnv::new();
    let output = interrupt_twice(&env);
    assert_exit(&output, 130);
    let stderr = stderr(&output);
    assert_eq!(
        stderr.matches("Interrupting").count(),
        1,
        "the second Ctrl+C is not a new first one: {stderr}"
    );
    assert!(stderr.contains("Interrupted twice"), "{stderr}");
    assert!(
        stderr.contains("summarising… (Ctrl+C again to stop)"),
        "the summary is announced: {stderr}"
    );
}

#[test]
fn an_interrupted_run_says_how_to_resume_its_session_and_that_command_works() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![slow_stream(
        wire,
        "Once upon a time, much later.",
        Duration::from_secs(20),
    )]);
    server.set_fallback(wire.text("Picked up again."));
    let child = spawn(&env, wire, &server, &["proj/main.worker", "a long tale"]);
    assert!(
        server.wait_for_requests(1, LIMIT),
        "the model was never asked"
    );
    send_signal(child.id(), "-INT");
    let output = wait_for_exit(child);
    assert_exit(&output, 130);
    let err = stderr(&output);
    let transcripts = env.transcripts("proj");
    assert_eq!(transcripts.len(), 1);
    let id = std::fs::read_dir(env.path().join("proj/.golem-forge/sessions"))
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl").map(str::to_owned)
        })
        .next()
        .expect("a transcript file");
    let expected = format!(
        "Session {id} saved. Resume it with: cd proj && golem-forge sessions resume {id} \"your next input\""
    );
    assert!(err.contains(&expected), "{expected}\n{}", render(&output));

    // Run as printed, by a shell with `golem-forge` on the PATH.
    let command = expected.split_once("Resume it with: ").unwrap().1;
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_golem-forge"), bin.join("golem-forge")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let resumed = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(env.path())
        .env_clear()
        .env("HOME", env.path())
        .env("PATH", path)
        .envs(provider_env(wire, &server))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&resumed, 0);
    assert_eq!(
        stdout(&resumed),
        "Picked up again.\n",
        "{}",
        render(&resumed)
    );
    let request = server.requests().last().unwrap().body.to_string();
    for said in ["a long tale", "your next input"] {
        assert!(
            request.contains(said),
            "the resumed session carries {said}: {request}"
        );
    }
    assert_eq!(env.transcripts("proj").len(), 1, "the same session went on");
}
