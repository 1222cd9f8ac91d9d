//! End-to-end runs of `golem-forge run` as a subprocess against a local mock model server that
//! speaks the Anthropic and the OpenAI wire formats: files written, the tool results sent back
//! to the model, the `--json` event stream, transcripts, exit codes, SIGINT, and the approval
//! prompt at a terminal (in the chat's pseudo-terminal harness). The helpers are here; the
//! cases are in `run/`, one concern each.

mod approval;
mod budget;
pub(crate) mod changes;
mod custom;
mod daemons;
mod delegation;
mod dumpable;
mod ending;
pub(crate) mod git;
mod git_rules;
mod inbox;
mod interrupt;
mod leftovers;
mod mcp_cache;
mod mcp_elicitation;
mod mcp_http;
mod mcp_jail;
mod mcp_toolset;
mod processes;
mod prompt;
mod protected;
mod reaped;
mod small_window;
mod structured;
mod tool_schemas;
mod traces;
mod traces_endpoint;
pub(crate) mod transcript;
mod undo;
mod web;
mod wire;

use std::process::{Child, Output, Stdio};
use std::time::Duration;

use golem_testkit::mock::{MockServer, Reply};
use golem_testkit::{SentToolResult, Wire};
use serde_json::{Value, json};

use golem_testkit::cli::{
    self, TestEnv, api_key_env, assert_exit, fs_front_matter, model_for, provider_env, render,
    stderr, stdout, worker,
};

/// How long a run may take before a test gives up on it (never reached when things work).
const LIMIT: Duration = Duration::from_secs(20);

/// The headless denial (docs/cli.md, Approvals at a terminal).
fn headless_message(tool: &str) -> String {
    format!(
        "approval needed for {tool} but no terminal is attached (use --approval approve_all or auto_deny, or defer to let it wait in the inbox)"
    )
}

// ---- fixtures ----

/// The worker `main`: one read-write zone `out` (with `zone_approval`, an indented
/// `approval:` line or nothing) and the filesystem tools.
fn fs_worker(zone_approval: &str) -> String {
    worker("main", &fs_front_matter(zone_approval))
}

/// A worker that may delegate to `allowed` (and has no other tools).
fn delegating_worker(name: &str, allowed: &[&str]) -> String {
    worker(
        name,
        &format!(
            "toolsets:\n  workers:\n    allowed_workers: [{}]\n",
            allowed.join(", ")
        ),
    )
}

/// Writes the project `proj/`: a program config, the `out` zone and `workers` (file, text).
fn project(env: &TestEnv, workers: &[(&str, String)]) {
    env.project(workers);
}

// ---- running the binary ----

/// `golem-forge run ARGS --model …` with the provider of `wire` pointed at `server`.
fn run(env: &TestEnv, wire: Wire, server: &MockServer, args: &[&str]) -> Output {
    env.command()
        .arg("run")
        .args(args)
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, server))
        .output()
        .unwrap()
}

/// `golem-forge check proj/main.worker` with the offline model; it must succeed. Its stdout.
fn check_offline(env: &TestEnv) -> String {
    let output = env
        .command()
        .args(["check", "proj/main.worker", "--model", "test:default"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    stdout(&output)
}

/// Like [`run`], but started in the background with its output piped.
fn spawn(env: &TestEnv, wire: Wire, server: &MockServer, args: &[&str]) -> Child {
    env.std_command()
        .arg("run")
        .args(args)
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, server))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `signal` (`-INT`, `-KILL`) to the process `pid` with kill(1).
fn send_signal(pid: u32, signal: &str) {
    assert!(
        cli::signal(pid, signal.trim_start_matches('-')),
        "kill {signal} {pid} failed"
    );
}

/// Waits for `child` to exit and collects its output; kills it if it outlives [`LIMIT`].
fn wait_for_exit(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            send_signal(pid, "-KILL");
            panic!("golem-forge did not exit within {LIMIT:?}")
        }
    }
}

/// The `--json` stdout as events: every line must be one JSON object with a string `type`,
/// and nothing else may be there.
fn events(output: &Output) -> Vec<Value> {
    let text = stdout(output);
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "stdout ends mid-line: {text:?}"
    );
    text.lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line on stdout ({e}): {line:?}"));
            assert!(event["type"].is_string(), "an event without a type: {line}");
            event
        })
        .collect()
}

/// The events' types, with each run of consecutive `streaming` events folded into one.
fn types(events: &[Value]) -> Vec<&str> {
    let mut types: Vec<&str> = Vec::new();
    for event in events {
        let kind = event["type"].as_str().unwrap();
        if !(kind == "streaming" && types.last() == Some(&"streaming")) {
            types.push(kind);
        }
    }
    types
}

/// The events of `kind`.
fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The tool results sent in the request at `index`, with a readable failure if it is missing.
fn results_sent(wire: Wire, server: &MockServer, index: usize) -> Vec<SentToolResult> {
    let requests = server.requests();
    let request = requests
        .get(index)
        .unwrap_or_else(|| panic!("{wire:?}: only {} requests", requests.len()));
    wire.tool_results(request)
}

/// What a run printed (its [`render`]), with what changes from run to run redacted for a
/// snapshot: the temp dir, and each duration in parentheses (`(74 ms)`, `(1.2 s)`).
fn trace_redacted(env: &TestEnv, text: &str) -> String {
    let text = text.replace(&env.path().display().to_string(), "[ROOT]");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find('(') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let number = after
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(after.len());
        let unit = after[number..].trim_start();
        let duration = ["ms)", "s)", "m)"]
            .iter()
            .find(|u| number > 0 && unit.starts_with(*u))
            .map(|u| after.len() - unit.len() + u.len());
        match duration {
            Some(end) => {
                out.push_str("([DURATION])");
                rest = &after[end..];
            }
            None => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
