//! Start-up, end to end: `golem-forge run main.worker hi` (the built binary, a child process)
//! of a plain worker with one `rw` zone and the filesystem tools, whose model is an
//! OpenAI-compatible provider at a mock server in this process that answers every request
//! with a short streamed text. One sample is one whole run: process start, command line, the
//! session opened (config, worker, tools, transcript), one model request and its stream, the
//! answer printed, the transcript closed, exit. For scale, `golem-forge --version` is the floor
//! of any run (loading the binary and the C runtime). `custom_tool_run` is the same run of a
//! worker with a custom Python toolset whose description is cached (the first run, before
//! the clock starts, describes it) and whose tools the model does not call: the launch of a
//! custom-tool worker.
//!
//! Divan reports the wall time of each. The peak resident set (`ru_maxrss` from `wait4`) is
//! measured after, over runs of its own, and printed as median and max: Linux counts in a
//! child's `ru_maxrss` the resident set of the process it was started from (the memory it ran
//! in until `exec`), so each of those runs is started by this bench's binary re-run as a small
//! launcher, whose own few megabytes stay below what is measured. The numbers include the
//! pages of the binary's code that the run touched, which depend on how the file sits in the
//! page cache (freshly written by the linker, or read back from disk), so compare builds
//! measured the same way. Those pages are few because the release link puts the functions a
//! launch runs first (`crates/cli/startup.order`, docs/decisions/0026-start-up-code-order.md);
//! the file names this bench's own build of the binary too. `GOLEM_FORGE_BIN` measures another build of the binary (e.g. a copy
//! from before a change) with the same bench.
//! `cargo bench -p golem-forge --bench startup`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

#[path = "support/child.rs"]
mod child;

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

use divan::Bencher;
use golem_testkit::mock::MockServer;

/// Runs per measurement.
const SAMPLES: u32 = 60;
/// Runs whose resident set is measured.
const RSS_RUNS: usize = 30;
/// Set for this binary re-run as the launcher of one measured run.
const LAUNCHER: &str = "GOLEM_FORGE_STARTUP_LAUNCHER";

fn main() {
    if std::env::var_os(LAUNCHER).is_some() {
        launcher();
        return;
    }
    divan::main();
    let dir = FIXTURE.dir.path();
    report_rss("golem-forge --version", dir, &["--version"]);
    report_rss(
        "golem-forge run (one turn)",
        dir,
        &["run", "main.worker", "hi"],
    );
    report_rss(
        "run, custom-tool worker",
        FIXTURE.custom.path(),
        &["run", "main.worker", "hi"],
    );
}

/// The mock model and the programs (kept alive for the whole bench).
struct Fixture {
    _server: MockServer,
    dir: tempfile::TempDir,
    /// A program whose worker has a custom toolset.
    custom: tempfile::TempDir,
}

/// The custom toolset's module: two tools, one importing a sibling.
const MODULE: &str = r#"
import helpers

def fibonacci(n: int) -> dict:
    """Computes the nth Fibonacci number."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return {"n": n, "value": a}

def word_count(text: str) -> str:
    """Counts the words of a text."""
    return helpers.count(text)
"#;

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let server = MockServer::start_blocking(Vec::new());
    server.set_fallback(golem_testkit::openai::text("Hello from the mock."));
    let (dir, _worker) = golem_testkit::program::mock_program(&server, "");
    let (custom, worker) = golem_testkit::program::mock_program(&server, "");
    let plain = std::fs::read_to_string(&worker).unwrap();
    std::fs::write(
        &worker,
        plain.replace(
            "toolsets:\n  filesystem: {}\n",
            "toolsets:\n  custom:\n    module: ./tools.py\n",
        ),
    )
    .unwrap();
    std::fs::write(custom.path().join("tools.py"), MODULE).unwrap();
    std::fs::write(
        custom.path().join("helpers.py"),
        "def count(text):\n    return str(len(text.split()))\n",
    )
    .unwrap();
    Fixture {
        _server: server,
        dir,
        custom,
    }
});

/// Runs the binary with `args` in `dir` (no terminal, no colour, no inherited model choice),
/// waits for it with `wait4` and returns its exit status and peak resident set in KiB.
fn run_child<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(dir: &Path, args: I) -> (i32, u64) {
    let child = child::command(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("golem-forge starts");
    let ended = child::wait(child);
    (ended.code, ended.max_rss_kib)
}

/// One `golem-forge run` of the mock worker in `dir`; it must succeed.
fn run_once(dir: &Path) {
    let (code, _) = run_child(dir, ["run", "main.worker", "hi"]);
    if code != 0 {
        let output = child::command(dir)
            .args(["run", "main.worker", "hi"])
            .output()
            .unwrap();
        panic!(
            "golem-forge run failed ({code}): {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[divan::bench(sample_count = SAMPLES, sample_size = 1)]
fn version(bencher: Bencher) {
    let dir = std::env::temp_dir();
    bencher.bench(|| {
        let (code, _) = run_child(&dir, ["--version"]);
        assert_eq!(code, 0);
    });
}

#[divan::bench(sample_count = SAMPLES, sample_size = 1)]
fn one_turn_run(bencher: Bencher) {
    // Set up (and warm the page cache) before the clock starts.
    let dir = FIXTURE.dir.path();
    run_once(dir);
    bencher.bench(|| run_once(dir));
}

#[divan::bench(sample_count = SAMPLES, sample_size = 1)]
fn custom_tool_run(bencher: Bencher) {
    // The first run describes the module (and fills the caches) before the clock starts.
    let dir = FIXTURE.custom.path();
    run_once(dir);
    assert!(
        dir.join(".golem-forge/custom-tools")
            .read_dir()
            .unwrap()
            .count()
            > 0,
        "the first run cached the module's description"
    );
    bencher.bench(|| run_once(dir));
}

/// The launcher: runs the binary with this process's arguments and prints its exit status and
/// peak resident set.
fn launcher() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::env::current_dir().unwrap();
    let (code, rss) = run_child(&dir, &args);
    println!("{code} {rss}");
}

/// Runs `args` in `dir` [`RSS_RUNS`] times, each through the launcher, and prints the median
/// and the largest peak resident set.
fn report_rss(label: &str, dir: &Path, args: &[&str]) {
    let mut kib = Vec::new();
    for _ in 0..RSS_RUNS {
        let output = Command::new(std::env::current_exe().unwrap())
            .current_dir(dir)
            .args(args)
            .env(LAUNCHER, "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        let (code, rss) = text.trim().split_once(' ').expect("the launcher's report");
        assert_eq!(code, "0", "{label} failed");
        kib.push(rss.parse::<u64>().unwrap());
    }
    kib.sort_unstable();
    let mib = |k: u64| k as f64 / 1024.0;
    println!(
        "{label:<28} peak RSS median {:.1} MiB (min {:.1}, max {:.1}, {} runs)",
        mib(kib[kib.len() / 2]),
        mib(kib[0]),
        mib(kib[kib.len() - 1]),
        kib.len()
    );
}
