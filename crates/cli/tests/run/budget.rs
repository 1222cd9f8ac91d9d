//! Budgets end to end: `max_workers` refuses a fan-out beyond it and the run goes on; a child's
//! tokens stop its caller at the caller's budget (exit 3, the message naming the budget); a
//! sub-worker over its own budget is an error result for its caller; the cost budget counts
//! with the price table; a time budget stops a stalled turn; `--budget-*` only tightens; the
//! remaining budget rides on `usage` events. Every mock reply uses 10 input and 5 output
//! tokens.

use super::*;

/// A worker `name` with `budget` (a flow mapping, or empty for none) that may delegate to
/// `allowed`.
fn budgeted(name: &str, budget: &str, allowed: &[&str]) -> String {
    let mut front = String::new();
    if !budget.is_empty() {
        front.push_str(&format!("budget: {budget}\n"));
    }
    if !allowed.is_empty() {
        front.push_str(&format!(
            "toolsets:\n  workers:\n    allowed_workers: [{}]\n",
            allowed.join(", ")
        ));
    }
    worker(name, &front)
}

/// a delegates once to b, b answers, and a would answer last (if it were asked).
fn one_delegation(wire: Wire) -> MockServer {
    MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "b", json!({"input": "go"}))]),
        wire.text("b done"),
        wire.text("never asked for"),
    ])
}

#[test]
fn a_fan_out_beyond_max_workers_is_refused_and_the_run_goes_on() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(
            &env,
            &[
                ("a.worker", budgeted("a", "{max_workers: 2}", &["b"])),
                ("b.worker", budgeted("b", "", &[])),
            ],
        );
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                ("call_1", "b", json!({"input": "one"})),
                ("call_2", "b", json!({"input": "two"})),
                ("call_3", "b", json!({"input": "three"})),
            ]),
            wire.text("one done"),
            wire.text("two done"),
            wire.text("Two of three were done."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/a.worker", "fan out", "-a", "approve_all", "--json"],
        );
        assert_exit(&output, 0);
        assert_eq!(
            server.requests().len(),
            4,
            "{wire:?}: b ran twice, not three times"
        );
        let results = results_sent(wire, &server, 3);
        let ids: Vec<_> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["call_1", "call_2", "call_3"], "{wire:?}");
        assert!(!wire.is_error(&results[0]) && !wire.is_error(&results[1]));
        assert!(wire.is_error(&results[2]), "{wire:?}: {results:?}");
        assert!(
            results[2].content.contains(
                "cannot start worker b: worker a may start at most 2 sub-workers (budget.max_workers)"
            ),
            "{wire:?}: {results:?}"
        );
        let events = events(&output);
        assert_eq!(of_type(&events, "workerStarted").len(), 3, "{wire:?}");
        let ended = of_type(&events, "turnEnded")[0];
        assert_eq!(ended["status"], "completed");
    }
}

#[test]
fn a_childs_tokens_stop_the_parent_at_its_budget_with_exit_3() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(
            &env,
            &[
                ("a.worker", budgeted("a", "{tokens: 25}", &["b"])),
                ("b.worker", budgeted("b", "", &[])),
            ],
        );
        // a's call (15 tokens) then b's (15 more): 30 of a's 25.
        let server = one_delegation(wire);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/a.worker", "go", "-a", "approve_all", "--json"],
        );
        assert_exit(&output, 3);
        assert_eq!(server.requests().len(), 2, "{wire:?}: a asked nothing more");
        let events = events(&output);
        let message = "the token budget of worker a is spent: 30 tokens used of 25 (5 over)";
        let ended = of_type(&events, "turnEnded")[0];
        assert_eq!(ended["status"], "budgetExceeded", "{wire:?}");
        assert_eq!(ended["error"], message, "{wire:?}");
        let session = of_type(&events, "sessionEnded")[0];
        assert_eq!(session["reason"], "budgetExceeded", "{wire:?}");
        // The usage events say what is left: 10 after a's call, none after b's.
        let left: Vec<_> = of_type(&events, "usage")
            .iter()
            .map(|e| e["budget"]["tokens"].clone())
            .collect();
        assert_eq!(left, [json!(10), json!(0)], "{wire:?}");
        let finished = of_type(&events, "workerFinished");
        let root = finished.last().unwrap();
        assert_eq!(root["workerName"], "a");
        assert_eq!(root["error"], message);
        assert_eq!(root["usage"]["inputTokens"], 20, "b's tokens count for a");
    }

    // Without --json: the message and a hint on stderr, nothing on stdout.
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", budgeted("a", "{tokens: 25}", &["b"])),
            ("b.worker", budgeted("b", "", &[])),
        ],
    );
    let server = one_delegation(wire);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "-a", "approve_all", "-t", "quiet"],
    );
    assert_exit(&output, 3);
    assert_eq!(stdout(&output), "");
    let err = stderr(&output);
    assert!(
        err.contains("Error: the token budget of worker a is spent: 30 tokens used of 25"),
        "{err}"
    );
    assert!(
        err.contains("Hint: raise the limit under `budget:`"),
        "{err}"
    );
    let listing = env
        .command()
        .args(["sessions"])
        .current_dir(env.path().join("proj"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&listing.stdout).contains("budget exceeded"),
        "{}",
        render(&listing)
    );
}

#[test]
fn a_sub_worker_over_its_own_budget_is_an_error_result_for_its_caller() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", budgeted("a", "{tokens: 1000}", &["b"])),
            ("b.worker", budgeted("b", "{tokens: 20}", &["c"])),
            ("c.worker", budgeted("c", "", &[])),
        ],
    );
    // b's call (15) and c's (15): 30 of b's 20; a goes on.
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "b", json!({"input": "go"}))]),
        wire.tool_calls(&[("call_b", "c", json!({"input": "go"}))]),
        wire.text("c done"),
        wire.text("b ran out; I finished it myself."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "-a", "approve_all", "--json"],
    );
    assert_exit(&output, 0);
    assert_eq!(server.requests().len(), 4);
    let results = results_sent(wire, &server, 3);
    assert_eq!(results[0].tool_call_id, "call_a");
    assert!(wire.is_error(&results[0]));
    assert!(
        results[0].content.contains(
            "worker b stopped: the token budget of worker b is spent: 30 tokens used of 20 (10 over)"
        ),
        "{results:?}"
    );
    let events = events(&output);
    let b_started = of_type(&events, "workerStarted")[1];
    assert_eq!(
        b_started["budget"]["tokens"], 20,
        "b's own limit, tighter than a's 985 left"
    );
}

/// A program config pricing the mock models at $1,000 per million input tokens and $2,000 per
/// million output tokens: $0.02 a reply.
fn priced_project(env: &TestEnv, workers: &[(&str, String)]) {
    project(env, workers);
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 5\nprices:\n  \"anthropic:claude-mock\": {input: 1000, output: 2000}\n  \"openai:gpt-mock\": {input: 1000, output: 2000}\n",
    );
}

#[test]
fn the_cost_budget_counts_with_the_price_table() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        priced_project(
            &env,
            &[
                ("a.worker", budgeted("a", "", &["b"])),
                ("b.worker", budgeted("b", "", &[])),
            ],
        );
        let server = one_delegation(wire);
        let output = run(
            &env,
            wire,
            &server,
            &[
                "proj/a.worker",
                "go",
                "-a",
                "approve_all",
                "--json",
                "--budget-cost",
                "0.03",
            ],
        );
        assert_exit(&output, 3);
        let events = events(&output);
        let ended = of_type(&events, "turnEnded")[0];
        assert_eq!(
            ended["error"],
            "the cost budget of worker a is spent: $0.04 used of $0.03 ($0.01 over)",
            "{wire:?}"
        );
        let left = of_type(&events, "usage")[0]["budget"]["costUsd"]
            .as_f64()
            .unwrap();
        assert!((left - 0.01).abs() < 1e-9, "{wire:?}: {left}");
    }
}

#[test]
fn a_cost_budget_without_a_price_is_refused_before_anything_runs() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("a.worker", budgeted("a", "{cost_usd: 1}", &[]))]);
    let server = MockServer::start_blocking(vec![wire.text("never asked for")]);
    let output = run(&env, wire, &server, &["proj/a.worker", "go"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains(
            "worker a runs under a cost budget, but the price of anthropic:claude-mock is not known"
        ),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_time_budget_stops_a_stalled_turn() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("a.worker", budgeted("a", "", &[]))]);
    let mut stalled = wire.text("half of it");
    stalled.chunks.insert(4, golem_testkit::mock::Chunk::Hang);
    let server = MockServer::start_blocking(vec![stalled]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "--json", "--budget-time", "1s"],
    );
    assert_exit(&output, 3);
    let events = events(&output);
    let ended = of_type(&events, "turnEnded")[0];
    assert_eq!(ended["status"], "budgetExceeded");
    let error = ended["error"].as_str().unwrap();
    assert!(
        error.starts_with("the time budget of worker a ran out:") && error.ends_with("of 1 s"),
        "{error}"
    );
}

#[test]
fn budget_options_only_tighten_the_workers_budget() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("a.worker", budgeted("a", "{tokens: 1000}", &[]))]);
    let server = MockServer::start_blocking(vec![wire.text("done")]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "--json", "--budget-tokens", "100"],
    );
    assert_exit(&output, 0);
    let first = events(&output);
    assert_eq!(of_type(&first, "workerStarted")[0]["budget"]["tokens"], 100);
    assert_eq!(of_type(&first, "usage")[0]["budget"]["tokens"], 85);

    let server = MockServer::start_blocking(vec![wire.text("done")]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/a.worker", "go", "--json", "--budget-tokens", "5000"],
    );
    assert_exit(&output, 0);
    let second = events(&output);
    assert_eq!(
        of_type(&second, "usage")[0]["budget"]["tokens"],
        985,
        "the worker's own 1,000 stays the limit"
    );
}
