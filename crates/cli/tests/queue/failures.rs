//! What goes wrong: an item that fails every run is given up after its deliveries and shows in
//! `batch status` with its last error; a wrong password, or no server, is one line and exit 2
//! for every command, the password never shown.

use golem_testkit::mock::{MockServer, Reply};

use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::TestEnv;

#[test]
fn a_poison_item_reaches_the_dead_letter_list_after_three_deliveries() {
    let env = TestEnv::new();
    program(
        &env,
        "proj",
        &[
            ("fine", "do fine"),
            ("poison", "do poison"),
            ("also-fine", "do also"),
        ],
    );
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    server.answer_when(
        "do poison",
        Reply::json(
            400,
            r#"{"error": {"message": "this input poisons the model", "type": "invalid_request_error"}}"#,
        ),
    );
    let redis = RedisServer::start();
    enqueue(&env, "proj", &server, &redis, "poisoned", &[]);
    let output = finish(spawn_worker(
        &env,
        "proj",
        &server,
        &redis,
        "poisoned",
        &["--until-done"],
    ));
    assert_exit(&output, 0);
    let told = stderr(&output);
    assert!(
        told.contains("item poison: delivery 1 failed, to be tried again"),
        "{told}"
    );
    assert!(
        told.contains("item poison: delivery 2 failed, to be tried again"),
        "{told}"
    );
    assert!(
        told.contains("item poison: given up after 3 deliveries (dead letter)"),
        "{told}"
    );
    let poisoned = server
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("do poison"))
        .count();
    assert_eq!(poisoned, 3, "the poison item ran {poisoned} times");
    let status = status(&env, "proj", &server, &redis, "poisoned");
    let dead = status["deadLetters"].as_array().unwrap();
    assert_eq!(dead.len(), 1, "{status}");
    assert_eq!(dead[0]["id"], "poison");
    assert_eq!(dead[0]["deliveries"], 3);
    assert!(
        dead[0]["error"]
            .as_str()
            .unwrap()
            .contains("poisons the model"),
        "{status}"
    );
    assert_eq!(status["results"]["completed"], 2);
    assert_eq!(status["results"]["failed"], 1);
    let url = redis.url();
    let shown = golem(
        &env,
        "proj",
        &server,
        &["batch", "status", "poisoned", "--queue", &url],
    );
    assert!(
        stdout(&shown).contains("poison  after 3 deliveries"),
        "{}",
        stdout(&shown)
    );
    let results = results(&env, "proj", &server, &redis, "poisoned");
    assert_eq!(results["poison"]["status"], "failed");
    assert!(
        results["poison"]["error"]
            .as_str()
            .unwrap()
            .starts_with("given up after 3 deliveries")
    );
}

#[test]
fn a_wrong_password_or_no_server_is_one_line_and_exit_2_for_every_command() {
    let env = TestEnv::new();
    program(&env, "proj", &[("a", "do a")]);
    let server = MockServer::start_blocking(vec![]);
    let redis = RedisServer::start_with(Some("right-horse-battery"), false);
    let wrong = format!("redis://:staple-guess@127.0.0.1:{}/0", redis.port());
    let commands: Vec<Vec<&str>> = vec![
        enqueue_args(&wrong, "b").to_vec(),
        vec!["batch-worker", "--queue", &wrong, "--name", "b"],
        vec!["batch", "status", "b", "--queue", &wrong],
        vec!["batch", "results", "b", "--queue", &wrong],
        vec!["inbox", "--queue", &wrong],
        vec!["inbox", "approve", "1", "--queue", &wrong],
    ];
    for args in &commands {
        let output = golem(&env, "proj", &server, args);
        refused_in_one_line(&output, &["authentication failed", ":***@127.0.0.1"]);
        assert!(
            !stderr(&output).contains("staple-guess"),
            "{args:?} shows the password: {}",
            stderr(&output)
        );
    }
    // No password at all: the server says so, on one line.
    let bare = redis.url_without_password();
    let output = golem(
        &env,
        "proj",
        &server,
        &["batch", "status", "b", "--queue", &bare],
    );
    refused_in_one_line(&output, &["GOLEM_FORGE_REDIS_PASSWORD"]);
    // The password from the environment is used when the URL has none.
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(enqueue_args(&bare, "b"))
        .env("GOLEM_FORGE_REDIS_PASSWORD", "right-horse-battery")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    // Nothing listens: one line too.
    drop(redis);
    let output = golem(
        &env,
        "proj",
        &server,
        &["batch", "status", "b", "--queue", &bare],
    );
    refused_in_one_line(&output, &["cannot use the queue at redis://127.0.0.1"]);
}

#[test]
fn names_and_urls_that_cannot_work_are_refused_before_anything_is_queued() {
    let env = TestEnv::new();
    program(&env, "proj", &[("a", "do a")]);
    let server = MockServer::start_blocking(vec![]);
    let redis = RedisServer::start();
    let url = redis.url();
    let output = golem(&env, "proj", &server, &enqueue_args(&url, "a:b"));
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("`a:b` is not a batch name"),
        "{}",
        stderr(&output)
    );
    let output = golem(
        &env,
        "proj",
        &server,
        &enqueue_args("http://127.0.0.1:1/0", "a"),
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("must start with redis:// or rediss://"),
        "{}",
        stderr(&output)
    );
    // What only a local batch does is refused with --queue (consumers have their own).
    for flag in [
        &["--concurrency", "8"][..],
        &["--retry", "2"],
        &["--budget-tokens", "100"],
        &["--output", "r.jsonl"],
    ] {
        let mut args = enqueue_args(&url, "flags").to_vec();
        args.extend_from_slice(flag);
        let output = golem(&env, "proj", &server, &args);
        assert_exit(&output, 2);
        assert!(
            stderr(&output).contains("the argument '--queue <URL>' cannot be used with"),
            "{flag:?}: {}",
            stderr(&output)
        );
    }
    // The same name with other items is refused; with the same items, nothing is added.
    enqueue(&env, "proj", &server, &redis, "named", &[]);
    enqueue(&env, "proj", &server, &redis, "named", &[]);
    env.write(
        "proj/items.jsonl",
        "{\"id\": \"other\", \"input\": \"x\"}\n",
    );
    let output = golem(&env, "proj", &server, &enqueue_args(&url, "named"));
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("is on the queue already with other items"),
        "{}",
        stderr(&output)
    );
    let status = status(&env, "proj", &server, &redis, "named");
    assert_eq!(status["queued"], 1, "{status}");
    // A consumer whose program lacks the worker says so at start.
    env.mkdir("empty");
    let output = golem(
        &env,
        "empty",
        &server,
        &[
            "batch-worker",
            "--queue",
            &url,
            "--name",
            "named",
            "--root",
            ".",
        ],
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("worker `w.worker` is not in the program"),
        "{}",
        stderr(&output)
    );
    let output = golem(
        &env,
        "proj",
        &server,
        &["batch-worker", "--queue", &url, "--name", "missing"],
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("no batch `missing` on this queue"),
        "{}",
        stderr(&output)
    );
    // Whoever writes the queue cannot point a consumer at a worker outside its program.
    env.write("outside/evil.worker", "---\nname: evil\n---\nEvil.\n");
    let key = "golem-forge:batch:named:meta";
    let meta: String = redis::cmd("GET")
        .arg(key)
        .query(&mut redis.connection())
        .unwrap();
    let mut meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    meta["worker"] = "../outside/evil.worker".into();
    let () = redis::cmd("SET")
        .arg(key)
        .arg(meta.to_string())
        .query(&mut redis.connection())
        .unwrap();
    let output = golem(
        &env,
        "proj",
        &server,
        &["batch-worker", "--queue", &url, "--name", "named"],
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("is not a path inside the program"),
        "{}",
        stderr(&output)
    );
}
