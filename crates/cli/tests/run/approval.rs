//! Tool calls through the gate, end to end: unknown tools, invalid arguments, denials
//! (auto_deny, no terminal), approve_all, and zone approval — what reaches the files, what the
//! model is told, and the `--json` events.

use super::*;

#[test]
fn an_unknown_tool_gets_an_error_result_and_the_run_succeeds() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        env.write("proj/out/note.txt", "hello from the zone");
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                ("call_1", "frobnicate", json!({"x": 1})),
                ("call_2", "read_file", json!({"path": "/out/note.txt"})),
            ]),
            wire.text("All done."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "read", "the", "note"],
        );
        assert_exit(&output, 0);
        assert_eq!(stdout(&output), "All done.\n", "{wire:?}");

        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{wire:?}");
        assert!(requests.iter().all(|r| r.path == wire.path()), "{wire:?}");
        assert!(
            requests[0].body.to_string().contains("read the note"),
            "{wire:?}: the input reaches the model"
        );
        // Both calls of the turn are answered, in order.
        let results = results_sent(wire, &server, 1);
        let ids: Vec<_> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["call_1", "call_2"], "{wire:?}");
        assert!(
            results[0].content.contains("Tool not found: frobnicate"),
            "{wire:?}: {results:?}"
        );
        assert!(wire.is_error(&results[0]), "{wire:?}: {results:?}");
        assert!(
            results[1].content.contains("hello from the zone"),
            "{wire:?}: {results:?}"
        );
        assert!(!wire.is_error(&results[1]), "{wire:?}: {results:?}");
    }
}

#[test]
fn empty_blank_and_control_character_tool_names_are_not_found_and_the_run_goes_on() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        env.write("proj/out/note.txt", "hello from the zone");
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                ("call_1", "", json!({})),
                ("call_2", "   ", json!({})),
                (
                    "call_3",
                    "read_file\u{7}\u{1b}[2J",
                    json!({"path": "/out/note.txt"}),
                ),
                ("call_4", "read_file", json!({"path": "/out/note.txt"})),
            ]),
            wire.text("All done."),
        ]);
        let output = run(&env, wire, &server, &["proj/main.worker", "read", "--json"]);
        assert_exit(&output, 0);
        let events = events(&output);
        let ended = events.last().unwrap();
        assert_eq!(ended["type"], "sessionEnded", "{wire:?}");
        assert_eq!(ended["reason"], "completed", "{wire:?}: {ended}");
        assert_eq!(ended["message"], "All done.", "{wire:?}");

        let results = results_sent(wire, &server, 1);
        let ids: Vec<_> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["call_1", "call_2", "call_3", "call_4"], "{wire:?}");
        for (result, quoted) in
            results
                .iter()
                .zip([r#""""#, r#""   ""#, r#""read_file\u{7}\u{1b}[2J""#])
        {
            assert!(wire.is_error(result), "{wire:?}: {result:?}");
            assert!(
                result.content.contains("NOT_FOUND")
                    && result
                        .content
                        .contains(&format!("Tool not found: {quoted}")),
                "{wire:?}: the name is quoted, its control characters escaped: {result:?}"
            );
            assert!(!result.content.contains('\u{1b}'), "{wire:?}: {result:?}");
        }
        assert!(!wire.is_error(&results[3]), "{wire:?}: {results:?}");
        assert!(
            results[3].content.contains("hello from the zone"),
            "{wire:?}"
        );
        let not_found: Vec<&Value> = of_type(&events, "toolResult")
            .into_iter()
            .filter(|e| e["value"]["data"]["code"] == "NOT_FOUND")
            .collect();
        assert_eq!(not_found.len(), 3, "{wire:?}: {events:?}");
    }
}

#[test]
fn invalid_arguments_are_refused_and_the_tool_never_runs() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/out/a.txt", "contents": "typo in the key"}),
            )]),
            wire.text("I will fix my arguments."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "write", "--json", "-a", "approve_all"],
        );
        assert_exit(&output, 0);
        let results = results_sent(wire, &server, 1);
        assert_eq!(results.len(), 1, "{wire:?}");
        assert!(
            results[0].content.contains("INVALID_ARGUMENTS"),
            "{wire:?}: {results:?}"
        );
        assert!(
            results[0].content.contains("content"),
            "{wire:?}: names the missing key: {results:?}"
        );
        assert!(wire.is_error(&results[0]), "{wire:?}");
        assert_eq!(env.read("proj/out/a.txt"), None, "{wire:?}");
        let events = events(&output);
        assert!(
            of_type(&events, "toolStarted").is_empty(),
            "{wire:?}: {events:#?}"
        );
        assert_eq!(of_type(&events, "toolResult")[0]["status"], "error");
    }
}

/// A project whose `out/a.txt` holds `original`, and a model that asks to overwrite it, then
/// answers "It was denied.".
fn overwrite_of_a_txt(wire: Wire) -> (TestEnv, MockServer) {
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    env.write("proj/out/a.txt", "original");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "overwritten"}),
        )]),
        wire.text("It was denied."),
    ]);
    (env, server)
}

#[test]
fn auto_deny_sends_a_denied_result_with_the_note_and_leaves_the_file_untouched() {
    for wire in Wire::ALL {
        let (env, server) = overwrite_of_a_txt(wire);
        let output = run(
            &env,
            wire,
            &server,
            &[
                "proj/main.worker",
                "change a.txt",
                "-a",
                "auto_deny",
                "--json",
            ],
        );
        assert_exit(&output, 0);
        let results = results_sent(wire, &server, 1);
        let text = wire.result_text(&results[0]);
        assert!(text.starts_with("[DENIED]"), "{wire:?}: {results:?}");
        assert!(
            text.contains("write_file was denied: approval mode is auto_deny"),
            "{wire:?}: the note names the tool: {results:?}"
        );
        assert!(wire.is_error(&results[0]), "{wire:?}");
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("original"));

        let events = events(&output);
        let resolved = of_type(&events, "approvalResolved");
        assert_eq!(resolved.len(), 1, "{wire:?}: {events:#?}");
        assert_eq!(resolved[0]["approved"], false);
        assert_eq!(resolved[0]["decidedBy"], "mode");
        assert!(of_type(&events, "toolStarted").is_empty(), "{wire:?}");
        assert_eq!(of_type(&events, "toolResult")[0]["status"], "denied");
    }
}

/// What the user sees of a denied call at the default trace: the call, that it was denied and
/// why, then the model's answer; the same on both wires.
#[test]
fn the_trace_of_a_denied_call_as_the_user_sees_it() {
    let shown: Vec<String> = Wire::ALL
        .into_iter()
        .map(|wire| {
            let (env, server) = overwrite_of_a_txt(wire);
            let output = run(
                &env,
                wire,
                &server,
                &["proj/main.worker", "change a.txt", "-a", "auto_deny"],
            );
            assert_exit(&output, 0);
            assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("original"));
            trace_redacted(&env, &render(&output))
        })
        .collect();
    assert_eq!(shown[0], shown[1], "the wires' traces differ");
    insta::assert_snapshot!(shown[0]);
}

#[test]
fn every_call_of_the_trace_has_its_line_once_within_80_columns() {
    // A denied write with long arguments, a blocked delete and a started read: each call's
    // `⏺` line is drawn once (the two that never started from their results) and nothing the
    // trace draws is wider than the 80 columns of a screen that is not a terminal.
    let zone = "      approval: { delete: blocked }\n";
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(zone))]);
        env.write("proj/out/a.txt", "original");
        let long = "a line that goes on and on, ".repeat(8);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                (
                    "call_1",
                    "write_file",
                    json!({"path": "/out/a.txt", "content": long}),
                ),
                ("call_2", "delete_file", json!({"path": "/out/a.txt"})),
                ("call_3", "read_file", json!({"path": "/out/a.txt"})),
            ]),
            wire.text("Read it."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "tidy up", "-a", "auto_deny"],
        );
        assert_exit(&output, 0);
        let trace = String::from_utf8_lossy(&output.stderr).into_owned();
        for tool in ["write_file", "delete_file", "read_file"] {
            let lines = trace
                .lines()
                .filter(|line| line.starts_with(&format!("⏺ {tool} ")))
                .count();
            assert_eq!(lines, 1, "{wire:?}: one line for {tool}:\n{trace}");
        }
        let call = trace
            .lines()
            .find(|l| l.starts_with("⏺ write_file"))
            .unwrap();
        assert!(
            call.starts_with("⏺ write_file {") && call.ends_with('…'),
            "{wire:?}: the long arguments are shortened: {call}"
        );
        let order: Vec<&str> = trace
            .lines()
            .filter(|l| l.starts_with('⏺') || l.trim_start().starts_with('⎿'))
            .map(|l| l.split_whitespace().nth(1).unwrap_or(""))
            .collect();
        assert_eq!(
            order,
            ["write_file", "⊘", "delete_file", "⊘", "read_file", "✓"],
            "{wire:?}: each result follows its call:\n{trace}"
        );
        for line in trace.lines() {
            assert!(
                line.chars().count() <= 80,
                "{wire:?}: wider than 80 columns: {line:?}\n{trace}"
            );
        }
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("original"));
    }
}

#[test]
fn interactive_approval_without_a_terminal_denies_with_the_headless_message() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/out/new.txt", "content": "x"}),
            )]),
            wire.text("Nobody approved."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "write", "-a", "interactive"],
        );
        assert_exit(&output, 0);
        let results = results_sent(wire, &server, 1);
        let text = wire.result_text(&results[0]);
        assert!(text.starts_with("[DENIED]"), "{wire:?}: {results:?}");
        assert!(
            text.contains(&headless_message("write_file")),
            "{wire:?}: {results:?}"
        );
        assert_eq!(env.read("proj/out/new.txt"), None, "{wire:?}");
    }
}

#[test]
fn the_headless_denial_reaches_stderr_whole_with_its_hint() {
    for trace in [None, Some("summary"), Some("normal")] {
        let wire = Wire::OpenAi;
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/out/a-rather-long-file-name-for-the-line.txt", "content": "x"}),
            )]),
            wire.text("Nobody approved."),
        ]);
        let mut args = vec!["proj/main.worker", "write", "-a", "interactive"];
        if let Some(level) = trace {
            args.extend(["--trace", level]);
        }
        let output = run(&env, wire, &server, &args);
        assert_exit(&output, 0);
        // The message may be wrapped over several lines, never cut.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let joined = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(&headless_message("write_file")),
            "{trace:?}: {stderr}"
        );
        // (The call's own line above it is shortened to the width; the message is not.)
        let message = stderr.lines().filter(|line| !line.starts_with("⏺ "));
        assert!(
            message.clone().all(|line| !line.contains('…')),
            "{trace:?}: cut: {stderr}"
        );
        assert!(message.count() > 1, "{trace:?}: {stderr}");
    }
}

#[test]
fn approve_all_writes_the_file_and_json_prints_only_the_events() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/out/report.md", "content": "# Report\n\nAll good.\n"}),
            )]),
            wire.text("Saved the report."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &[
                "proj/main.worker",
                "-i",
                "write a report",
                "-a",
                "approve_all",
                "--json",
            ],
        );
        assert_exit(&output, 0);
        assert_eq!(
            env.read("proj/out/report.md").as_deref(),
            Some("# Report\n\nAll good.\n"),
            "{wire:?}"
        );
        let events = events(&output);
        assert_eq!(
            types(&events),
            [
                "sessionStarted",
                "message",
                "workerStarted",
                "usage",
                "workerProgress",
                "workerProgress",
                "approvalResolved",
                "toolStarted",
                "toolResult",
                "workerProgress",
                "streaming",
                "usage",
                "workerProgress",
                "workerFinished",
                "turnEnded",
                "sessionEnded"
            ],
            "{wire:?}"
        );
        let started = &events[0];
        assert_eq!(started["worker"], "main");
        assert_eq!(started["model"], model_for(wire));
        assert!(started["sessionId"].is_string() && started["protocolVersion"].is_string());
        let resolved = of_type(&events, "approvalResolved")[0];
        assert_eq!(
            (&resolved["approved"], &resolved["decidedBy"]),
            (&json!(true), &json!("mode"))
        );
        let result = of_type(&events, "toolResult")[0];
        assert_eq!(result["toolCallId"], "call_1");
        assert_eq!(result["status"], "success");
        let streamed: String = of_type(&events, "streaming")
            .iter()
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(streamed, "Saved the report.");
        assert_eq!(of_type(&events, "streaming").last().unwrap()["done"], true);
        let ended = events.last().unwrap();
        assert_eq!(ended["reason"], "completed");
        assert_eq!(ended["message"], "Saved the report.");

        let results = results_sent(wire, &server, 1);
        assert!(!wire.is_error(&results[0]), "{wire:?}: {results:?}");
    }
}

#[test]
fn a_denied_result_says_denied_once() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "delete_file", json!({"path": "/out/doomed.txt"}))]),
        wire.text("ok"),
    ]);
    env.write("proj/out/doomed.txt", "here");
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "delete it", "-a", "auto_deny"],
    );
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert_eq!(
        results[0].content, "[DENIED] delete_file was denied: approval mode is auto_deny",
        "the marker, then the note, without a second `Error [DENIED]:`"
    );
}

#[test]
fn a_pre_approved_zone_create_writes_without_asking_even_with_no_terminal() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[(
            "main.worker",
            fs_worker("      approval: { create: preApproved }\n"),
        )],
    );
    env.write("proj/out/old.txt", "old");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            (
                "call_new",
                "write_file",
                json!({"path": "/out/new.txt", "content": "created"}),
            ),
            // Overwriting is `write`, which still asks (and nobody can answer).
            (
                "call_old",
                "write_file",
                json!({"path": "/out/old.txt", "content": "changed"}),
            ),
        ]),
        wire.text("Done."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go", "-a", "interactive", "--json"],
    );
    assert_exit(&output, 0);
    assert_eq!(env.read("proj/out/new.txt").as_deref(), Some("created"));
    assert_eq!(env.read("proj/out/old.txt").as_deref(), Some("old"));
    let events = events(&output);
    let decided: Vec<_> = of_type(&events, "approvalResolved")
        .iter()
        .map(|e| {
            (
                e["toolCallId"].as_str().unwrap(),
                e["approved"].as_bool().unwrap(),
                e["decidedBy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [("call_new", true, "policy"), ("call_old", false, "mode")]
    );
    let results = results_sent(wire, &server, 1);
    assert!(!wire.is_error(&results[0]), "{results:?}");
    assert!(
        results[1].content.contains(&headless_message("write_file")),
        "{results:?}"
    );
}

#[test]
fn a_worker_without_zones_works_in_the_programs_default_zones() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    env.write(
        "proj/golem-forge.config.yaml",
        "zones:\n  - { name: notes, path: shared/notes, mode: ro }\n",
    );
    env.write(
        "proj/workers/main.worker",
        &worker("main", "toolsets:\n  filesystem: {}\n"),
    );
    env.write("proj/shared/notes/a.txt", "a note from the default zone");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "read_file", json!({"path": "/notes/a.txt"}))]),
        wire.text("Read it."),
    ]);
    let output = run(&env, wire, &server, &["proj/workers/main.worker", "read"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(
        results[0].content.contains("a note from the default zone"),
        "{results:?}"
    );
    // `check` shows the zone the worker gets.
    let checked = env
        .command()
        .args([
            "check",
            "proj/workers/main.worker",
            "--model",
            "test:default",
        ])
        .output()
        .unwrap();
    let shown = stdout(&checked);
    let row = shown
        .lines()
        .find(|line| line.contains("/notes"))
        .unwrap_or_else(|| panic!("{}", render(&checked)));
    assert!(
        row.contains(" ro ") && row.contains("shared/notes"),
        "{row}"
    );
}
