//! A batch against a rate-limited provider, end to end: `golem-forge batch main.worker --input
//! items.jsonl --concurrency 64 --json` (the built binary, a child process) over 1,000
//! one-turn items, whose model is an OpenAI-compatible mock server in this process that lets
//! 600 requests a minute through (a token bucket of 10, refilled evenly; past it, a 429 with
//! `retry-after-ms`) and answers each request it lets through after 200 ms. At that limit the
//! batch cannot take less than about 100 s: what is measured is how close the pool's shared
//! rate gate keeps to the limit, and what the batch costs the machine.
//!
//! Reported, with goals: wall time; model requests answered per minute against the 600
//! allowed (≥ 90 %); items not completed (0); CPU time (user + system, from `wait4`) per item
//! (< 20 ms); the batch process's peak resident set (< 200 MB). Linux counts in a child's
//! `ru_maxrss` the resident set of the process it was started from (this one, a few MB when
//! the child starts), so the figure is a little high.
//!
//! `GOLEM_BENCH_ITEMS` runs fewer (or more) items, e.g. 120 for a quick try;
//! `GOLEM_BENCH_CONCURRENCY` another concurrency; `GOLEM_FORGE_BIN` another build of the
//! binary. `cargo bench -p golem-forge --bench batch`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

#[path = "support/child.rs"]
mod child;

use std::path::Path;
use std::time::{Duration, Instant};

use golem_protocol::BatchEvent;
use golem_testkit::mock::MockServer;

/// Items by default.
const ITEMS: usize = 1_000;
/// Items running at once by default.
const CONCURRENCY: u16 = 64;
/// Requests the mock lets through a minute.
const PER_MINUTE: u32 = 600;
/// Requests the mock lets through at once (a second's worth).
const BURST: u32 = 10;
/// How long the mock takes to answer a request it lets through.
const LATENCY: Duration = Duration::from_millis(200);

fn main() {
    let items = env_number("GOLEM_BENCH_ITEMS", ITEMS);
    let concurrency = env_number("GOLEM_BENCH_CONCURRENCY", usize::from(CONCURRENCY));
    let server = MockServer::start_blocking(Vec::new());
    server.set_fallback(golem_testkit::openai::text("Done.").delayed(LATENCY));
    let (dir, _worker) = golem_testkit::program::mock_program(&server, "");
    let lines: String = (1..=items)
        .map(|n| format!("{{\"id\": \"item-{n}\", \"input\": \"Say hello to number {n}.\"}}\n"))
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
    server.set_rate_limit(PER_MINUTE, BURST);

    println!(
        "golem-forge batch: {items} one-turn items at concurrency {concurrency}, the provider \
         allowing {PER_MINUTE} requests/min (burst {BURST}) and answering in {} ms",
        LATENCY.as_millis()
    );
    let run = run_batch(dir.path(), concurrency);
    let answered = server.requests().len() as u64 - server.rate_limited();
    let ended = read_ended(&dir.path().join("events.jsonl"));
    report(items, &run, answered, server.rate_limited(), &ended);
}

/// A number from the environment variable `name`, else `default`.
fn env_number(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}")),
        Err(_) => default,
    }
}

/// How the batch process ran.
struct Run {
    code: i32,
    wall: Duration,
    cpu: Duration,
    max_rss_kib: u64,
}

/// Runs the batch in `dir` with its events going to `events.jsonl` and its stderr to
/// `stderr.txt`; waits for it with `wait4`.
fn run_batch(dir: &Path, concurrency: usize) -> Run {
    let events = std::fs::File::create(dir.join("events.jsonl")).unwrap();
    let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let started = Instant::now();
    let child = child::command(dir)
        .args(["batch", "main.worker", "--input", "items.jsonl", "--json"])
        .args(["--concurrency", &concurrency.to_string()])
        .stdout(events)
        .stderr(stderr)
        .spawn()
        .expect("golem-forge starts");
    let ended = child::wait(child);
    let wall = started.elapsed();
    let code = ended.code;
    if code != 0 {
        let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
        eprintln!("golem-forge batch exited {code}:\n{stderr}");
    }
    Run {
        code,
        wall,
        cpu: ended.cpu,
        max_rss_kib: ended.max_rss_kib,
    }
}

/// The counts of `batchEnded`, the last of the events: completed, and not completed (failed,
/// other, waiting, not run).
fn read_ended(path: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.lines().last().expect("the batch printed events");
    match serde_json::from_str::<BatchEvent>(last) {
        Ok(BatchEvent::BatchEnded {
            completed,
            failed,
            other,
            waiting_approval,
            not_run,
            ..
        }) => (completed, failed + other + waiting_approval + not_run),
        _ => panic!("the last event is not batchEnded: {last}"),
    }
}

/// Prints the table.
fn report(items: usize, run: &Run, answered: u64, limited: u64, ended: &(u64, u64)) {
    let wall = run.wall.as_secs_f64();
    let per_minute = answered as f64 / wall * 60.0;
    let share = per_minute / f64::from(PER_MINUTE) * 100.0;
    let cpu_ms = run.cpu.as_secs_f64() * 1000.0 / items.max(1) as f64;
    let rss_mb = run.max_rss_kib as f64 * 1024.0 / 1e6;
    let (completed, not_completed) = *ended;
    let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
    let rows = [
        (
            "wall time".to_owned(),
            format!("{wall:.1} s"),
            format!(
                "≥ {:.1} s at the limit",
                items.saturating_sub(BURST as usize) as f64 / f64::from(PER_MINUTE) * 60.0
            ),
            String::new(),
        ),
        (
            "requests answered / min".to_owned(),
            format!("{per_minute:.0} ({share:.1} % of {PER_MINUTE})"),
            "≥ 90 %".to_owned(),
            verdict(share >= 90.0).to_owned(),
        ),
        (
            "429 answers".to_owned(),
            limited.to_string(),
            String::new(),
            String::new(),
        ),
        (
            "items not completed".to_owned(),
            format!("{not_completed} (completed {completed}, exit {})", run.code),
            "0".to_owned(),
            verdict(not_completed == 0 && run.code == 0).to_owned(),
        ),
        (
            "CPU time per item".to_owned(),
            format!("{cpu_ms:.2} ms ({:.1} s in all)", run.cpu.as_secs_f64()),
            "< 20 ms".to_owned(),
            verdict(cpu_ms < 20.0).to_owned(),
        ),
        (
            "peak RSS".to_owned(),
            format!("{rss_mb:.1} MB"),
            "< 200 MB".to_owned(),
            verdict(rss_mb < 200.0).to_owned(),
        ),
    ];
    println!(
        "{:<26} {:<34} {:<22} verdict",
        "measure", "measured", "goal"
    );
    for (name, value, goal, verdict) in rows {
        println!("{name:<26} {value:<34} {goal:<22} {verdict}");
    }
}
