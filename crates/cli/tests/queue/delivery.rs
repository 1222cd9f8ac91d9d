//! Every item once, whatever happens to consumers and to Redis: three consumers share 300
//! items; a consumer `kill -9`ed mid-item has its item finished by another, recorded once; a
//! Redis restart (append-only file on) mid-batch is weathered by the consumers.

use std::collections::BTreeSet;
use std::time::Duration;

use golem_testkit::mock::MockServer;

use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::TestEnv;

#[test]
fn three_consumers_complete_three_hundred_items_each_exactly_once() {
    let env = TestEnv::new();
    let items = numbered(300);
    program(&env, "proj", &pairs(&items));
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let redis = RedisServer::start();
    enqueue(&env, "proj", &server, &redis, "three", &[]);
    let workers: Vec<_> = (0..3)
        .map(|_| {
            spawn_worker(
                &env,
                "proj",
                &server,
                &redis,
                "three",
                &["--until-done", "--concurrency", "4"],
            )
        })
        .collect();
    let outputs: Vec<_> = workers.into_iter().map(finish).collect();
    let mut everyone = Vec::new();
    for output in &outputs {
        assert_exit(output, 0);
        let mine = completed_by(output);
        assert!(
            !mine.is_empty(),
            "a consumer ran nothing:\n{}",
            stderr(output)
        );
        everyone.extend(mine);
    }
    let distinct: BTreeSet<&String> = everyone.iter().collect();
    assert_eq!(
        everyone.len(),
        300,
        "items ran more than once or not at all"
    );
    assert_eq!(distinct.len(), 300);
    // One model request per item: none ran twice.
    assert_eq!(server.requests().len(), 300);
    let results = results(&env, "proj", &server, &redis, "three");
    assert_eq!(results.len(), 300);
    assert!(
        results
            .values()
            .all(|r| r["status"] == "completed" && r["answer"] == "Done.")
    );
    assert_eq!(results_stream_len(&redis, "three"), 300);
    let status = status(&env, "proj", &server, &redis, "three");
    assert_eq!(status["results"]["completed"], 300, "{status}");
    assert_eq!(status["inFlight"], 0);
    assert_eq!(status["queued"], 0);
    // Each consumer left the group as it stopped holding nothing.
    assert_eq!(status["consumers"], serde_json::json!([]), "{status}");
}

/// One item `item` of batch `name`, taken by a first consumer (started with `first_args`)
/// whose model request hangs for `hang`; the model's next answer is `then`. Returns once the
/// first consumer's request is in.
fn held_by_a_first_consumer(
    env: &TestEnv,
    name: &str,
    item: &str,
    hang: Duration,
    then: &str,
    first_args: &[&str],
) -> (MockServer, RedisServer, std::process::Child) {
    program(env, "proj", &[(item, "take your time")]);
    let server = MockServer::start_blocking(vec![
        WIRE.text("From the first consumer.").delayed(hang),
        WIRE.text(then),
    ]);
    let redis = RedisServer::start();
    enqueue(env, "proj", &server, &redis, name, &[]);
    let first = spawn_worker(env, "proj", &server, &redis, name, first_args);
    assert!(
        server.wait_for_requests(1, LIMIT),
        "the first consumer never asked the model"
    );
    (server, redis, first)
}

#[test]
fn a_consumer_killed_mid_item_has_its_item_finished_by_another_once() {
    let env = TestEnv::new();
    // The first run hangs until its consumer is killed; the second answers at once.
    let (server, redis, mut first) = held_by_a_first_consumer(
        &env,
        "killed",
        "slow",
        Duration::from_secs(60),
        "Done by the second.",
        &["--lease", "2s"],
    );
    first.kill().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(!first.status.success());
    let second = finish(spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "killed",
        &["--lease", "2s", "--until-done"],
    ));
    assert_exit(&second, 0);
    let told = stderr(&second);
    assert!(told.contains("item slow: running (delivery 2)"), "{told}");
    assert_eq!(completed_by(&second), ["slow"]);
    let results = results(&env, "proj", &server, &redis, "killed");
    assert_eq!(results.len(), 1);
    assert_eq!(results["slow"]["answer"], "Done by the second.");
    assert_eq!(results["slow"]["attempt"], 2);
    assert_eq!(results_stream_len(&redis, "killed"), 1);
}

#[test]
fn consumers_reconnect_after_a_redis_restart_and_finish_the_batch() {
    let env = TestEnv::new();
    let items = numbered(30);
    program(&env, "proj", &pairs(&items));
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done.").delayed(Duration::from_millis(200)));
    let mut redis = RedisServer::start_with(None, true);
    enqueue(&env, "proj", &server, &redis, "restart", &[]);
    let workers: Vec<_> = (0..2)
        .map(|_| {
            spawn_worker(
                &env,
                "proj",
                &server,
                &redis,
                "restart",
                &["--until-done", "--concurrency", "2"],
            )
        })
        .collect();
    wait_until("a few results before the restart", || {
        result_count(&redis, "restart") >= 4
    });
    redis.stop();
    std::thread::sleep(Duration::from_secs(1));
    redis.restart();
    let outputs: Vec<_> = workers.into_iter().map(finish).collect();
    for output in &outputs {
        assert_exit(output, 0);
    }
    let logs: String = outputs.iter().map(stderr).collect();
    assert!(
        logs.contains("connection was lost"),
        "no consumer noticed the restart:\n{logs}"
    );
    let results = results(&env, "proj", &server, &redis, "restart");
    assert_eq!(results.len(), 30, "{results:?}");
    assert!(results.values().all(|r| r["status"] == "completed"));
    assert_eq!(results_stream_len(&redis, "restart"), 30);
}

#[test]
fn a_late_result_from_a_consumer_that_lost_its_lease_is_dropped_and_logged() {
    let env = TestEnv::new();
    let (server, redis, stalled) = held_by_a_first_consumer(
        &env,
        "stalls",
        "stalled",
        Duration::from_secs(4),
        "From the second.",
        &["--lease", "1s", "--until-done"],
    );
    // Stopped, it cannot renew its lease: the second consumer takes the item.
    signal(stalled.id(), "STOP");
    let second = finish(spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "stalls",
        &["--lease", "1s", "--until-done"],
    ));
    signal(stalled.id(), "CONT");
    let stalled = finish(stalled);
    assert_exit(&second, 0);
    assert_exit(&stalled, 0);
    assert_eq!(completed_by(&second), ["stalled"]);
    let told = stderr(&stalled);
    assert!(told.contains("item stalled: result dropped"), "{told}");
    assert!(completed_by(&stalled).is_empty(), "{told}");
    let results = results(&env, "proj", &server, &redis, "stalls");
    assert_eq!(results["stalled"]["answer"], "From the second.");
    assert_eq!(results_stream_len(&redis, "stalls"), 1);
}

#[test]
fn a_consumer_stopped_by_sigterm_hands_its_item_back_for_the_next_at_once() {
    let env = TestEnv::new();
    let (server, redis, first) = held_by_a_first_consumer(
        &env,
        "handback",
        "long",
        Duration::from_secs(60),
        "Done after the hand-back.",
        &["--lease", "10m"],
    );
    signal(first.id(), "TERM");
    let first = finish(first);
    assert_exit(&first, 130);
    assert!(
        stderr(&first).contains("item long: handed back unfinished"),
        "{}",
        stderr(&first)
    );
    // Handed back: idle past any lease, so the next claim takes it without waiting ten minutes.
    let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg("golem-forge:batch:handback:items")
        .arg("golem-forge")
        .arg("-")
        .arg("+")
        .arg(10)
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert!(
        pending[0].2 > 600_000,
        "not handed back: idle {} ms",
        pending[0].2
    );
    let second = finish(spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "handback",
        &["--lease", "10m", "--until-done"],
    ));
    assert_exit(&second, 0);
    assert_eq!(completed_by(&second), ["long"]);
    let results = results(&env, "proj", &server, &redis, "handback");
    assert_eq!(results["long"]["answer"], "Done after the hand-back.");
}

#[test]
fn entries_a_stopping_consumer_holds_but_never_ran_are_handed_back_too() {
    let env = TestEnv::new();
    program(&env, "proj", &[("stray", "do stray")]);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let redis = RedisServer::start();
    enqueue(&env, "proj", &server, &redis, "strays", &[]);
    let items = "golem-forge:batch:strays:items";
    // Delivered to the consumer's name as a read cut short by a stop would leave it.
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg(&[
            "GROUP",
            "golem-forge",
            "fixed",
            "COUNT",
            "1",
            "STREAMS",
            items,
            ">",
        ])
        .query(&mut redis.connection())
        .unwrap();
    let idle = || {
        let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
            .arg(items)
            .arg(&["golem-forge", "-", "+", "10"])
            .query(&mut redis.connection())
            .unwrap();
        assert_eq!(pending.len(), 1, "{pending:?}");
        pending[0].2
    };
    let consumer = spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "strays",
        &["--consumer", "fixed", "--lease", "10m"],
    );
    // It runs nothing: the entry is its own, and too fresh to claim.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(server.requests().is_empty());
    signal(consumer.id(), "TERM");
    assert_exit(&finish(consumer), 130);
    assert!(idle() > 600_000, "not handed back: idle {} ms", idle());
    // Stopped holding an entry, it stays in the group, and `batch status` shows it.
    let status = status(&env, "proj", &server, &redis, "strays");
    assert_eq!(status["consumers"][0]["name"], "fixed", "{status}");
    assert_eq!(status["consumers"][0]["holding"], 1, "{status}");
    let second = finish(spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "strays",
        &["--lease", "10m", "--until-done"],
    ));
    assert_exit(&second, 0);
    assert_eq!(completed_by(&second), ["stray"]);
}
