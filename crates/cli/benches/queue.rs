//! Batches on a Redis queue: what more consumers buy, and what Redis costs an item. A real
//! `redis-server` (Debian's) on a free port, the mock model in this process answering every
//! request after 200 ms, and the built binary as the consumers.
//!
//! 1. Scaling: the same number of one-turn items (120 by default) enqueued twice, run once by
//!    one `batch-worker --concurrency 1 --until-done` and once by three side by side; reported
//!    as items per minute of each and their ratio (goal: three ≥ 2.7× one). The wall time is
//!    from starting the consumers to the last one's exit, their start-up and the last
//!    drained-check included.
//! 2. Redis's share of an item, in this process with the crate's own scripts: enqueueing
//!    (`golem_queue::enqueue`, per item), taking it (`XREADGROUP`), and recording its result and
//!    acknowledging it (the `FINISH` script); reported as the mean per item over 2,000 items
//!    (goal: under 2 ms).
//!
//! `GOLEM_BENCH_ITEMS` sets the items of part 1; `GOLEM_FORGE_BIN` another build of the
//! binary. `cargo bench -p golem-forge --bench queue`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

#[path = "support/child.rs"]
mod child;
// The queue tests' server: Debian's redis-server on a free port, in a temporary directory.
#[allow(dead_code, reason = "the bench needs only a plain server")]
#[path = "../tests/queue/redis_server.rs"]
mod redis_server;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use golem_batch::BatchItem;
use golem_queue::keys::{BatchKeys, GROUP};
use golem_queue::{Queue, QueueMeta, QueueUrl, enqueue};
use golem_testkit::mock::MockServer;

/// Items of the scaling part by default.
const ITEMS: usize = 120;
/// How long the mock takes to answer.
const LATENCY: Duration = Duration::from_millis(200);
/// Items of the overhead part.
const OVERHEAD_ITEMS: usize = 2_000;

fn main() {
    let items = std::env::var("GOLEM_BENCH_ITEMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(ITEMS);
    let redis = redis_server::RedisServer::start();
    let server = MockServer::start_blocking(Vec::new());
    server.set_fallback(golem_testkit::openai::text("Done.").delayed(LATENCY));
    let (dir, _worker) = golem_testkit::program::mock_program(&server, "");
    let lines: String = (1..=items)
        .map(|n| format!("{{\"id\": \"item-{n}\", \"input\": \"Say hello to number {n}.\"}}\n"))
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
    println!(
        "golem-forge batch-worker: {items} one-turn items, the model answering in {} ms, one \
         item at a time per consumer",
        LATENCY.as_millis()
    );
    let one = run_consumers(dir.path(), &redis.url(), "one", 1, items);
    let three = run_consumers(dir.path(), &redis.url(), "three", 3, items);
    let per_minute = |wall: Duration| items as f64 * 60.0 / wall.as_secs_f64();
    println!(
        "  1 consumer:  {:>7.2} s  {:>6.0} items/min",
        one.as_secs_f64(),
        per_minute(one)
    );
    println!(
        "  3 consumers: {:>7.2} s  {:>6.0} items/min",
        three.as_secs_f64(),
        per_minute(three)
    );
    let ratio = per_minute(three) / per_minute(one);
    println!("  ratio: {ratio:.2}× (goal ≥ 2.70×)");

    let overhead = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(overhead(&redis.url()));
    println!("Redis per item, {OVERHEAD_ITEMS} items, this process:");
    for (step, time) in &overhead {
        println!("  {step:<28} {:>8.1} µs", time.as_secs_f64() * 1e6);
    }
    let total: Duration = overhead.iter().map(|(_, t)| *t).sum();
    println!(
        "  {:<28} {:>8.1} µs (goal < 2,000 µs)",
        "in all",
        total.as_secs_f64() * 1e6
    );
}

/// Enqueues the items as batch `name` and runs `consumers` consumers until it is drained;
/// returns the wall time of the consumers.
fn run_consumers(dir: &Path, url: &str, name: &str, consumers: usize, items: usize) -> Duration {
    let enqueued = child::command(dir)
        .args(["batch", "main.worker", "--input", "items.jsonl"])
        .args(["--queue", url, "--name", name])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(enqueued.success(), "enqueueing failed");
    let started = Instant::now();
    let children: Vec<Child> = (0..consumers)
        .map(|n| {
            child::command(dir)
                .args(["batch-worker", "--queue", url, "--name", name])
                .args(["--concurrency", "1", "--until-done"])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(format!("{name}-{n}.txt"))).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let ended = child::wait(child);
        assert_eq!(ended.code, 0, "a consumer failed");
    }
    let wall = started.elapsed();
    let completed = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}-"))
        })
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .filter(|l| l.ends_with(": completed"))
                .count()
        })
        .sum::<usize>();
    assert_eq!(completed, items, "not every item completed once");
    wall
}

/// The mean time per item of each Redis step of an item's life.
async fn overhead(url: &str) -> Vec<(&'static str, Duration)> {
    let queue = Queue::open(&QueueUrl::parse(url, None).unwrap())
        .await
        .unwrap();
    let items: Vec<BatchItem> = (1..=OVERHEAD_ITEMS)
        .map(|n| BatchItem {
            id: format!("o-{n}"),
            input: format!("Say hello to number {n}."),
            instructions: None,
            line: n,
        })
        .collect();
    let meta = QueueMeta {
        worker: "main.worker".into(),
        input_hash: "bench".into(),
        items: items.len(),
        queued: "2026-11-28T00:00:00Z".into(),
        model: None,
        approval: None,
        max_iterations: None,
        max_deliveries: 3,
    };
    let started = Instant::now();
    enqueue(&queue, "overhead", &meta, &items).await.unwrap();
    let enqueue_time = started.elapsed();
    let keys = BatchKeys::new("overhead").unwrap();
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let (mut take_time, mut finish_time) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..OVERHEAD_ITEMS {
        let started = Instant::now();
        let read: redis::streams::StreamReadReply = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(GROUP)
            .arg("bench")
            .arg("COUNT")
            .arg(1)
            .arg("STREAMS")
            .arg(keys.items())
            .arg(">")
            .query_async(&mut con)
            .await
            .unwrap();
        take_time += started.elapsed();
        let entry = &read.keys[0].ids[0];
        let id: String = entry.get("id").unwrap();
        let result = format!(
            r#"{{"id":"{id}","status":"completed","answer":"Done.","usage":{{"inputTokens":10,"outputTokens":5}},"attempt":1}}"#
        );
        let started = Instant::now();
        let outcome: String = golem_queue::scripts::FINISH
            .key(keys.items())
            .key(keys.results())
            .key(keys.results_stream())
            .key(keys.dead())
            .key(keys.parked())
            .arg(GROUP)
            .arg(&entry.id)
            .arg("bench")
            .arg(&id)
            .arg(&result)
            .arg("")
            .invoke_async(&mut con)
            .await
            .unwrap();
        finish_time += started.elapsed();
        assert_eq!(outcome, "recorded");
    }
    let per = |total: Duration| total / OVERHEAD_ITEMS as u32;
    vec![
        ("enqueue (share of one call)", per(enqueue_time)),
        ("take (XREADGROUP)", per(take_time)),
        ("result + ack (FINISH)", per(finish_time)),
    ]
}
