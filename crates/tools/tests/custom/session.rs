//! The long-lived module process: calls reuse one process (a module-level counter counts
//! across them, for Python and JavaScript); a crash, a timeout and an interrupt are errors
//! after which the next call gets a fresh process (the counter starts again), and a timeout
//! kills what the tool started; an exception in a tool is an error that keeps the process;
//! `print()` and subprocess output never break the reply; a result that is not JSON is an
//! error naming the tool; the jail holds for the long-lived process; a call from another
//! runtime starts a process of its own.

use std::time::{Duration, Instant};

use super::*;

const COUNTER_PY: &str = r#"
import os, subprocess, sys, time

count = 0

def bump() -> dict:
    """Counts the calls this process has seen."""
    global count
    count += 1
    return {"count": count}

def noisy() -> str:
    """Prints everywhere it can."""
    print("print() to stdout")
    sys.stdout.write("no newline on stdout")
    sys.stdout.flush()
    os.system("echo from a subprocess; printf 'still no newline'")
    sys.__stdout__.write("and sys.__stdout__\n")
    return "quiet answer"

def crash() -> str:
    """Dies."""
    sys.stderr.write("about to die\n")
    sys.stderr.flush()
    os._exit(3)

def boom() -> str:
    """Raises."""
    raise RuntimeError("kaboom")

def not_json() -> float:
    """Returns NaN."""
    return float("nan")

def slow(marker: str) -> str:
    """Starts a sleeping child, then sleeps."""
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
    time.sleep(600)
    return "woke"

def read(path: str) -> str:
    """Reads a file."""
    try:
        with open(path) as f:
            return "read: " + f.read()
    except OSError as err:
        return "refused: " + type(err).__name__
"#;

const COUNTER_JS: &str = r#"
let count = 0;
export function bump() { count += 1; return { count }; }
export const bumpSchema = { type: "object" };
export function noisy() {
  console.log("console.log");
  process.stdout.write("no newline");
  return "quiet answer";
}
export const noisySchema = { type: "object" };
export function crash() { process.stderr.write("about to die\n"); process.exit(3); }
export const crashSchema = { type: "object" };
export function boom() { throw new Error("kaboom"); }
export const boomSchema = { type: "object" };
export async function slow() { await new Promise((r) => setTimeout(r, 600000)); return "woke"; }
export const slowSchema = { type: "object" };
"#;

fn python_session(f: &Fixture, timeout: Duration) -> Session {
    let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
    Session::new(
        f.tools("counter.py", COUNTER_PY, None, approval, timeout)
            .unwrap(),
    )
}

fn javascript_session(f: &Fixture, timeout: Duration) -> Session {
    let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
    Session::new(
        f.tools("counter.mjs", COUNTER_JS, None, approval, timeout)
            .unwrap(),
    )
}

async fn count(session: &Session) -> i64 {
    let out = session.ok("bump", json!({})).await;
    out.value.data["count"].as_i64().unwrap()
}

/// Processes of the host whose command line holds `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(marker))
        .count()
}

pub fn calls_reuse_one_process() {
    let f = Fixture::new();
    let python = python_session(&f, SECS);
    let javascript = javascript_session(&f, SECS);
    block_on(async {
        assert_eq!(count(&python).await, 1);
        assert_eq!(count(&python).await, 2);
        assert_eq!(count(&python).await, 3);
        assert_eq!(count(&javascript).await, 1);
        assert_eq!(count(&javascript).await, 2);
    });
}

pub fn a_crash_is_an_error_and_the_next_call_gets_a_fresh_process() {
    let f = Fixture::new();
    for session in [python_session(&f, SECS), javascript_session(&f, SECS)] {
        block_on(async {
            assert_eq!(count(&session).await, 1);
            assert_eq!(count(&session).await, 2);
            let (code, message) = session.error("crash", json!({})).await;
            assert_eq!(code, ToolErrorCode::ExecutionError);
            assert!(
                message.contains("custom tool `crash` (module ./counter.")
                    && message.contains("failed (exit 3)")
                    && message.contains("about to die"),
                "{message}"
            );
            assert_eq!(count(&session).await, 1, "a fresh process");
        });
    }
}

pub fn an_exception_is_an_error_and_keeps_the_process() {
    let f = Fixture::new();
    for session in [python_session(&f, SECS), javascript_session(&f, SECS)] {
        block_on(async {
            assert_eq!(count(&session).await, 1);
            let (code, message) = session.error("boom", json!({})).await;
            assert_eq!(code, ToolErrorCode::ExecutionError);
            assert!(
                message.contains("custom tool `boom` (module ./counter.")
                    && message.contains("failed")
                    && message.contains("kaboom"),
                "{message}"
            );
            // The traceback points into the module, not into the adapter.
            assert!(message.contains("counter."), "{message}");
            assert!(!message.contains("golem_adapter"), "{message}");
            assert_eq!(count(&session).await, 2, "the same process");
        });
    }
}

pub fn output_of_the_tool_never_breaks_the_reply() {
    let f = Fixture::new();
    for session in [python_session(&f, SECS), javascript_session(&f, SECS)] {
        block_on(async {
            for _ in 0..2 {
                let out = session.ok("noisy", json!({})).await;
                assert_eq!(
                    out.value,
                    golem_protocol::ToolResultValue::text("quiet answer")
                );
            }
            assert_eq!(count(&session).await, 1);
        });
    }
    let session = python_session(&f, SECS);
    block_on(async {
        let (code, message) = session.error("not_json", json!({})).await;
        assert_eq!(code, ToolErrorCode::ExecutionError);
        assert!(
            message.contains("custom tool `not_json` (module ./counter.py)")
                && message.contains("not JSON"),
            "{message}"
        );
    });
}

pub fn a_timeout_kills_everything_and_the_next_call_works() {
    let f = Fixture::new();
    let marker = format!("golem-session-timeout-{}", std::process::id());
    let session = python_session(&f, Duration::from_secs(2));
    block_on(async {
        assert_eq!(count(&session).await, 1);
        let started = Instant::now();
        let (code, message) = session.error("slow", json!({ "marker": marker })).await;
        assert_eq!(code, ToolErrorCode::Timeout, "{message}");
        assert!(
            message.contains("custom tool `slow` (module ./counter.py)")
                && message.contains("time limit"),
            "{message}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        let deadline = Instant::now() + Duration::from_secs(10);
        while processes_with(&marker) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(processes_with(&marker), 0, "what the tool started is gone");
        assert_eq!(count(&session).await, 1, "a fresh process");
    });
    let session = javascript_session(&f, Duration::from_secs(2));
    block_on(async {
        assert_eq!(count(&session).await, 1);
        let (code, message) = session.error("slow", json!({})).await;
        assert_eq!(code, ToolErrorCode::Timeout, "{message}");
        assert_eq!(count(&session).await, 1, "a fresh process");
    });
}

pub fn an_interrupt_kills_the_call_and_the_next_call_works() {
    let f = Fixture::new();
    let marker = format!("golem-session-interrupt-{}", std::process::id());
    let session = python_session(&f, SECS);
    block_on(async {
        assert_eq!(count(&session).await, 1);
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(700)).await;
            stop.cancel();
        });
        let started = Instant::now();
        let outcome = session
            .orchestrator
            .call(
                ToolCall::from_model("m1", "slow", json!({ "marker": marker })),
                &cancel,
            )
            .await;
        let error = outcome.error.expect("an error");
        assert_eq!(error.code, ToolErrorCode::Interrupted, "{}", error.message);
        assert!(started.elapsed() < Duration::from_secs(10));
        let deadline = Instant::now() + Duration::from_secs(10);
        while processes_with(&marker) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(processes_with(&marker), 0, "what the tool started is gone");
        assert_eq!(count(&session).await, 1, "a fresh process");
    });
}

pub fn the_jail_holds_for_the_long_lived_process() {
    let f = Fixture::new();
    let secret = f.dir.path().join("secret.txt").display().to_string();
    let session = python_session(&f, SECS);
    block_on(async {
        assert_eq!(count(&session).await, 1);
        for _ in 0..2 {
            let out = session.ok("read", json!({"path": "/work/notes.txt"})).await;
            assert_eq!(
                out.value,
                golem_protocol::ToolResultValue::text("read: inside the zone")
            );
            let out = session.ok("read", json!({ "path": secret })).await;
            let text = out.value.data["content"].as_str().unwrap().to_owned();
            assert!(text.starts_with("refused: "), "{text}");
        }
        // All of it in the one process.
        assert_eq!(count(&session).await, 2);
    });
}

pub fn a_call_from_another_runtime_gets_its_own_process() {
    let f = Fixture::new();
    let session = python_session(&f, SECS);
    assert_eq!(block_on(count(&session)), 1);
    assert_eq!(
        block_on(async { count(&session).await + count(&session).await }),
        3
    );
}
