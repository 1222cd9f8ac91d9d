//! A parked item across machines: a consumer parks an item whose call needs consent (`defer`),
//! `inbox --queue` lists and approves it from another directory (another machine, for all the
//! queue knows), and a consumer in another copy of the program continues the session there:
//! the call runs once, the item completes, the inbox empties.

use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::TestEnv;

/// `golem-forge inbox --queue URL ARGS` from another directory (another machine).
pub(crate) fn inbox(
    env: &TestEnv,
    server: &MockServer,
    redis: &RedisServer,
    args: &[&str],
) -> std::process::Output {
    let url = redis.url();
    let mut all = vec!["inbox", "--queue", url.as_str()];
    all.extend_from_slice(args);
    golem(env, "elsewhere", server, &all)
}

#[test]
fn a_deferred_approval_answered_from_another_process_is_continued_by_a_consumer() {
    let env = TestEnv::new();
    program(&env, "first", &[("a", "say a"), ("b", "write b")]);
    program(&env, "second", &[]);
    env.mkdir("elsewhere");
    let server = MockServer::start_blocking(vec![]);
    // First match wins: the request that carries the call's result names its id.
    server.answer_when("call_b", WIRE.text("Wrote b."));
    server.answer_when("say a", WIRE.text("A."));
    server.answer_when(
        "write b",
        WIRE.tool_calls(&[(
            "call_b",
            "write_file",
            json!({"path": "/out/b.txt", "content": "from b"}),
        )]),
    );
    let redis = RedisServer::start();
    enqueue(
        &env,
        "first",
        &server,
        &redis,
        "parks",
        &["--approval", "defer"],
    );
    let first = finish(spawn_worker(
        &env,
        "first",
        &server,
        &redis,
        "parks",
        &["--until-done"],
    ));
    // Drained, with an item waiting for a person.
    assert_exit(&first, 4);
    assert!(
        stderr(&first).contains("item b: waits for approval (inbox 1)"),
        "{}",
        stderr(&first)
    );
    assert!(
        !env.path().join("first/out/b.txt").exists(),
        "written before the approval"
    );
    assert!(
        !env.path().join("first/.golem-forge/inbox/1.json").exists(),
        "left in the local inbox"
    );

    let listed = inbox(&env, &server, &redis, &["--json"]);
    assert_exit(&listed, 0);
    let entries: Vec<Value> = stdout(&listed)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["id"], 1);
    assert_eq!(entries[0]["batch"], json!({"batch": "parks", "item": "b"}));
    assert_eq!(entries[0]["request"]["toolName"], "write_file");
    let shown = inbox(&env, &server, &redis, &["show", "1"]);
    assert!(
        stdout(&shown).contains("from b"),
        "the preview is missing:\n{}",
        stdout(&shown)
    );
    assert_eq!(
        status(&env, "first", &server, &redis, "parks")["waitingApproval"],
        1
    );

    let project_rule = inbox(
        &env,
        &server,
        &redis,
        &["approve", "1", "--remember", "project"],
    );
    assert_exit(&project_rule, 2);
    let approved = inbox(&env, &server, &redis, &["approve", "1"]);
    assert_exit(&approved, 0);
    assert!(
        stderr(&approved).contains("next free consumer continues it"),
        "{}",
        stderr(&approved)
    );
    let again = inbox(&env, &server, &redis, &["deny", "1"]);
    assert_exit(&again, 2);
    assert!(
        stderr(&again).contains("already answered"),
        "{}",
        stderr(&again)
    );

    let second = finish(spawn_worker(
        &env,
        "second",
        &server,
        &redis,
        "parks",
        &["--until-done"],
    ));
    assert_exit(&second, 0);
    let told = stderr(&second);
    assert!(
        told.contains("item b: continuing after its approval"),
        "{told}"
    );
    assert!(told.contains("item b: completed"), "{told}");
    assert_eq!(env.read("second/out/b.txt").as_deref(), Some("from b"));
    assert!(!env.path().join("first/out/b.txt").exists());
    // The model saw the call once, and its result once.
    let writes = server
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("write b"))
        .count();
    assert_eq!(
        writes, 2,
        "one request that made the call, one with its result"
    );
    let results = results(&env, "first", &server, &redis, "parks");
    assert_eq!(results["a"]["answer"], "A.");
    assert_eq!(results["b"]["status"], "completed");
    assert_eq!(results["b"]["answer"], "Wrote b.");
    assert_eq!(
        results["b"]["attempt"], 2,
        "the continued run counts from the parked one"
    );
    let listed = inbox(&env, &server, &redis, &[]);
    assert_exit(&listed, 0);
    assert!(
        stdout(&listed).contains("nothing waits"),
        "{}",
        stdout(&listed)
    );
    let status = status(&env, "first", &server, &redis, "parks");
    assert_eq!(status["waitingApproval"], 0, "{status}");
    assert_eq!(status["results"]["completed"], 2, "{status}");
}
