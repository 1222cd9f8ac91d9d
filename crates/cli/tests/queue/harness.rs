//! The queue tests' project and processes: a program with a worker on the mock model, its
//! items, `golem-forge batch --queue` to enqueue, `batch-worker` processes started and
//! collected, and readers of what the queue holds.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use golem_testkit::Wire;
use golem_testkit::mock::MockServer;
use serde_json::Value;

use golem_testkit::cli::{TestEnv, model_for, provider_env};
pub use golem_testkit::cli::{assert_exit, signal, stderr, stdout};

use crate::redis_server::RedisServer;

pub const WIRE: Wire = Wire::OpenAi;

/// How long a consumer may take before a test gives up on it (never reached when things work).
pub const LIMIT: Duration = Duration::from_secs(120);

/// Writes the program `dir` (under the test's directory): the worker `w.worker` on the mock's
/// model with an `out` zone and the filesystem tools, and `items` as `items.jsonl`.
pub fn program(env: &TestEnv, dir: &str, items: &[(&str, &str)]) {
    env.write(
        &format!("{dir}/golem-forge.config.yaml"),
        "delegation:\n  max_depth: 2\n",
    );
    env.mkdir(&format!("{dir}/out"));
    env.write(
        &format!("{dir}/w.worker"),
        &format!(
            "---\nname: w\nmodel: {}\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n\
             toolsets:\n  filesystem: {{}}\n---\nYou answer briefly.\n",
            model_for(WIRE)
        ),
    );
    let lines: String = items
        .iter()
        .map(|(id, input)| format!("{}\n", serde_json::json!({"id": id, "input": input})))
        .collect();
    env.write(&format!("{dir}/items.jsonl"), &lines);
}

/// Items `item-1` … `item-N`, each asking `do N`.
pub fn numbered(count: usize) -> Vec<(String, String)> {
    (1..=count)
        .map(|n| (format!("item-{n}"), format!("do {n}")))
        .collect()
}

/// `numbered` as the borrowed pairs `program` takes.
pub fn pairs(items: &[(String, String)]) -> Vec<(&str, &str)> {
    items
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

/// `golem-forge ARGS` run in `dir` (under the test's directory) with the mock's provider.
pub fn golem(env: &TestEnv, dir: &str, server: &MockServer, args: &[&str]) -> Output {
    env.command()
        .current_dir(env.path().join(dir))
        .args(args)
        .envs(provider_env(WIRE, server))
        .output()
        .unwrap()
}

/// The arguments that enqueue the program's items as batch `name` on the queue `url`.
pub fn enqueue_args<'a>(url: &'a str, name: &'a str) -> [&'a str; 8] {
    [
        "batch",
        "w.worker",
        "--input",
        "items.jsonl",
        "--queue",
        url,
        "--name",
        name,
    ]
}

/// Enqueues `dir`'s items as batch `name` on `redis` (with `extra` arguments); must succeed.
pub fn enqueue(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    name: &str,
    extra: &[&str],
) {
    let url = redis.url();
    let mut args = enqueue_args(&url, name).to_vec();
    args.extend_from_slice(extra);
    let output = golem(env, dir, server, &args);
    assert_exit(&output, 0);
}

/// Starts a `batch-worker` for batch `name` in `dir` with `extra` arguments.
pub fn spawn_worker(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    name: &str,
    extra: &[&str],
) -> Child {
    env.std_command()
        .current_dir(env.path().join(dir))
        .args(["batch-worker", "--queue", &redis.url(), "--name", name])
        .args(extra)
        .envs(provider_env(WIRE, server))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` (at most [`LIMIT`]) and returns its output.
pub fn finish(child: Child) -> Output {
    let id = child.id();
    let watchdog = std::thread::spawn(move || {
        let deadline = Instant::now() + LIMIT;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            if !Path::new(&format!("/proc/{id}")).exists() {
                return;
            }
        }
        signal(id, "9");
    });
    let output = child.wait_with_output().unwrap();
    let _ = watchdog.join();
    output
}

/// The items a consumer's stderr says it recorded as completed.
pub fn completed_by(output: &Output) -> Vec<String> {
    stderr(output)
        .lines()
        .filter_map(|line| line.strip_prefix("item ")?.strip_suffix(": completed"))
        .map(str::to_owned)
        .collect()
}

/// `batch results NAME --queue` as JSON values by item id.
pub fn results(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    name: &str,
) -> BTreeMap<String, Value> {
    let url = redis.url();
    let output = golem(
        env,
        dir,
        server,
        &["batch", "results", name, "--queue", &url],
    );
    assert_exit(&output, 0);
    let mut by_id = BTreeMap::new();
    for line in stdout(&output).lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        let id = value["id"].as_str().unwrap().to_owned();
        assert!(
            by_id.insert(id.clone(), value).is_none(),
            "{id} printed twice"
        );
    }
    by_id
}

/// `batch status NAME --queue --json`.
pub fn status(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    redis: &RedisServer,
    name: &str,
) -> Value {
    let url = redis.url();
    let output = golem(
        env,
        dir,
        server,
        &["batch", "status", name, "--queue", &url, "--json"],
    );
    assert_exit(&output, 0);
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// How many final results batch `name` recorded on its results stream.
pub fn results_stream_len(redis: &RedisServer, name: &str) -> usize {
    redis::cmd("XLEN")
        .arg(format!("golem-forge:batch:{name}:results-stream"))
        .query(&mut redis.connection())
        .unwrap()
}

/// How many final results batch `name` has.
pub fn result_count(redis: &RedisServer, name: &str) -> usize {
    redis::cmd("HLEN")
        .arg(format!("golem-forge:batch:{name}:results"))
        .query(&mut redis.connection())
        .unwrap()
}

/// Waits until `ready` holds (at most [`LIMIT`]).
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while Instant::now() < deadline {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("gave up waiting for {what}");
}

/// Asserts that `output` is a refusal at start: exit 2 and one line on stderr that says each of
/// `says`.
pub fn refused_in_one_line(output: &Output, says: &[&str]) {
    assert_exit(output, 2);
    let told = stderr(output);
    assert_eq!(told.trim_end().lines().count(), 1, "not one line:\n{told}");
    for words in says {
        assert!(told.contains(words), "does not say {words:?}: {told}");
    }
}
