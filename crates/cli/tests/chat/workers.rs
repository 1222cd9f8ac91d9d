//! The live tree of workers in the chat: while two levels of delegation run, the spinner sums
//! them up in one line, and `/workers` typed during the turn (shown after the spinner) draws
//! the tree — every running worker, its caller above it, what it does; between turns
//! `/workers` says none runs, and `/status` shows the budget per turn and what is left.

use super::*;

/// `scribe` (with `budget`) delegates to `helper`, which delegates to `checker`.
fn three_levels(env: &TestEnv, budget: &str) {
    project(
        env,
        &worker(&format!(
            "{budget}toolsets:\n  workers:\n    allowed_workers: [helper]\n"
        )),
    );
    env.write(
        "proj/helper.worker",
        "---\nname: helper\ndescription: helps\ntoolsets:\n  workers:\n    allowed_workers: [checker]\n---\nYou help.\n",
    );
    env.write(
        "proj/checker.worker",
        "---\nname: checker\ndescription: checks\n---\nYou check.\n",
    );
}

#[test]
fn workers_typed_during_a_turn_draws_the_tree_of_two_levels_of_delegation() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    three_levels(&env, "budget: {tokens: 100000}\n");
    // scribe → helper → checker, whose answer stalls until the turn is interrupted.
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_s", "helper", json!({"input": "help me"}))]),
        wire.tool_calls(&[("call_h", "checker", json!({"input": "check it"}))]),
        stalled(wire, "checking and checking"),
    ]);
    server.set_fallback(wire.text("Done."));
    let worker = format!("proj/{WORKER}.worker");
    let envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
    let mut chat = Chat::start(
        &env,
        &[
            "chat",
            &worker,
            "--model",
            model_for(wire),
            "--approval",
            "approve_all",
        ],
        &envs,
    );
    chat.ready();
    chat.send_line("check everything");
    chat.wait_for("▸ checker starts (depth 2)");
    // The spinner says what the sub-workers do (15 tokens each for scribe and helper).
    chat.wait_for("helper › checker: thinking · 30 tokens");

    chat.send("/workers");
    chat.wait_for("› /workers");
    chat.send("\r");
    chat.wait_for("workers\n");
    chat.wait_for("   └─ checker");
    let shown = chat.since();
    let tree: Vec<&str> = shown
        .lines()
        .skip_while(|line| line.trim() != "workers")
        .skip(1)
        .take(3)
        .map(str::trim_end)
        .collect();
    let model = model_for(wire);
    assert_eq!(
        tree,
        [
            format!("scribe · {model} · 30 tokens · 99,970 tokens left · running helper"),
            format!("└─ helper · {model} · 15 tokens · 99,970 tokens left · running checker"),
            format!("   └─ checker · {model} · 0 tokens · 99,970 tokens left · thinking"),
        ],
        "{}",
        chat.dump()
    );

    // Anything else typed during a turn is answered, not sent.
    chat.send("hello\r");
    chat.wait_for("hello: while a turn runs only /help and /workers work");

    chat.key_esc();
    chat.wait_for("interrupted");
    chat.wait_prompt();
    // The requests: the three workers' and the summary after the interrupt.
    for request in server.requests() {
        let body = request.body.to_string();
        assert!(
            !body.contains("hello") && !body.contains("/workers"),
            "nothing typed during the turn reaches the model: {body}"
        );
    }

    chat.send_line("/workers");
    chat.wait_for("no worker is running");
    chat.send_line("/status");
    chat.wait_for("budget per turn: 100,000 tokens (99,970 tokens left)");
}
