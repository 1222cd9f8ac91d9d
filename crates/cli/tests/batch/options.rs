//! A local batch keeps the options it was started with: killed mid-way and resumed, its items
//! run on the model it was given and their results reach its `--output` file; a fixed option
//! given again with another value is refused naming it, whether by `batch resume` or by the
//! same command again; `--concurrency` may change and is said; what its budget spent carries
//! over, so a resumed batch cannot spend it twice; a batch written before options were
//! recorded resumes with the options given, which are recorded from then on.

use std::time::{Duration, Instant};

use golem_testkit::mock::{MockServer, Reply};
use serde_json::Value;

use super::{WIRE, batch, batch_dir, lines_by_id, program};
use golem_testkit::cli::{TestEnv, model_for, provider_env, render, stderr};

fn batch_id(env: &TestEnv) -> String {
    batch_dir(env)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The batch's `batch.json`.
fn meta(env: &TestEnv) -> Value {
    serde_json::from_str(&std::fs::read_to_string(batch_dir(env).join("batch.json")).unwrap())
        .unwrap()
}

#[test]
fn a_batch_killed_mid_way_resumes_on_its_model_into_its_output_file() {
    let env = TestEnv::new();
    program(&env, 10);
    // Without --model, an item runs on the config's offline test model.
    env.write(
        "proj/golem-forge.config.yaml",
        "model: test:default\ndelegation:\n  max_depth: 2\n",
    );
    env.write("proj/w.worker", "---\nname: w\n---\nYou answer briefly.\n");
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done.").delayed(Duration::from_millis(150)));
    let mut child = env
        .std_command()
        .current_dir(env.path().join("proj"))
        .args([
            "batch",
            "w",
            "--input",
            "items.jsonl",
            "--model",
            model_for(WIRE),
        ])
        .args(["--output", "r.jsonl", "--concurrency", "1"])
        .envs(provider_env(WIRE, &server))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let results = env.path().join("proj/r.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&results).is_ok_and(|t| t.lines().count() >= 3) {
        assert!(Instant::now() < deadline, "no results in time");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = lines_by_id(&batch_dir(&env).join("results.jsonl")).len();
    assert!((3..10).contains(&before), "killed mid-way: {before}");
    let id = batch_id(&env);
    server.set_fallback(WIRE.text("Done."));

    // Other fixed options are refused, naming each difference, and nothing runs.
    let requests = server.requests().len();
    let other_model = batch(&env, &server, &["resume", &id, "--model", "test:default"]);
    assert_eq!(
        other_model.status.code(),
        Some(2),
        "{}",
        render(&other_model)
    );
    let told = stderr(&other_model);
    assert!(
        told.contains(&format!(
            "--model: {} when it started, test:default now",
            model_for(WIRE)
        )),
        "{told}"
    );
    assert!(told.contains(&format!("batch resume {id}")), "{told}");
    let same_command = batch(
        &env,
        &server,
        &[
            "w",
            "--input",
            "items.jsonl",
            "--output",
            "other.jsonl",
            "--retry",
            "2",
        ],
    );
    assert_eq!(
        same_command.status.code(),
        Some(2),
        "{}",
        render(&same_command)
    );
    let told = stderr(&same_command);
    assert!(
        told.contains("--output: ") && told.contains("other.jsonl now"),
        "{told}"
    );
    assert!(told.contains("--retry: 0 when it started, 2 now"), "{told}");
    assert_eq!(server.requests().len(), requests, "nothing ran");
    assert!(!env.path().join("proj/other.jsonl").exists());

    // Resumed with no options but another concurrency: the rest run as the batch started.
    let resumed = batch(&env, &server, &["resume", &id, "--concurrency", "3"]);
    assert!(resumed.status.success(), "{}", render(&resumed));
    let told = stderr(&resumed);
    assert!(
        told.contains("--concurrency 3 for this run (it was started with 1)"),
        "{told}"
    );
    assert!(
        told.contains(&format!("10/10 completed, {} in this run", 10 - before)),
        "{told}"
    );
    let all = lines_by_id(&batch_dir(&env).join("results.jsonl"));
    assert_eq!(all.len(), 10);
    for (item, (_, last)) in &all {
        assert_eq!(last["status"], "completed", "{item}: {last}");
        assert_eq!(
            last["answer"], "Done.",
            "{item} ran on another model: {last}"
        );
    }
    let output = lines_by_id(&results);
    assert_eq!(output.len(), 10, "{output:?}");
    assert!(output.values().all(|(_, last)| last["answer"] == "Done."));
    // The concurrency given is for that run only.
    let recorded = &meta(&env)["options"];
    assert_eq!(recorded["model"], model_for(WIRE), "{recorded}");
    assert_eq!(recorded["concurrency"], 1, "{recorded}");
    assert!(
        recorded["output"]
            .as_str()
            .is_some_and(|p| p.ends_with("proj/r.jsonl")),
        "{recorded}"
    );
    let status = batch(&env, &server, &["status", &id]);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains(&format!("options  --model {} --output ", model_for(WIRE))),
        "{shown}"
    );
}

#[test]
fn what_a_batch_budget_spent_carries_over_to_its_resume() {
    let env = TestEnv::new();
    program(&env, 5);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    // 15 tokens an item: the budget is spent after the second.
    let args = [
        "w",
        "--input",
        "items.jsonl",
        "--concurrency",
        "1",
        "--budget-tokens",
        "30",
    ];
    let first = batch(&env, &server, &args);
    assert_eq!(first.status.code(), Some(3), "{}", render(&first));
    assert_eq!(server.requests().len(), 2);
    let id = batch_id(&env);
    for again in [vec!["resume", id.as_str()], args.to_vec()] {
        let output = batch(&env, &server, &again);
        assert_eq!(server.requests().len(), 2, "the resumed batch overspent");
        assert_eq!(output.status.code(), Some(3), "{}", render(&output));
        assert!(
            stderr(&output).contains("2/5 completed, 0 in this run"),
            "{}",
            render(&output)
        );
    }
    let told = stderr(&first);
    assert!(
        told.contains("3 not run (the batch's budget is spent: 30 of 30 tokens)"),
        "{told}"
    );
    assert!(!told.contains("continue it"), "nothing would run: {told}");
    let raised = batch(&env, &server, &["resume", &id, "--budget-tokens", "100"]);
    assert_eq!(raised.status.code(), Some(2), "{}", render(&raised));
    assert!(
        stderr(&raised).contains("--budget-tokens: 30 when it started, 100 now"),
        "{}",
        render(&raised)
    );
    let status = batch(&env, &server, &["status", &id, "--json"]);
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["spent"]["tokens"], 30, "{status}");
    assert_eq!(status["options"]["budgetTokens"], 30, "{status}");
}

#[test]
fn a_batch_without_recorded_options_resumes_with_the_ones_given_and_records_them() {
    let env = TestEnv::new();
    program(&env, 3);
    let server = MockServer::start_blocking(vec![
        WIRE.text("One."),
        Reply::json(
            400,
            r#"{"error": {"message": "bad request", "type": "invalid_request_error"}}"#,
        ),
        WIRE.text("Three."),
    ]);
    let first = batch(
        &env,
        &server,
        &["w", "--input", "items.jsonl", "--concurrency", "1"],
    );
    assert_eq!(first.status.code(), Some(1), "{}", render(&first));
    // As an older golem-forge wrote it: no options.
    let path = batch_dir(&env).join("batch.json");
    let mut old = meta(&env);
    old.as_object_mut().unwrap().remove("options");
    std::fs::write(&path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let id = batch_id(&env);
    let status = batch(&env, &server, &["status", &id]);
    assert!(status.status.success(), "{}", render(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("options  not recorded"),
        "{}",
        render(&status)
    );

    server.set_fallback(WIRE.text("Two, at last."));
    let resumed = batch(
        &env,
        &server,
        &["resume", &id, "--retry-failed", "--output", "late.jsonl"],
    );
    assert!(resumed.status.success(), "{}", render(&resumed));
    assert!(
        stderr(&resumed).contains("its options were not recorded"),
        "{}",
        render(&resumed)
    );
    assert!(
        stderr(&resumed).contains("3/3 completed, 1 in this run"),
        "{}",
        render(&resumed)
    );
    let late = lines_by_id(&env.path().join("proj/late.jsonl"));
    assert_eq!(late.keys().collect::<Vec<_>>(), ["item-2"]);
    let recorded = &meta(&env)["options"];
    assert!(
        recorded["output"]
            .as_str()
            .is_some_and(|p| p.ends_with("proj/late.jsonl")),
        "{recorded}"
    );
    // Recorded now: another output is refused like any batch's.
    let other = batch(&env, &server, &["resume", &id, "--output", "x.jsonl"]);
    assert_eq!(other.status.code(), Some(2), "{}", render(&other));
}

#[test]
fn an_inbox_answer_continues_a_parked_item_with_its_batch_options() {
    let env = TestEnv::new();
    env.write("proj/golem-forge.config.yaml", "model: test:default\n");
    env.mkdir("proj/out");
    env.write(
        "proj/w.worker",
        "---\nname: w\nsandbox:\n  zones:\n    - name: out\n      mode: rw\ntoolsets:\n  \
         filesystem: {}\n---\nYou write files.\n",
    );
    env.write(
        "proj/items.jsonl",
        "{\"id\": \"b\", \"input\": \"write b\"}\n",
    );
    let server = MockServer::start_blocking(vec![]);
    // First match wins: the request that carries the call's result names its id.
    server.answer_when("call_b", WIRE.text("Wrote b."));
    server.answer_when(
        "write b",
        WIRE.tool_calls(&[(
            "call_b",
            "write_file",
            serde_json::json!({"path": "/out/b.txt", "content": "from b"}),
        )]),
    );
    let args = ["w", "--input", "items.jsonl", "--model", model_for(WIRE)];
    let parked = batch(
        &env,
        &server,
        &[&args[..], &["--approval", "defer", "--output", "r.jsonl"]].concat(),
    );
    assert_eq!(parked.status.code(), Some(4), "{}", render(&parked));
    let approved = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "approve", "1", "--resume"])
        .envs(provider_env(WIRE, &server))
        .output()
        .unwrap();
    assert_eq!(approved.status.code(), Some(0), "{}", render(&approved));
    let result: Value = serde_json::from_slice(&approved.stdout).unwrap();
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(
        result["answer"], "Wrote b.",
        "not on the batch's model: {result}"
    );
    assert_eq!(env.read("proj/out/b.txt").as_deref(), Some("from b"));
    // Its --output file has the item's parked line, then its final one.
    let output = lines_by_id(&env.path().join("proj/r.jsonl"));
    assert_eq!(output["b"].0, 2, "{output:?}");
    assert_eq!(output["b"].1["status"], "completed", "{output:?}");
}
