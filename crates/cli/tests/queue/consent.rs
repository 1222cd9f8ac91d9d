//! The queue is not trusted for consent. A consumer's own approval mode (its `--approval`, else
//! its program config's `approval.mode`, else `interactive`) is the ceiling: a batch whose
//! settings on the queue ask for more (enqueued so, or rewritten in Redis) is refused before
//! anything is taken and its items stay queued, while a narrower one is honoured. And an
//! approval given with `inbox --queue` is bound to the call it showed: a parked transcript
//! rewritten in Redis, before the answer or after it, runs nothing, and the item waits in the
//! inbox again.

use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::approvals::inbox;
use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::TestEnv;

/// The mock model: item `b` asks to write `/out/b.txt`; the request carrying the call's result
/// (it names `call_b`) gets a final answer.
fn writing_model() -> MockServer {
    let server = MockServer::start_blocking(vec![]);
    server.answer_when("call_b", WIRE.text("Wrote b."));
    server.answer_when(
        "write b",
        WIRE.tool_calls(&[(
            "call_b",
            "write_file",
            json!({"path": "/out/b.txt", "content": "from b"}),
        )]),
    );
    server
}

/// How many requests the model got that carry the result of `call_b` (its run after consent).
fn continued_requests(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("call_b"))
        .count()
}

/// Rewrites the value at `key` in Redis, replacing `from` by `to` everywhere (the attack).
fn rewrite(redis: &RedisServer, key: &str, from: &str, to: &str) {
    let mut con = redis.connection();
    let text: String = redis::cmd("GET").arg(key).query(&mut con).unwrap();
    assert!(text.contains(from), "{key} does not hold {from:?}");
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(text.replace(from, to))
        .query(&mut con)
        .unwrap();
}

#[test]
fn a_batch_asking_for_more_consent_than_the_consumers_config_is_refused_and_kept() {
    let env = TestEnv::new();
    program(&env, "first", &[("b", "write b")]);
    env.write(
        "first/golem-forge.config.yaml",
        "delegation:\n  max_depth: 2\napproval:\n  mode: auto_deny\n",
    );
    let server = writing_model();
    let redis = RedisServer::start();
    enqueue(
        &env,
        "first",
        &server,
        &redis,
        "grant",
        &["--approval", "approve_all"],
    );
    let refused = finish(spawn_worker(
        &env,
        "first",
        &server,
        &redis,
        "grant",
        &["--until-done"],
    ));
    refused_in_one_line(
        &refused,
        &[
            "batch `grant` asks for approval mode approve_all",
            "this consumer's auto_deny (approval.mode in ",
            "golem-forge.config.yaml",
            "its items stay queued",
            "run this consumer with --approval approve_all",
            "--approval auto_deny",
        ],
    );
    assert!(!env.path().join("first/out/b.txt").exists(), "written");
    assert!(server.requests().is_empty(), "an item ran");
    // The item is still there, waiting for a consumer that may run it.
    let state = status(&env, "first", &server, &redis, "grant");
    assert_eq!(state["queued"], 1, "{state}");
    assert_eq!(state["inFlight"], 0, "{state}");
    assert_eq!(state["results"], json!({}), "{state}");

    // The way out the error names: the consumer's own command line consents.
    let granted = finish(spawn_worker(
        &env,
        "first",
        &server,
        &redis,
        "grant",
        &["--until-done", "--approval", "approve_all"],
    ));
    assert_exit(&granted, 0);
    assert_eq!(env.read("first/out/b.txt").as_deref(), Some("from b"));
}

#[test]
fn batch_settings_rewritten_on_the_queue_to_approve_all_are_refused() {
    let env = TestEnv::new();
    program(&env, "first", &[("b", "write b")]);
    let server = writing_model();
    let redis = RedisServer::start();
    enqueue(
        &env,
        "first",
        &server,
        &redis,
        "rewritten",
        &["--approval", "defer"],
    );
    // Whoever can write to the queue asks for more.
    rewrite(
        &redis,
        "golem-forge:batch:rewritten:meta",
        r#""approval":"defer""#,
        r#""approval":"approve_all""#,
    );
    for extra in [
        &[][..],
        &["--approval", "auto_deny"],
        &["--approval", "defer"],
    ] {
        let mut args = vec!["--until-done"];
        args.extend_from_slice(extra);
        let refused = finish(spawn_worker(
            &env,
            "first",
            &server,
            &redis,
            "rewritten",
            &args,
        ));
        let ceiling = match extra.get(1) {
            None => "interactive (the default",
            Some(&"auto_deny") => "auto_deny (its --approval)",
            Some(_) => "defer (its --approval)",
        };
        refused_in_one_line(
            &refused,
            &[
                "batch `rewritten` asks for approval mode approve_all",
                ceiling,
                "its items stay queued",
            ],
        );
    }
    assert!(!env.path().join("first/out/b.txt").exists(), "written");
    assert!(server.requests().is_empty(), "an item ran");
    let state = status(&env, "first", &server, &redis, "rewritten");
    assert_eq!(state["queued"], 1, "{state}");
    assert_eq!(state["results"], json!({}), "{state}");
}

#[test]
fn a_narrower_mode_from_the_queue_is_honoured_and_none_means_the_consumers() {
    let env = TestEnv::new();
    program(&env, "first", &[("b", "write b")]);
    let server = writing_model();
    let redis = RedisServer::start();
    enqueue(
        &env,
        "first",
        &server,
        &redis,
        "narrow",
        &["--approval", "auto_deny"],
    );
    let narrow = finish(spawn_worker(
        &env,
        "first",
        &server,
        &redis,
        "narrow",
        &["--until-done", "--approval", "approve_all"],
    ));
    assert_exit(&narrow, 0);
    assert!(
        stderr(&narrow).contains("approval auto_deny"),
        "{}",
        stderr(&narrow)
    );
    assert!(!env.path().join("first/out/b.txt").exists(), "not denied");
    let results = results(&env, "first", &server, &redis, "narrow");
    assert_eq!(results["b"]["status"], "completed", "{results:?}");
    let told = server
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("approval mode is auto_deny"));
    assert!(told, "the model was not told of the denial");

    // A batch that names no mode runs in the consumer's own.
    enqueue(&env, "first", &server, &redis, "own", &[]);
    let own = finish(spawn_worker(
        &env,
        "first",
        &server,
        &redis,
        "own",
        &["--until-done", "--approval", "approve_all"],
    ));
    assert_exit(&own, 0);
    assert_eq!(env.read("first/out/b.txt").as_deref(), Some("from b"));
}

/// Parks item `b` of batch `name` (`defer`) on a consumer in `first`; returns its session.
fn park(env: &TestEnv, server: &MockServer, redis: &RedisServer, name: &str) -> String {
    program(env, "first", &[("b", "write b")]);
    program(env, "second", &[]);
    env.mkdir("elsewhere");
    enqueue(env, "first", server, redis, name, &["--approval", "defer"]);
    let parked = finish(spawn_worker(
        env,
        "first",
        server,
        redis,
        name,
        &["--until-done"],
    ));
    assert_exit(&parked, 4);
    let listed = inbox(env, server, redis, &["--json"]);
    assert_exit(&listed, 0);
    let entry: Value = serde_json::from_str(stdout(&listed).lines().next().unwrap()).unwrap();
    assert_eq!(entry["id"], 1, "{entry}");
    entry["session"].as_str().unwrap().to_owned()
}

/// What `inbox --queue show 1` prints, and the approve command it offers (pasted as words).
fn show(env: &TestEnv, server: &MockServer, redis: &RedisServer) -> (String, Vec<String>) {
    let shown = inbox(env, server, redis, &["show", "1"]);
    assert_exit(&shown, 0);
    let text = stdout(&shown);
    let line = text
        .lines()
        .find(|l| l.contains("approve: "))
        .unwrap_or_else(|| panic!("no approve command in:\n{text}"));
    let (_, command) = line.split_once("approve: ").unwrap();
    let words: Vec<String> = command
        .split(" (")
        .next()
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(words[0], "golem-forge", "{line}");
    (text, words[1..].to_vec())
}

/// Runs pasted `words` (a `golem-forge inbox …` command) from another directory.
fn paste(env: &TestEnv, server: &MockServer, words: &[String]) -> std::process::Output {
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    golem(env, "elsewhere", server, &words)
}

/// Whether entry 1 of the queue's inbox is unanswered, and the batch counts its item as
/// waiting for an approval.
fn still_waits(env: &TestEnv, server: &MockServer, redis: &RedisServer, name: &str) {
    let listed = inbox(env, server, redis, &["--json"]);
    assert_exit(&listed, 0);
    let entry: Value = serde_json::from_str(stdout(&listed).lines().next().unwrap()).unwrap();
    assert_eq!(entry["id"], 1, "{entry}");
    assert!(entry.get("answer").is_none(), "answered: {entry}");
    let state = status(env, "first", server, redis, name);
    assert_eq!(state["waitingApproval"], 1, "{state}");
    assert_eq!(state["queued"], 0, "{state}");
}

#[test]
fn a_transcript_changed_after_show_cannot_be_approved() {
    let env = TestEnv::new();
    let server = writing_model();
    let redis = RedisServer::start();
    let session = park(&env, &server, &redis, "swap");
    let (shown, approve) = show(&env, &server, &redis);
    assert!(shown.contains("/out/b.txt"), "{shown}");
    assert!(
        approve.iter().any(|w| w == "--call"),
        "the approve command names no call: {approve:?}"
    );

    // The parked call is swapped in Redis for another.
    let transcript = format!("golem-forge:batch:swap:transcript:{session}");
    rewrite(&redis, &transcript, "/out/b.txt", "/out/evil.txt");
    let refused = paste(&env, &server, &approve);
    assert_exit(&refused, 2);
    let told = stderr(&refused);
    assert!(
        told.contains("the parked session of approval 1 changed since it was shown"),
        "{told}"
    );
    assert!(told.contains("/out/evil.txt"), "{told}");
    assert!(told.contains("it still waits"), "{told}");
    // Without the shown call's digest, the entry and its session disagree: refused too.
    let unbound = inbox(&env, &server, &redis, &["approve", "1"]);
    assert_exit(&unbound, 2);
    assert!(
        stderr(&unbound).contains("approval 1 cannot be given"),
        "{}",
        stderr(&unbound)
    );
    let shown_again = inbox(&env, &server, &redis, &["show", "1"]);
    assert_exit(&shown_again, 0);
    let again = stdout(&shown_again);
    assert!(again.contains("this call cannot be approved"), "{again}");
    assert!(!again.contains("approve: "), "{again}");
    // The entry rewritten to match: still not the call that was shown.
    let mut con = redis.connection();
    let entry: String = redis::cmd("HGET")
        .arg("golem-forge:inbox")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg("golem-forge:inbox")
        .arg(1)
        .arg(entry.replace("/out/b.txt", "/out/evil.txt"))
        .query(&mut con)
        .unwrap();
    let changed = paste(&env, &server, &approve);
    assert_exit(&changed, 2);
    assert!(
        stderr(&changed).contains("changed since it was shown"),
        "{}",
        stderr(&changed)
    );
    still_waits(&env, &server, &redis, "swap");

    let consumer = finish(spawn_worker(
        &env,
        "second",
        &server,
        &redis,
        "swap",
        &["--until-done"],
    ));
    assert_exit(&consumer, 4);
    assert!(!env.path().join("second/out/evil.txt").exists(), "ran");
    assert!(!env.path().join("second/out/b.txt").exists(), "ran");
    assert_eq!(continued_requests(&server), 0);
}

#[test]
fn a_transcript_changed_after_the_approval_is_not_continued_and_waits_again() {
    let env = TestEnv::new();
    let server = writing_model();
    let redis = RedisServer::start();
    let session = park(&env, &server, &redis, "late");
    let (_, approve) = show(&env, &server, &redis);
    assert_exit(&paste(&env, &server, &approve), 0);
    // Approved, waiting for a consumer; then the parked call is swapped in Redis.
    rewrite(
        &redis,
        &format!("golem-forge:batch:late:transcript:{session}"),
        "/out/b.txt",
        "/out/evil.txt",
    );
    let consumer = finish(spawn_worker(
        &env,
        "second",
        &server,
        &redis,
        "late",
        &["--until-done"],
    ));
    assert_exit(&consumer, 4);
    let told = stderr(&consumer);
    assert!(
        told.contains("item b: not continued, nothing ran"),
        "{told}"
    );
    assert!(
        told.contains("the parked session changed since approval 1 was given"),
        "{told}"
    );
    assert!(told.contains("waits in the inbox again"), "{told}");
    assert!(!env.path().join("second/out/evil.txt").exists(), "ran");
    assert!(!env.path().join("second/out/b.txt").exists(), "ran");
    assert_eq!(continued_requests(&server), 0, "the model saw a result");
    still_waits(&env, &server, &redis, "late");

    // A denial runs nothing: it is taken, and the item completes without the write.
    assert_exit(&inbox(&env, &server, &redis, &["deny", "1"]), 0);
    let denied = finish(spawn_worker(
        &env,
        "second",
        &server,
        &redis,
        "late",
        &["--until-done"],
    ));
    assert_exit(&denied, 0);
    assert!(!env.path().join("second/out/evil.txt").exists(), "ran");
    let results = results(&env, "first", &server, &redis, "late");
    assert_eq!(results["b"]["status"], "completed", "{results:?}");
}

#[test]
fn an_approval_of_the_call_shown_is_continued_on_another_consumer() {
    let env = TestEnv::new();
    let server = writing_model();
    let redis = RedisServer::start();
    park(&env, &server, &redis, "kept");
    let (shown, approve) = show(&env, &server, &redis);
    let digest = approve
        .iter()
        .skip_while(|w| *w != "--call")
        .nth(1)
        .cloned()
        .unwrap_or_else(|| panic!("no digest in {approve:?}"));
    assert_eq!(digest.len(), 64, "{digest}");
    assert!(shown.contains(&format!("call {digest}")), "{shown}");
    let approved = paste(&env, &server, &approve);
    assert_exit(&approved, 0);
    let told = stderr(&approved);
    assert!(
        told.contains("approved 1: write_file(") && told.contains("/out/b.txt"),
        "the confirmation does not name the call: {told}"
    );
    assert!(told.contains(&format!("call {digest}")), "{told}");

    let consumer = finish(spawn_worker(
        &env,
        "second",
        &server,
        &redis,
        "kept",
        &["--until-done"],
    ));
    assert_exit(&consumer, 0);
    assert!(
        stderr(&consumer).contains("item b: completed"),
        "{}",
        stderr(&consumer)
    );
    assert_eq!(env.read("second/out/b.txt").as_deref(), Some("from b"));
    assert_eq!(continued_requests(&server), 1);
}
