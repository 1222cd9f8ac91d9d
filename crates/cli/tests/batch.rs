//! `golem-forge batch` end to end against the mock provider: every item once, concurrently;
//! `kill -9` mid-batch then `batch resume` runs what was left, none twice; bad lines are named
//! and nothing runs; failures exit 1 and `--retry-failed` runs them again; the batch's token
//! budget stops new items (exit 3). Every mock reply uses 10 input and 5 output tokens.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use golem_testkit::Wire;
use golem_testkit::mock::{MockServer, Reply};
use serde_json::Value;

use golem_testkit::cli::{TestEnv, model_for, provider_env, render};

mod options;
mod traces;

pub(crate) const WIRE: Wire = Wire::OpenAi;

/// A program with the worker `w` (on the mock's model) and `count` items in `items.jsonl`.
pub(crate) fn program(env: &TestEnv, count: usize) {
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 2\n",
    );
    env.write(
        "proj/w.worker",
        &format!(
            "---\nname: w\nmodel: {}\n---\nYou answer briefly.\n",
            model_for(WIRE)
        ),
    );
    let items: String = (1..=count)
        .map(|n| format!("{{\"id\": \"item-{n}\", \"input\": \"do {n}\"}}\n"))
        .collect();
    env.write("proj/items.jsonl", &items);
}

pub(crate) fn batch(env: &TestEnv, server: &MockServer, args: &[&str]) -> std::process::Output {
    let mut command = env.command();
    command
        .current_dir(env.path().join("proj"))
        .arg("batch")
        .args(args)
        .envs(provider_env(WIRE, server));
    command.output().unwrap()
}

/// The batch's directory (the only one).
pub(crate) fn batch_dir(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.path().join("proj/.golem-forge/batches");
    let mut ids: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

/// What a batch printed (its `render`), with what changes from run to run redacted for a
/// snapshot: the temp dir and the batch's id.
fn summary_redacted(env: &TestEnv, text: &str) -> String {
    let id = batch_dir(env)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    text.replace(&env.path().display().to_string(), "[ROOT]")
        .replace(&id, "[BATCH]")
}

/// The parsed result lines of a results file, by id: how many lines each has and the last.
pub(crate) fn lines_by_id(path: &std::path::Path) -> BTreeMap<String, (usize, Value)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut by_id: BTreeMap<String, (usize, Value)> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let id = value["id"].as_str().unwrap().to_owned();
        let entry = by_id.entry(id).or_insert((0, Value::Null));
        entry.0 += 1;
        entry.1 = value;
    }
    by_id
}

#[test]
fn two_hundred_items_at_concurrency_8_give_one_result_each() {
    let env = TestEnv::new();
    program(&env, 200);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let output = batch(
        &env,
        &server,
        &[
            "w",
            "--input",
            "items.jsonl",
            "--concurrency",
            "8",
            "--output",
            "out.jsonl",
        ],
    );
    assert!(output.status.success(), "{}", render(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(": 200 items\n"), "{stderr}");
    assert!(stderr.contains("200/200 completed, 0 failed"), "{stderr}");
    let results = lines_by_id(&batch_dir(&env).join("results.jsonl"));
    assert_eq!(results.len(), 200);
    for (id, (count, last)) in &results {
        assert_eq!(*count, 1, "{id}");
        assert_eq!(last["status"], "completed", "{last}");
        assert_eq!(last["answer"], "Done.", "{last}");
        assert_eq!(last["usage"]["inputTokens"], 10, "{last}");
        assert!(last["session"].is_string(), "{last}");
    }
    assert_eq!(lines_by_id(&env.path().join("proj/out.jsonl")), results);
    assert_eq!(server.requests().len(), 200);
    // Each item is its own session, with its own transcript.
    assert_eq!(env.transcripts("proj").len(), 200);
}

#[test]
fn a_batch_killed_mid_way_resumes_with_every_item_exactly_once() {
    let env = TestEnv::new();
    program(&env, 40);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done.").delayed(Duration::from_millis(150)));
    let mut child = env
        .std_command()
        .current_dir(env.path().join("proj"))
        .args(["batch", "w", "--input", "items.jsonl", "--concurrency", "4"])
        .envs(provider_env(WIRE, &server))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let results = loop {
        if let Ok(entries) = std::fs::read_dir(env.path().join("proj/.golem-forge/batches"))
            && let Some(dir) = entries.flatten().next()
        {
            let path = dir.path().join("results.jsonl");
            if std::fs::read_to_string(&path).is_ok_and(|t| t.lines().count() >= 8) {
                break path;
            }
        }
        assert!(Instant::now() < deadline, "no results in time");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let before = lines_by_id(&results);
    assert!(before.len() < 40, "killed before the end: {}", before.len());
    let id = batch_dir(&env)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    server.set_fallback(WIRE.text("Done."));
    let output = batch(&env, &server, &["resume", &id]);
    assert!(output.status.success(), "{}", render(&output));
    let after = lines_by_id(&results);
    assert_eq!(after.len(), 40);
    for (item, (count, last)) in &after {
        assert_eq!(*count, 1, "{item} reported {count} times");
        assert_eq!(last["status"], "completed");
    }
    // What was done before the kill was not run again.
    for item in before.keys() {
        assert_eq!(after[item], before[item]);
    }
    let printed = batch(&env, &server, &["results", &id]);
    let text = String::from_utf8_lossy(&printed.stdout);
    assert_eq!(text.lines().count(), 40, "{text}");
    assert!(
        text.lines().next().unwrap().contains("\"id\":\"item-1\""),
        "{text}"
    );
}

#[test]
fn bad_lines_are_named_by_number_and_nothing_runs() {
    let env = TestEnv::new();
    program(&env, 1);
    env.write(
        "proj/items.jsonl",
        "\"fine\"\n{\"input\": \n\n{\"id\": \"1\", \"input\": \"dup\"}\n[1]\n",
    );
    let server = MockServer::start_blocking(vec![]);
    let output = batch(&env, &server, &["w", "--input", "items.jsonl"]);
    assert_eq!(output.status.code(), Some(2), "{}", render(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("items.jsonl has 3 bad lines; nothing ran"),
        "{stderr}"
    );
    assert!(stderr.contains("line 2: not a JSON value"), "{stderr}");
    assert!(
        stderr.contains("line 4: the id `1` is used on line 1 already"),
        "{stderr}"
    );
    assert!(stderr.contains("line 5: an item is a string"), "{stderr}");
    assert!(server.requests().is_empty());
    assert!(!env.path().join("proj/.golem-forge/batches").exists());
}

#[test]
fn failed_items_exit_1_and_retry_failed_runs_only_them_again() {
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
    let output = batch(
        &env,
        &server,
        &["w", "--input", "items.jsonl", "--concurrency", "1"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", render(&output));
    // Each item's line, the failure's reason, the summary and how to run the failures again.
    insta::assert_snapshot!(summary_redacted(&env, &render(&output)));
    // The same command again runs nothing: failures wait for --retry-failed.
    let again = batch(&env, &server, &["w", "--input", "items.jsonl"]);
    assert_eq!(again.status.code(), Some(1), "{}", render(&again));
    assert_eq!(server.requests().len(), 3);
    server.set_fallback(WIRE.text("Two, at last."));
    let retried = batch(
        &env,
        &server,
        &["w", "--input", "items.jsonl", "--retry-failed"],
    );
    assert!(retried.status.success(), "{}", render(&retried));
    assert_eq!(server.requests().len(), 4);
    let results = lines_by_id(&batch_dir(&env).join("results.jsonl"));
    assert_eq!(results["item-2"].0, 2);
    assert_eq!(results["item-2"].1["attempt"], 2);
    assert_eq!(results["item-2"].1["answer"], "Two, at last.");
}

#[test]
fn the_batch_token_budget_stops_new_items() {
    let env = TestEnv::new();
    program(&env, 5);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    // 15 tokens an item: the budget is spent after the second.
    let output = batch(
        &env,
        &server,
        &[
            "w",
            "--input",
            "items.jsonl",
            "--concurrency",
            "1",
            "--budget-tokens",
            "30",
        ],
    );
    assert_eq!(output.status.code(), Some(3), "{}", render(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("3 not run (the batch's budget is spent: 30 of 30 tokens)"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn rate_limit_answers_pause_the_pool_and_no_item_fails_because_of_them() {
    let env = TestEnv::new();
    program(&env, 30);
    // No retries at all: only the shared gate can carry an item past a 429.
    env.write(
        "proj/golem-forge.config.yaml",
        "model_requests:\n  max_retries: 0\n",
    );
    let limited = || {
        Reply::json(
            429,
            r#"{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}"#,
        )
        .header("retry-after-ms", "30")
    };
    // A third of the requests are answered 429.
    let replies: Vec<Reply> = (0..45)
        .map(|n| {
            if n % 3 == 0 {
                limited()
            } else {
                WIRE.text("Done.")
            }
        })
        .collect();
    let server = MockServer::start_blocking(replies);
    let output = batch(
        &env,
        &server,
        &["w", "--input", "items.jsonl", "--concurrency", "6"],
    );
    assert!(output.status.success(), "{}", render(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("30/30 completed, 0 failed"), "{stderr}");
    assert!(stderr.contains("rate limited 15 times"), "{stderr}");
    assert_eq!(server.requests().len(), 45);
}

#[test]
fn each_makes_one_item_per_file_in_the_zones_and_refuses_files_outside() {
    let env = TestEnv::new();
    program(&env, 1);
    env.write(
        "proj/w.worker",
        &format!(
            "---\nname: w\nmodel: {}\nsandbox:\n  zones:\n    - name: docs\n---\nYou review.\n",
            model_for(WIRE)
        ),
    );
    env.write("proj/docs/a.md", "# A\n");
    env.write("proj/docs/deep/b.md", "# B\n");
    env.write("proj/notes/c.md", "# C\n");
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Reviewed."));
    let outside = batch(&env, &server, &["w", "--each", "**/*.md"]);
    assert_eq!(outside.status.code(), Some(2), "{}", render(&outside));
    let stderr = String::from_utf8_lossy(&outside.stderr);
    assert!(
        stderr.contains("1 matching file is outside every zone of the worker: notes/c.md"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
    let output = batch(
        &env,
        &server,
        &[
            "w",
            "--each",
            "docs/**/*.md",
            "--prompt",
            "Review {path}, please",
        ],
    );
    assert!(output.status.success(), "{}", render(&output));
    let results = lines_by_id(&batch_dir(&env).join("results.jsonl"));
    let ids: Vec<&String> = results.keys().collect();
    assert_eq!(ids, ["docs/a.md", "docs/deep/b.md"]);
    let asked: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .collect();
    assert!(
        asked
            .iter()
            .any(|m| m.contains("Review /docs/deep/b.md, please")),
        "{asked:?}"
    );
}

#[test]
fn a_worker_with_an_output_schema_gives_each_result_its_value() {
    let env = TestEnv::new();
    program(&env, 2);
    env.write(
        "proj/w.worker",
        &format!(
            "---\nname: w\nmodel: {}\noutput:\n  schema: {{type: object, properties: {{count: {{type: integer}}}}, required: [count]}}\n---\nYou count.\n",
            model_for(WIRE)
        ),
    );
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text(r#"{"count": 3}"#));
    let output = batch(&env, &server, &["w", "--input", "items.jsonl"]);
    assert!(output.status.success(), "{}", render(&output));
    let results = lines_by_id(&batch_dir(&env).join("results.jsonl"));
    for (_, last) in results.values() {
        assert_eq!(last["output"], serde_json::json!({"count": 3}), "{last}");
    }
    // A worker file that cannot load is an error before anything runs.
    env.write("proj/bad.worker", "---\nname: bad\nmodle: x\n---\nHi.\n");
    let bad = batch(&env, &server, &["bad", "--input", "items.jsonl"]);
    assert_eq!(bad.status.code(), Some(2), "{}", render(&bad));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("modle"),
        "{}",
        render(&bad)
    );
}
