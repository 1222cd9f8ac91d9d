//! Session start time with MCP servers configured: `golem-forge run` (the built binary) of a
//! worker on the offline test model (`-m test:default`) with no MCP server, against the same
//! worker with three MCP servers (the everything reference server twice and the filesystem
//! server, installed by `scripts/test` into `target/mcp-servers`) whose tool lists are cached —
//! the cache is what lets a session start without starting them. Their tools ask for
//! approval, which a headless run denies, so no server is started for a call (the test model
//! calls each tool once: three more model turns than without MCP); the same servers with
//! empty whitelists separate the cost of reading the cache from those turns. Also, for
//! scale, a few runs with the cache removed before each (every server started to list its
//! tools). Prints the median and spread of each; run with `cargo bench -p golem-forge --bench
//! mcp_start`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs of each warm measurement.
const RUNS: usize = 21;
/// Runs with a cold cache.
const COLD_RUNS: usize = 5;

fn servers_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/@modelcontextprotocol")
}

fn worker(name: &str, toolsets: &str) -> String {
    format!("---\nname: {name}\ndescription: bench\n{toolsets}---\nYou are a bench worker.\n")
}

/// One timed `golem-forge run` of `worker` in `dir`; it must succeed.
fn run_once(dir: &Path, worker: &str) -> Duration {
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_golem-forge"))
        .current_dir(dir)
        .args(["run", worker, "hello", "-m", "test:default"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("golem-forge runs");
    let took = start.elapsed();
    assert!(
        output.status.success(),
        "{worker} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

fn median_ms(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
    )
}

fn main() {
    let root = servers_root();
    let everything = root.join("server-everything/dist/index.js");
    let files = root.join("server-filesystem/dist/index.js");
    assert!(
        everything.is_file() && files.is_file(),
        "{}",
        golem_testkit::parts::missing(
            "the MCP reference servers",
            golem_testkit::parts::MCP_SERVERS_INSTALL
        )
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("golem-forge.config.yaml"),
        "model: test:default\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("none.worker"), worker("none", "")).unwrap();
    let mcp = format!(
        "toolsets:\n  mcp:\n    servers:\n      one: {{ command: node, args: [\"{e}\", stdio] }}\n      \
         two: {{ command: node, args: [\"{e}\", stdio], env: {{ SECOND: \"yes\" }} }}\n      \
         files: {{ command: node, args: [\"{f}\", \"{d}\"] }}\n    \
         tools: {{ one: [echo], two: [get-sum], files: [list_directory] }}\n",
        e = everything.display(),
        f = files.display(),
        d = dir.path().join("docs").display()
    );
    std::fs::write(dir.path().join("mcp.worker"), worker("mcp", &mcp)).unwrap();
    // The same servers with empty whitelists: their cache is read, but no tool is offered, so
    // the run has no more model turns than the one without MCP.
    let quiet = mcp.replace(
        "tools: { one: [echo], two: [get-sum], files: [list_directory] }",
        "tools: { one: [], two: [], files: [] }",
    );
    std::fs::write(dir.path().join("quiet.worker"), worker("quiet", &quiet)).unwrap();
    let cache = dir.path().join(".golem-forge/mcp-tools");

    // Warm up (and fill the cache).
    run_once(dir.path(), "none.worker");
    run_once(dir.path(), "mcp.worker");
    run_once(dir.path(), "quiet.worker");
    assert!(
        std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0) >= 3,
        "the three tool lists are cached"
    );

    let mut none = Vec::new();
    let mut warm = Vec::new();
    let mut quiet = Vec::new();
    for _ in 0..RUNS {
        none.push(run_once(dir.path(), "none.worker"));
        warm.push(run_once(dir.path(), "mcp.worker"));
        quiet.push(run_once(dir.path(), "quiet.worker"));
    }
    let mut cold = Vec::new();
    for _ in 0..COLD_RUNS {
        std::fs::remove_dir_all(&cache).unwrap();
        cold.push(run_once(dir.path(), "mcp.worker"));
    }
    let report = |label: &str, times: Vec<Duration>| {
        let runs = times.len();
        let (median, min, max) = median_ms(times);
        println!("{label:<44} median {median:7.1} ms  (min {min:.1}, max {max:.1}, {runs} runs)");
    };
    report("golem-forge run, no MCP server", none);
    report("golem-forge run, 3 MCP servers, warm cache", warm);
    report("  the same, no tool offered (no extra turns)", quiet);
    report("golem-forge run, 3 MCP servers, cold cache", cold);
}
