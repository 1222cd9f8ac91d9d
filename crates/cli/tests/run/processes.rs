//! `run_code` and `shell` end to end: the model's call runs in the real jail, the result (a
//! `code_result`) reaches the model and the `--json` stream; shell rules decide before any
//! prompt; secrets of golem-forge's own environment never reach the program; a bad toolset
//! configuration stops the launch with a message naming the key.

use super::*;

/// The worker `main` with the rw zone `out` and the given toolsets (YAML under `toolsets:`).
fn process_worker(toolsets: &str) -> String {
    worker(
        "main",
        &format!("sandbox:\n  zones:\n    - name: out\n      mode: rw\ntoolsets:\n{toolsets}"),
    )
}

fn one_call(wire: Wire, tool: &str, args: Value) -> Vec<Reply> {
    vec![
        wire.tool_calls(&[("call_1", tool, args)]),
        wire.text("Done."),
    ]
}

#[test]
fn run_code_runs_python_in_the_zone_and_the_model_sees_the_output() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", process_worker("  code: {}\n"))]);
        let code = "import os\nprint('cwd', os.getcwd())\nopen('made.txt', 'w').write('by python')\n\
                    print('key', os.environ.get('ANTHROPIC_API_KEY'), os.environ.get('OPENAI_API_KEY'))\n";
        let server = MockServer::start_blocking(one_call(
            wire,
            "run_code",
            json!({"language": "python", "code": code}),
        ));
        // The zone asks before a file is created in it; approve_all answers.
        let args = [
            "proj/main.worker",
            "go",
            "--json",
            "--approval",
            "approve_all",
        ];
        let output = run(&env, wire, &server, &args);
        assert_exit(&output, 0);
        assert_eq!(env.read("proj/out/made.txt").as_deref(), Some("by python"));
        let results = results_sent(wire, &server, 1);
        let text = &results[0].content;
        assert!(text.contains("exit 0"), "{wire:?}: {text}");
        assert!(text.contains("cwd /out"), "{wire:?}: {text}");
        // golem-forge itself holds the provider key; the program must not see it.
        assert!(text.contains("key None None"), "{wire:?}: {text}");
        assert!(!wire.is_error(&results[0]));
        let events = events(&output);
        let result = of_type(&events, "toolResult")[0];
        assert_eq!(result["status"], "success");
        assert_eq!(result["value"]["kind"], "code_result");
        assert_eq!(result["value"]["data"]["exitCode"], 0);
        let limits = &result["value"]["data"]["limits"];
        assert_eq!(limits["wallMs"], 60_000, "the default timeout: {limits}");
        assert_eq!(limits["network"], "none", "{limits}");
        let resolved = of_type(&events, "approvalResolved")[0];
        assert_eq!(
            resolved["decidedBy"], "policy",
            "pre-approved: it is jailed"
        );
    }
}

#[test]
fn run_code_past_its_timeout_is_a_timeout_error_with_the_partial_output() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker("  code: {}\n"))]);
    let code = "echo started; while :; do :; done";
    let server = MockServer::start_blocking(one_call(
        wire,
        "run_code",
        json!({"language": "bash", "code": code, "timeout": 1}),
    ));
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    let text = &results[0].content;
    assert!(text.contains("TIMEOUT"), "{text}");
    assert!(text.contains("started"), "partial output: {text}");
    assert!(wire.is_error(&results[0]));
}

const SHELL: &str = "  shell:\n    rules:\n      - { pattern: \"git \", approval: preApproved }\n      - { pattern: \"rm -rf\", approval: blocked }\n      - { pattern: \"rm \", approval: ask }\n";

#[test]
fn a_pre_approved_shell_command_runs_without_a_prompt() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker(SHELL))]);
    let server =
        MockServer::start_blocking(one_call(wire, "shell", json!({"command": "git --version"})));
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(results[0].content.contains("git version"), "{results:?}");
    let events = events(&output);
    assert!(of_type(&events, "approvalRequired").is_empty());
    assert_eq!(of_type(&events, "toolResult")[0]["status"], "success");
}

#[test]
fn blocked_and_unmatched_commands_never_reach_a_prompt() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker(SHELL))]);
    env.write("proj/out/keep.txt", "keep me");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("call_1", "shell", json!({"command": "rm -rf /out"})),
            ("call_2", "shell", json!({"command": "gitx status"})),
        ]),
        wire.text("Done."),
    ]);
    // Interactive mode with no terminal: a prompt would be a headless denial instead.
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let events = events(&output);
    assert!(
        of_type(&events, "approvalRequired").is_empty(),
        "{events:#?}"
    );
    let statuses: Vec<&Value> = of_type(&events, "toolResult")
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(statuses, [&json!("blocked"), &json!("blocked")]);
    let results = results_sent(wire, &server, 1);
    assert!(results[1].content.contains("gitx status"), "{results:?}");
    assert!(!stderr(&output).contains("no terminal is attached"));
    assert_eq!(env.read("proj/out/keep.txt").as_deref(), Some("keep me"));
}

#[test]
fn a_command_that_asks_is_denied_without_a_terminal_and_does_not_run() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker(SHELL))]);
    env.write("proj/out/file.txt", "still here");
    let server =
        MockServer::start_blocking(one_call(wire, "shell", json!({"command": "rm file.txt"})));
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(
        results[0].content.contains(&headless_message("shell")),
        "{results:?}"
    );
    assert_eq!(env.read("proj/out/file.txt").as_deref(), Some("still here"));
}

#[test]
fn shell_syntax_is_refused_with_a_clear_message() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker(SHELL))]);
    let server = MockServer::start_blocking(one_call(
        wire,
        "shell",
        json!({"command": "git log | head"}),
    ));
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(
        results[0].content.contains("INVALID_ARGUMENTS"),
        "{results:?}"
    );
    assert!(
        results[0].content.contains("without a shell"),
        "{results:?}"
    );
}

#[test]
fn a_bad_process_toolset_configuration_stops_the_launch() {
    let wire = Wire::Anthropic;
    for (toolsets, zone, message) in [
        (
            "  code:\n    workdir: nowhere\n",
            "out",
            "toolsets.code: workdir `nowhere` is not a zone of this worker (zones: out)",
        ),
        (
            "  shell:\n    timeout: 900\n",
            "out",
            "toolsets.shell: timeout (900 s) is longer than max_timeout (600 s)",
        ),
        (
            "  code: {}\n",
            "tmp",
            "zone `tmp` cannot be shown to programs at /tmp",
        ),
    ] {
        let env = TestEnv::new();
        let text = worker(
            "main",
            &format!(
                "sandbox:\n  zones:\n    - name: {zone}\n      mode: rw\ntoolsets:\n{toolsets}"
            ),
        );
        project(&env, &[("main.worker", text)]);
        let server = MockServer::start_blocking(vec![wire.text("never")]);
        let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
        assert_exit(&output, 2);
        assert!(stderr(&output).contains(message), "{}", render(&output));
        assert!(server.requests().is_empty());
    }
}

#[test]
fn check_reports_the_kernels_jail_support_and_the_shell_rules() {
    let env = TestEnv::new();
    project(
        &env,
        &[(
            "main.worker",
            process_worker(&format!("  code: {{}}\n{SHELL}")),
        )],
    );
    let text = check_offline(&env);
    assert!(text.contains("Jail (for run_code, shell)"), "{text}");
    for layer in ["user namespaces", "Landlock", "seccomp", "process limit"] {
        let row = text
            .lines()
            .find(|l| l.contains(layer))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(row.contains("available"), "{row}");
    }
    // The run-wide memory limit: a memory cgroup where one can be made (as root here, in CI),
    // otherwise said to be missing, with what that means.
    let memory = text
        .lines()
        .find(|l| l.contains("run memory limit"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        memory.contains("available (a memory cgroup per run)")
            || memory.contains("missing: no memory cgroup"),
        "{memory}"
    );
    assert!(
        text.contains("Limit: with the network off, programs cannot connect to named UNIX sockets"),
        "{text}"
    );
    let shell = text.lines().find(|l| l.contains("│ shell")).unwrap();
    assert!(shell.contains("git"), "{shell}");
    assert!(
        !text.contains("Network (where on)"),
        "no toolset has it on: {text}"
    );
}

#[test]
fn check_says_what_the_network_on_means_here() {
    let env = TestEnv::new();
    project(
        &env,
        &[(
            "main.worker",
            process_worker("  code: { network: { allow_private: [10.9.0.0/16] } }\n"),
        )],
    );
    let text = check_offline(&env);
    let line = text
        .lines()
        .find(|l| l.starts_with("Network (where on): "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("a network of the jail's own through")
            && line.contains("slirp4netns")
            && line.contains("not the host's loopback")
            && line.contains("169.254.0.0/16")
            && line.contains("allow_private"),
        "{line}"
    );
}

#[test]
fn secret_values_found_in_files_are_redacted_from_tool_output() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[(
            "main.worker",
            process_worker("  filesystem: {}\n  code: {}\n"),
        )],
    );
    // The key golem-forge itself holds (see `provider_env`), planted in a zone file.
    env.write("proj/out/leak.txt", "key=sk-ant-mock\n");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("call_1", "read_file", json!({"path": "/out/leak.txt"})),
            (
                "call_2",
                "run_code",
                json!({"language": "bash", "code": "cat leak.txt"}),
            ),
        ]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    for result in &results {
        assert!(result.content.contains("key=[redacted]"), "{results:?}");
        assert!(!result.content.contains("sk-ant-mock"), "{results:?}");
    }
    assert!(
        !stdout(&output).contains("sk-ant-mock"),
        "the --json events"
    );
    let transcripts = env.transcripts("proj");
    let text = serde_json::to_string(&transcripts).unwrap();
    assert!(!text.contains("sk-ant-mock"), "the transcript");
    assert!(text.contains("[redacted]"));
}

#[test]
fn the_kernel_probe_is_kept_between_launches_and_done_again_when_stale() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", process_worker("  code: {}\n"))]);
    let server = MockServer::start_blocking(vec![wire.text("Hi."), wire.text("Hi.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    let cache = "proj/.golem-forge/kernel-support.json";
    let text = env
        .read(cache)
        .expect("the first launch keeps what it found");
    let mut file: Value = serde_json::from_str(&text).unwrap();
    assert!(
        file["support"]["landlock"]["available"].is_string(),
        "{text}"
    );

    // On the same boot, kernel and helper the file is believed: a launch reads it instead of
    // probing, so a finding planted there decides the (strict) launch.
    file["support"]["landlock"] = json!({"missing": "planted by the test"});
    env.write(cache, &file.to_string());
    let refused = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&refused, 2);
    assert!(
        stderr(&refused).contains("Landlock: planted by the test"),
        "{}",
        render(&refused)
    );

    // Found on another boot, it is stale: the kernel is probed again and the file replaced.
    file["key"]["boot"] = json!("another boot");
    env.write(cache, &file.to_string());
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    let again: Value = serde_json::from_str(&env.read(cache).unwrap()).unwrap();
    assert_ne!(again["key"]["boot"], "another boot");
    assert!(again["support"]["landlock"]["available"].is_string());
}
