//! What trace export costs a run, end to end: `golem-forge run main.worker hello --model test`
//! (the built binary, a child process; the offline test model, a worker without tools) timed
//! whole, from process start to exit, in four settings of the collector:
//!
//! - `off`: no `OTEL_*` variable at all (none leaks from this bench's environment), the
//!   baseline;
//! - `live`: `OTEL_EXPORTER_OTLP_ENDPOINT` at an OTLP/HTTP receiver in this process that
//!   answers every export (the exit flush waits for its answer);
//! - `dead`: the endpoint is a local port where nothing listens (the export fails at connect,
//!   the run prints one warning);
//! - `stalling` (a bench of its own, fewer samples): the endpoint accepts the export and never
//!   answers, so the flush at exit waits until its bound (two seconds) runs out.
//!
//! Before the clock starts, each setting is run once and checked: exit 0 and the answer
//! printed; `off` prints nothing on stderr; the live receiver got the run's `invoke_agent main`
//! span; the dead endpoint costs exactly one stderr line, saying "traces cannot be sent"; the
//! stalling one is told what it printed and how long it took.
//!
//! Each child gets `HOME` in the bench's temp dir (no user config can turn tracing on or
//! change the run). `GOLEM_FORGE_BIN` measures another build of the binary with the same
//! bench. For a second view with another tool (e.g. `hyperfine`), `GOLEM_FORGE_TRACES_SERVE=live`
//! (or `stalling`) makes this bench's binary serve that receiver alone: it prints the endpoint,
//! keeps serving until its stdin closes, then prints how many exports arrived.
//! `cargo bench -p golem-forge --bench traces`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

#[path = "support/child.rs"]
mod child;

use std::fmt;
use std::io::Read as _;
use std::process::{Command, Output, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use divan::Bencher;
use golem_testkit::otlp::{OtlpReceiver, dead_endpoint};

/// Runs per measurement of the fast settings.
const SAMPLES: u32 = 40;
/// Runs per measurement against the stalling endpoint (each waits out the exit flush).
const STALL_SAMPLES: u32 = 5;
/// Set to `live` or `stalling` to make this binary serve that receiver (see the header).
const SERVE: &str = "GOLEM_FORGE_TRACES_SERVE";
/// The worker run.
const WORKER: &str = "main.worker";
/// The session span a traced run of [`WORKER`] exports.
const SESSION_SPAN: &str = "invoke_agent main";
/// What the offline test model answers to `hello`.
const ANSWER: &str = "Test model: you said \"hello\".";

fn main() {
    if let Some(mode) = std::env::var_os(SERVE) {
        serve(&mode.to_string_lossy());
        return;
    }
    verify();
    divan::main();
}

/// Where a run's traces go.
#[derive(Debug, Clone, Copy)]
enum Setting {
    /// Tracing off: no `OTEL_*` variable.
    Off,
    /// The receiver [`LIVE`], which answers.
    Live,
    /// [`DEAD`], where nothing listens.
    Dead,
    /// The receiver [`STALLING`], which never answers.
    Stalling,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Setting::Off => "off",
            Setting::Live => "live",
            Setting::Dead => "dead",
            Setting::Stalling => "stalling",
        })
    }
}

impl Setting {
    /// The value of `OTEL_EXPORTER_OTLP_ENDPOINT`, if any.
    fn endpoint(self) -> Option<String> {
        match self {
            Setting::Off => None,
            Setting::Live => Some(LIVE.endpoint()),
            Setting::Dead => Some(DEAD.clone()),
            Setting::Stalling => Some(STALLING.endpoint()),
        }
    }
}

/// The project: one worker without tools, and the home of every run.
static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(WORKER),
        golem_testkit::cli::worker("main", ""),
    )
    .unwrap();
    dir
});

/// The answering receiver (kept for the whole bench).
static LIVE: LazyLock<OtlpReceiver> = LazyLock::new(OtlpReceiver::start_http_blocking);
/// The endpoint where nothing listens.
static DEAD: LazyLock<String> = LazyLock::new(dead_endpoint);
/// The receiver that never answers (it holds every run's connection until the bench ends).
static STALLING: LazyLock<OtlpReceiver> = LazyLock::new(OtlpReceiver::http_stalling_blocking);

/// The one-turn run in `setting`: no `OTEL_*` variable of this process's, `HOME` the project,
/// the endpoint of `setting` if it has one.
fn command(setting: Setting) -> Command {
    let dir = DIR.path();
    let mut command = child::command(dir);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("OTEL_") {
            command.env_remove(name);
        }
    }
    command
        .env("HOME", dir)
        .args(["run", WORKER, "hello", "--model", "test"]);
    if let Some(endpoint) = setting.endpoint() {
        command.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
    }
    command
}

/// One measured run: output discarded, exit code read with `wait4`; it must succeed.
fn run_once(setting: Setting) {
    let child = command(setting)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("golem-forge starts");
    let code = child::wait(child).code;
    assert_eq!(code, 0, "golem-forge run ({setting}) failed");
}

/// One run with its output kept, and how long it took.
fn run_output(setting: Setting) -> (Output, Duration) {
    let started = Instant::now();
    let output = command(setting).output().expect("golem-forge runs");
    (output, started.elapsed())
}

/// Asserts the run exited 0 and printed the answer.
fn assert_answered(setting: Setting, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{setting}: golem-forge run failed: {stderr}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(ANSWER),
        "{setting}: no answer printed"
    );
}

/// Runs each setting once and checks what it did (see the header); prints what it found.
fn verify() {
    let (output, took) = run_output(Setting::Off);
    assert_answered(Setting::Off, &output);
    assert!(output.stderr.is_empty(), "off: something on stderr");
    println!("check off: exit 0, stderr empty ({took:.1?})");

    let (output, took) = run_output(Setting::Live);
    assert_answered(Setting::Live, &output);
    let spans = LIVE.wait_for_spans(
        |spans| spans.iter().any(|s| s.name == SESSION_SPAN),
        Duration::from_secs(10),
    );
    assert!(
        spans.iter().any(|s| s.name == SESSION_SPAN),
        "live: the receiver got no `{SESSION_SPAN}` span: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    println!(
        "check live: exit 0, the receiver got {} spans in {} exports, `{SESSION_SPAN}` among them ({took:.1?})",
        spans.len(),
        LIVE.requests().len()
    );

    let (output, took) = run_output(Setting::Dead);
    assert_answered(Setting::Dead, &output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "dead: not one stderr line: {stderr}");
    assert!(
        lines[0].contains("traces cannot be sent"),
        "dead: not the warning: {stderr}"
    );
    println!(
        "check dead: exit 0, one stderr line ({took:.1?}): {}",
        lines[0]
    );

    let (output, took) = run_output(Setting::Stalling);
    assert_answered(Setting::Stalling, &output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!(
        "check stalling: exit 0 after {took:.1?}, {} exports arrived, {} stderr lines{}",
        STALLING.arrived(),
        stderr.lines().count(),
        if stderr.is_empty() {
            String::new()
        } else {
            format!(": {}", stderr.trim_end())
        }
    );
}

#[divan::bench(args = [Setting::Off, Setting::Live, Setting::Dead], sample_count = SAMPLES, sample_size = 1)]
fn one_turn_run(bencher: Bencher, setting: Setting) {
    // Start the receiver (and warm the page cache) before the clock starts.
    run_once(setting);
    bencher.bench(|| run_once(setting));
}

#[divan::bench(sample_count = STALL_SAMPLES, sample_size = 1)]
fn one_turn_run_stalling(bencher: Bencher) {
    run_once(Setting::Stalling);
    bencher.bench(|| run_once(Setting::Stalling));
}

/// Serves the receiver `mode` names until stdin closes (see the header).
fn serve(mode: &str) {
    let receiver = match mode {
        "live" => OtlpReceiver::start_http_blocking(),
        "stalling" => OtlpReceiver::http_stalling_blocking(),
        other => panic!("{SERVE}={other}: `live` or `stalling` was expected"),
    };
    println!("{}", receiver.endpoint());
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    println!("{} exports arrived", receiver.arrived());
}
