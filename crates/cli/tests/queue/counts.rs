//! A queued batch counts each item once, in one state, while its parked items are answered and
//! continued; `batch-worker --until-done` says how many wait for an approval and exits 4 when
//! some do; and every command a hint prints (the enqueue's, a parked item's, the inbox's) names
//! the queue with its password left out, so that it runs as pasted (the password then comes
//! from `GOLEM_FORGE_REDIS_PASSWORD`).

use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::{TestEnv, provider_env};

const PASSWORD: &str = "hunter2-horse";

/// The command after `prefix` on the one line of `text` that has it: what a user would paste.
fn hinted(text: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix:?} once in:\n{text}");
    let (_, after) = lines[0].split_once(prefix).unwrap();
    after.split(" (").next().unwrap().trim().to_owned()
}

/// Runs `command` (a pasted `golem-forge …` line, plus `extra`) in `dir` with the password in
/// the environment, as a user who set it would.
fn paste(
    env: &TestEnv,
    dir: &str,
    server: &MockServer,
    command: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut words = command.split_whitespace();
    assert_eq!(words.next(), Some("golem-forge"), "{command}");
    env.std_command()
        .current_dir(env.path().join(dir))
        .args(words)
        .args(extra)
        .envs(provider_env(WIRE, server))
        .env("GOLEM_FORGE_REDIS_PASSWORD", PASSWORD)
        .output()
        .unwrap()
}

/// The sum of the counts of `state` (`batch status --json`): each item in one, it must be the
/// batch's items.
fn counted(state: &Value) -> u64 {
    let results: u64 = state["results"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    let rest: u64 = ["waitingApproval", "inFlight", "queued"]
        .iter()
        .map(|key| {
            state[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{key}: {state}"))
        })
        .sum();
    results + rest
}

#[test]
fn parked_items_are_counted_once_and_every_hint_can_be_pasted() {
    let env = TestEnv::new();
    program(
        &env,
        "first",
        &[("a", "say a"), ("b", "write b"), ("c", "write c")],
    );
    env.mkdir("elsewhere");
    let server = MockServer::start_blocking(vec![]);
    // First match wins: the request that carries a call's result names its id.
    server.answer_when("call_b", WIRE.text("Wrote b."));
    server.answer_when("call_c", WIRE.text("Wrote c."));
    server.answer_when("say a", WIRE.text("A."));
    for item in ["b", "c"] {
        server.answer_when(
            &format!("write {item}"),
            WIRE.tool_calls(&[(
                &format!("call_{item}"),
                "write_file",
                json!({"path": format!("/out/{item}.txt"), "content": item}),
            )]),
        );
    }
    let redis = RedisServer::start_with(Some(PASSWORD), false);
    let plain = redis.url_without_password();

    // The enqueue's hint names the queue without its password, and runs as pasted.
    let url = redis.url();
    let mut args = enqueue_args(&url, "counts").to_vec();
    args.extend_from_slice(&["--approval", "defer"]);
    let queued = golem(&env, "first", &server, &args);
    assert_exit(&queued, 0);
    let told = stderr(&queued);
    assert!(!told.contains(PASSWORD) && !told.contains("URL"), "{told}");
    let consumer = hinted(&told, "run consumers with: ");
    assert_eq!(
        consumer,
        format!("golem-forge batch-worker --queue {plain} --name counts")
    );
    assert!(told.contains("GOLEM_FORGE_REDIS_PASSWORD"), "{told}");
    let first = paste(
        &env,
        "first",
        &server,
        &consumer,
        &["--until-done", "--concurrency", "1"],
    );
    // Drained, but two items wait for a person: not done.
    assert_exit(&first, 4);
    let told = stderr(&first);
    assert!(
        told.contains(&format!(
            "2 items wait for an approval: golem-forge inbox --queue {plain}"
        )),
        "{told}"
    );
    assert!(!told.contains("nothing waits"), "{told}");
    let shown = hinted(&told, "item b: waits for approval (inbox 1); see it: ");
    assert_eq!(shown, format!("golem-forge inbox --queue {plain} show 1"));

    let state = status(&env, "first", &server, &redis, "counts");
    assert_eq!(state["waitingApproval"], 2, "{state}");
    assert_eq!(counted(&state), 3, "{state}");

    // The parked item's hint shows it; what `show` and the list print answer on the queue.
    let entry = paste(&env, "elsewhere", &server, &shown, &[]);
    assert_exit(&entry, 0);
    // Bound to the call shown: the command names its digest.
    let approve = hinted(&stdout(&entry), "approve: ");
    let (command, digest) = approve.split_once(" --call ").unwrap();
    assert_eq!(
        command,
        format!("golem-forge inbox --queue {plain} approve 1")
    );
    assert_eq!(digest.len(), 64, "{approve}");
    let listed = paste(
        &env,
        "elsewhere",
        &server,
        &format!("golem-forge inbox --queue {plain}"),
        &[],
    );
    assert_exit(&listed, 0);
    assert!(
        !stdout(&listed).contains("inbox approve"),
        "{}",
        stdout(&listed)
    );
    assert_exit(&paste(&env, "elsewhere", &server, &approve, &[]), 0);
    let approve_next = hinted(&stdout(&listed), "approve:  ");
    assert_eq!(
        approve_next,
        format!("golem-forge inbox --queue {plain} approve 1"),
        "the first unanswered, when listed"
    );
    let relisted = paste(
        &env,
        "elsewhere",
        &server,
        &format!("golem-forge inbox --queue {plain}"),
        &[],
    );
    let approve_second = hinted(&stdout(&relisted), "approve:  ");
    assert_eq!(
        approve_second,
        format!("golem-forge inbox --queue {plain} approve 2")
    );
    let answered = paste(&env, "elsewhere", &server, &approve_second, &[]);
    assert_exit(&answered, 0);
    let start_one = hinted(&stderr(&answered), "start one: ");
    assert_eq!(
        start_one,
        format!("golem-forge batch-worker --queue {plain} --name counts")
    );

    // Both answered, neither continued yet: each is counted once, as waiting for a consumer.
    let state = status(&env, "first", &server, &redis, "counts");
    assert_eq!(state["waitingApproval"], 0, "{state}");
    assert_eq!(state["queued"], 2, "{state}");
    assert_eq!(state["results"], json!({"completed": 1}), "{state}");
    assert_eq!(counted(&state), 3, "{state}");
    let text = golem(
        &env,
        "first",
        &server,
        &["batch", "status", "counts", "--queue", &url],
    );
    assert_exit(&text, 0);
    let rows: u64 = stdout(&text)
        .lines()
        .filter_map(|line| {
            let (name, count) = line.trim().split_once(char::is_whitespace)?;
            ["completed", "waitingApproval", "running", "waiting"]
                .contains(&name)
                .then(|| count.trim().parse::<u64>().unwrap())
        })
        .sum();
    assert_eq!(rows, 3, "{}", stdout(&text));

    let second = paste(&env, "first", &server, &start_one, &["--until-done"]);
    assert_exit(&second, 0);
    assert!(
        stderr(&second).contains("nothing waits or runs anywhere"),
        "{}",
        stderr(&second)
    );
    let state = status(&env, "first", &server, &redis, "counts");
    assert_eq!(state["results"], json!({"completed": 3}), "{state}");
    assert_eq!(counted(&state), 3, "{state}");
    assert_eq!(env.read("first/out/c.txt").as_deref(), Some("c"));
}
