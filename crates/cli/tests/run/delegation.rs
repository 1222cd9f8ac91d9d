//! Delegation end to end: a three-level chain, the depth limit, a refused cycle, and what
//! the events and usage say about sub-workers.

use super::*;

#[test]
fn a_three_level_delegation_chain_runs_each_worker_once() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(
            &env,
            &[
                ("a.worker", delegating_worker("a", &["b"])),
                ("b.worker", delegating_worker("b", &["c"])),
                ("c.worker", worker("c", "")),
            ],
        );
        // Sub-workers inherit the caller's model, so one server answers all three in turn.
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_a", "b", json!({"input": "ask c for the number"}))]),
            wire.tool_calls(&[(
                "call_b",
                "c",
                json!({"input": "what is the number?", "instructions": "answer in digits"}),
            )]),
            wire.text("42"),
            wire.text("c says 42"),
            wire.text("The number is 42."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &[
                "proj/a.worker",
                "find the number",
                "-a",
                "approve_all",
                "--json",
            ],
        );
        assert_exit(&output, 0);
        let requests = server.requests();
        assert_eq!(requests.len(), 5, "{wire:?}");
        let c_request = requests[2].body.to_string();
        assert!(c_request.contains("You are the c worker."), "{wire:?}");
        assert!(c_request.contains("what is the number?"), "{wire:?}");
        assert!(c_request.contains("answer in digits"), "{wire:?}");
        assert!(!c_request.contains("You are the a worker."), "{wire:?}");
        let b_results = results_sent(wire, &server, 3);
        assert_eq!(b_results[0].tool_call_id, "call_b");
        assert!(
            b_results[0].content.contains("42"),
            "{wire:?}: {b_results:?}"
        );
        assert!(!wire.is_error(&b_results[0]), "{wire:?}");
        let a_results = results_sent(wire, &server, 4);
        assert_eq!(a_results[0].tool_call_id, "call_a");
        assert!(
            a_results[0].content.contains("c says 42"),
            "{wire:?}: {a_results:?}"
        );

        let events = events(&output);
        let started: Vec<_> = of_type(&events, "workerStarted")
            .iter()
            .map(|e| {
                (
                    e["workerName"].as_str().unwrap(),
                    e["depth"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(started, [("a", 0), ("b", 1), ("c", 2)], "{wire:?}");
        let finished: Vec<_> = of_type(&events, "workerFinished")
            .iter()
            .map(|e| {
                (
                    e["workerName"].as_str().unwrap(),
                    e["success"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            finished,
            [("c", true), ("b", true), ("a", true)],
            "{wire:?}"
        );
        assert_eq!(events.last().unwrap()["message"], "The number is 42.");
    }
}

#[test]
fn sub_worker_events_name_their_worker_and_the_delegating_call() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", delegating_worker("a", &["b"])),
            ("b.worker", delegating_worker("b", &["c"])),
            ("c.worker", worker("c", "")),
        ],
    );
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "b", json!({"input": "go"}))]),
        wire.tool_calls(&[("call_b", "c", json!({"input": "go"}))]),
        wire.text("c done"),
        wire.text("b done"),
        wire.text("a done"),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "-a", "approve_all", "--json"],
    );
    assert_exit(&output, 0);
    let events = events(&output);
    // The call b makes is reported as b's, at depth 1.
    let result = of_type(&events, "toolResult")
        .into_iter()
        .find(|e| e["toolCallId"] == "call_b")
        .unwrap();
    let started = of_type(&events, "workerStarted");
    let b_id = started[1]["workerId"].clone();
    assert_eq!(
        result["worker"],
        json!({"name": "b", "depth": 1, "id": b_id}),
        "{result}"
    );
    let parents: Vec<_> = started
        .iter()
        .map(|e| e["parentToolCallId"].clone())
        .collect();
    assert_eq!(
        parents,
        [Value::Null, json!("call_a"), json!("call_b")],
        "workerStarted of a sub-worker names the call that started it: {events:#?}"
    );
    // Each worker has its own id, and names its caller's.
    let ids: Vec<_> = started.iter().map(|e| e["workerId"].clone()).collect();
    let callers: Vec<_> = started.iter().map(|e| e["parentId"].clone()).collect();
    assert!(ids.iter().all(Value::is_string), "{ids:?}");
    assert_eq!(callers, [Value::Null, ids[0].clone(), ids[1].clone()]);
    let finished: Vec<_> = of_type(&events, "workerFinished")
        .iter()
        .map(|e| e["workerId"].clone())
        .collect();
    assert_eq!(finished, [ids[2].clone(), ids[1].clone(), ids[0].clone()]);
}

#[test]
fn delegation_beyond_max_depth_is_refused() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", delegating_worker("a", &["b"])),
            ("b.worker", delegating_worker("b", &["c"])),
            ("c.worker", worker("c", "")),
        ],
    );
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 1\n",
    );
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "b", json!({"input": "ask c"}))]),
        wire.tool_calls(&[("call_b", "c", json!({"input": "too deep"}))]),
        wire.text("c is out of reach"),
        wire.text("Done."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "start", "-a", "approve_all"],
    );
    assert_exit(&output, 0);
    assert_eq!(server.requests().len(), 4, "c never runs");
    let refused = results_sent(wire, &server, 2);
    assert!(
        refused[0].content.contains("depth limit (1)"),
        "{refused:?}"
    );
    assert!(wire.is_error(&refused[0]));
}

#[test]
fn session_usage_counts_the_sub_workers_tokens() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", delegating_worker("a", &["b"])),
            ("b.worker", worker("b", "")),
        ],
    );
    // Every scripted turn reports 10 input and 5 output tokens.
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "b", json!({"input": "help"}))]),
        wire.text("b helped"),
        wire.text("done"),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "-a", "approve_all", "--json"],
    );
    assert_exit(&output, 0);
    let events = events(&output);
    let ended = events.last().unwrap();
    assert_eq!(
        ended["usage"],
        json!({"inputTokens": 30, "outputTokens": 15}),
        "three model turns were paid for, one of them by the sub-worker: {ended}"
    );
}

#[test]
fn a_delegation_cycle_is_refused_with_an_error_naming_the_cycle() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(
            &env,
            &[
                ("a.worker", delegating_worker("a", &["b"])),
                ("b.worker", delegating_worker("b", &["a"])),
            ],
        );
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_a", "b", json!({"input": "ask a"}))]),
            wire.tool_calls(&[("call_b", "a", json!({"input": "back to you"}))]),
            wire.text("a cannot be asked"),
            wire.text("Done anyway."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/a.worker", "start", "-a", "approve_all"],
        );
        assert_exit(&output, 0);
        assert_eq!(stdout(&output), "Done anyway.\n", "{wire:?}");
        assert_eq!(server.requests().len(), 4, "{wire:?}: a never runs twice");
        let refused = results_sent(wire, &server, 2);
        assert_eq!(refused[0].tool_call_id, "call_b");
        assert!(
            refused[0].content.contains("a → b → a"),
            "{wire:?}: names the cycle: {refused:?}"
        );
        assert!(wire.is_error(&refused[0]), "{wire:?}");
    }
}
