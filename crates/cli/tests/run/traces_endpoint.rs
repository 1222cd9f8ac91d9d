//! A trace collector that is down, hangs, is switched off or is misconfigured never breaks a
//! run: `golem-forge run` with the offline test model still answers and exits 0, a dead
//! endpoint or a bad protocol costs one warning on stderr, a stalling endpoint does not keep
//! the process alive (the exit flush is bounded), and `OTEL_SDK_DISABLED=true` sends nothing.

use std::time::Duration;

use golem_testkit::otlp::{OtlpReceiver, dead_endpoint};

use super::*;

/// The worker run in every case.
const WORKER: &str = "proj/main.worker";

/// What the offline test model answers to `hello`.
const ANSWER: &str = "Test model: you said \"hello\".";

/// How long a run against a stalling collector may take before the test gives up on it (far
/// above the two seconds the exit flush may take; never reached when things work).
const STALL_LIMIT: Duration = Duration::from_secs(15);

/// How long the receiver is watched for spans that must not come.
const QUIET: Duration = Duration::from_millis(1500);

/// A project with the worker `main` (no tools).
fn env() -> TestEnv {
    let env = TestEnv::new();
    project(&env, &[("main.worker", worker("main", ""))]);
    env
}

/// `golem-forge run proj/main.worker hello --model test` with `vars` added to the clean
/// environment, started in the background with its output piped.
fn spawn_offline(env: &TestEnv, vars: &[(&str, &str)]) -> Child {
    env.std_command()
        .args(["run", WORKER, "hello", "--model", "test"])
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Like [`spawn_offline`], waited for (killed if it outlives `limit`).
fn run_offline(env: &TestEnv, vars: &[(&str, &str)], limit: Duration) -> Output {
    let child = spawn_offline(env, vars);
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            send_signal(pid, "-KILL");
            panic!("golem-forge did not exit within {limit:?}")
        }
    }
}

/// Asserts the run succeeded and printed the test model's answer.
fn assert_answered(output: &Output) {
    assert_exit(output, 0);
    assert!(
        stdout(output).contains(ANSWER),
        "the answer is printed as usual:\n{}",
        render(output)
    );
}

/// The lines of stderr that contain `needle`.
fn stderr_lines_with(output: &Output, needle: &str) -> Vec<String> {
    stderr(output)
        .lines()
        .filter(|line| line.contains(needle))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_dead_endpoint_costs_one_warning_and_the_run_succeeds() {
    let env = env();
    let endpoint = dead_endpoint();
    let output = run_offline(&env, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)], LIMIT);
    assert_answered(&output);
    let warnings = stderr_lines_with(&output, "traces cannot be sent");
    assert_eq!(warnings.len(), 1, "one warning:\n{}", render(&output));
    assert!(
        warnings[0].contains(&endpoint),
        "the warning names the endpoint: {}",
        warnings[0]
    );
    assert_eq!(
        stderr(&output).lines().count(),
        1,
        "nothing else on stderr:\n{}",
        render(&output)
    );
}

#[test]
fn a_stalling_endpoint_does_not_keep_the_process_alive_and_is_one_warning() {
    let env = env();
    let receiver = OtlpReceiver::http_stalling_blocking();
    let endpoint = receiver.endpoint();
    let output = run_offline(
        &env,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
        STALL_LIMIT,
    );
    assert_answered(&output);
    assert!(
        receiver.arrived() >= 1,
        "the export reached the stalling endpoint (so the exit flush had something to wait \
         for):\n{}",
        render(&output)
    );
    let warnings: Vec<&str> = std::str::from_utf8(&output.stderr)
        .unwrap()
        .lines()
        .filter(|line| line.contains("traces cannot be sent"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "a collector that never answers is one warning:\n{}",
        render(&output)
    );
    assert!(warnings[0].contains("at exit"), "{}", warnings[0]);
}

#[test]
fn otel_sdk_disabled_sends_nothing() {
    let env = env();
    let receiver = OtlpReceiver::start_http_blocking();
    let endpoint = receiver.endpoint();

    // The same receiver gets the spans of a run without the switch…
    let output = run_offline(&env, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)], LIMIT);
    assert_answered(&output);
    let spans = receiver.wait_for_spans(
        |spans| spans.iter().any(|s| s.name == "invoke_agent main"),
        Duration::from_secs(10),
    );
    assert!(
        spans.iter().any(|s| s.name == "invoke_agent main"),
        "a run with tracing on exported its session span: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let before = receiver.arrived();
    assert!(before >= 1);

    // …and none of a run with it.
    let output = run_offline(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_SDK_DISABLED", "true"),
        ],
        LIMIT,
    );
    assert_answered(&output);
    assert_eq!(stderr(&output), "", "nothing is told:\n{}", render(&output));
    std::thread::sleep(QUIET);
    assert_eq!(
        receiver.arrived(),
        before,
        "no export arrived from the disabled run"
    );
}

#[test]
fn an_unsupported_protocol_is_one_warning_naming_the_variable() {
    let env = env();
    let receiver = OtlpReceiver::start_http_blocking();
    let endpoint = receiver.endpoint();
    let output = run_offline(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
        LIMIT,
    );
    assert_answered(&output);
    let warnings = stderr_lines_with(&output, "OTEL_EXPORTER_OTLP_PROTOCOL");
    assert_eq!(warnings.len(), 1, "one warning:\n{}", render(&output));
    assert!(
        warnings[0].contains("http/json"),
        "the warning names the value: {}",
        warnings[0]
    );
    assert_eq!(
        stderr(&output).lines().count(),
        1,
        "nothing else on stderr:\n{}",
        render(&output)
    );
}
