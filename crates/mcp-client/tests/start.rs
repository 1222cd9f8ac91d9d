//! MCP servers that do not start, outside the jail: building the toolset lists each server's
//! tools, so a server that exits, closes its output or stays silent before it initializes
//! fails the build with an error naming the server, its command, how it ended and the last
//! lines of its stderr (bounded, however much it wrote, and read all along so that a chatty
//! server never blocks), and asking whether it is installed when something was not found.
//! Each server runs under the reaper, as in golem-forge: a daemon it started (double fork and
//! `setsid`) is gone once the build returns, and a server killed by a signal is reported so.
//!
//! The reaper is our binary's helper mode (`<binary> __jail --reap …`), so this test binary is
//! its own helper, as the jail's tests are: `harness = false`, and `main` answers the helper's
//! arguments before it runs the tests (`support/jail_runner.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use golem_mcp_client::{McpOptions, McpServerConfig, McpToolsetConfig, mcp_tools};

use golem_sandbox::jail::{HELPER_ARG, helper_main};
use golem_testkit::harness::Test;

const TESTS: &[(&str, Test)] = &[
    (
        "a_server_that_exits_is_reported_with_its_command_its_code_and_its_stderr",
        a_server_that_exits_is_reported_with_its_command_its_code_and_its_stderr,
    ),
    (
        "a_node_script_that_does_not_exist_shows_nodes_own_error",
        a_node_script_that_does_not_exist_shows_nodes_own_error,
    ),
    (
        "a_program_that_does_not_exist_is_named",
        a_program_that_does_not_exist_is_named,
    ),
    (
        "a_server_that_closes_its_output_but_runs_on_is_stopped",
        a_server_that_closes_its_output_but_runs_on_is_stopped,
    ),
    (
        "a_chatty_server_never_blocks_and_only_the_end_of_its_stderr_is_shown",
        a_chatty_server_never_blocks_and_only_the_end_of_its_stderr_is_shown,
    ),
    (
        "a_chatty_server_that_never_answers_times_out_with_the_end_of_its_stderr",
        a_chatty_server_that_never_answers_times_out_with_the_end_of_its_stderr,
    ),
    (
        "a_server_killed_by_a_signal_is_reported_so",
        a_server_killed_by_a_signal_is_reported_so,
    ),
    (
        "a_daemon_of_a_server_is_gone_when_the_server_is",
        a_daemon_of_a_server_is_gone_when_the_server_is,
    ),
];

fn main() -> ExitCode {
    golem_testkit::harness::main(TESTS, (HELPER_ARG, helper_main))
}

/// This binary, the reaper of the servers.
fn reaper() -> Option<PathBuf> {
    Some(std::env::current_exe().unwrap())
}

/// The error of building a toolset with the one server `broken`, started as `command` with
/// `args` in a temporary directory under the reaper, bounded by `timeout`.
fn start_error(command: &str, args: &[&str], timeout: Duration) -> String {
    start_error_with(command, args, timeout, reaper())
}

/// [`start_error`] with `reaper` (`None`: the server runs alone).
fn start_error_with(
    command: &str,
    args: &[&str],
    timeout: Duration,
    reaper: Option<PathBuf>,
) -> String {
    let cwd = tempfile::tempdir().unwrap();
    let env = BTreeMap::from([("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned())]);
    let server = McpServerConfig::Stdio {
        command: command.to_owned(),
        args: args.iter().map(|&a| a.to_owned()).collect(),
        env,
        cwd: None,
        jail: None,
    };
    let options = McpOptions {
        config: McpToolsetConfig {
            servers: BTreeMap::from([("broken".to_owned(), server)]),
            timeout: timeout.as_secs(),
            ..McpToolsetConfig::default()
        },
        base_dir: cwd.path().to_path_buf(),
        reaper,
        ..McpOptions::default()
    };
    match mcp_tools(options) {
        Ok(_) => panic!("the server `{command}` started"),
        Err(e) => e.to_string(),
    }
}

/// The lines of `error` quoted from the server's stderr (indented two spaces).
fn quoted(error: &str) -> Vec<&str> {
    error
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .collect()
}

fn a_server_that_exits_is_reported_with_its_command_its_code_and_its_stderr() {
    let script = "echo 'starting up' >&2; echo \"Error: Cannot find module 'x'\" >&2; exit 3";
    let error = start_error("sh", &["-c", script], Duration::from_secs(20));
    assert!(
        error.starts_with("MCP server `broken` did not start: "),
        "names the server: {error}"
    );
    assert!(
        error.contains("`sh -c 'echo '\\''starting up'\\'' >&2; "),
        "names the command: {error}"
    );
    assert!(
        error.contains("exited with code 3 before initializing"),
        "{error}"
    );
    assert_eq!(
        quoted(&error),
        ["starting up", "Error: Cannot find module 'x'"],
        "{error}"
    );
    assert!(
        error.contains("is the server installed? (see the worker's README)"),
        "a module not found asks whether it is installed: {error}"
    );
}

fn a_node_script_that_does_not_exist_shows_nodes_own_error() {
    let error = start_error(
        "node",
        &["no/such/server/index.js", "stdio"],
        Duration::from_secs(20),
    );
    assert!(
        error.contains("`node no/such/server/index.js stdio` exited with code 1"),
        "{error}"
    );
    assert!(
        error.contains("Cannot find module") && error.contains("no/such/server/index.js"),
        "node's own words: {error}"
    );
    assert!(error.contains("is the server installed?"), "{error}");
}

fn a_program_that_does_not_exist_is_named() {
    // Found before anything starts, with the reaper or without.
    for reaper in [reaper(), None] {
        let error = start_error_with(
            "no-such-mcp-server",
            &["stdio"],
            Duration::from_secs(20),
            reaper,
        );
        assert!(
            error.contains("MCP server `broken` could not be started")
                && error.contains("`no-such-mcp-server` was not found on its PATH")
                && error.contains("is it installed?"),
            "{error}"
        );
    }
    let error = start_error(
        "sh",
        &["-c", "exec no-such-mcp-server"],
        Duration::from_secs(20),
    );
    assert!(
        error.contains("exited with code 127") && error.contains("no-such-mcp-server"),
        "{error}"
    );
    assert!(error.contains("is the server installed?"), "{error}");
}

fn a_server_that_closes_its_output_but_runs_on_is_stopped() {
    let started = Instant::now();
    let error = start_error(
        "sh",
        &[
            "-c",
            "exec >&-; echo 'no stdout for you' >&2; exec sleep 60",
        ],
        Duration::from_secs(20),
    );
    assert!(
        error.contains("did not initialize (") && error.contains("it was stopped"),
        "{error}"
    );
    assert_eq!(quoted(&error), ["no stdout for you"], "{error}");
    assert!(!error.contains("installed"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not waited for: {:?}",
        started.elapsed()
    );
}

fn a_chatty_server_never_blocks_and_only_the_end_of_its_stderr_is_shown() {
    // About 600 KiB on stderr, far more than a pipe holds, then an exit of its own.
    let script = "i=0; while [ $i -lt 20000 ]; do \
                  echo \"line $i: the quick brown fox jumps over the lazy dog\" >&2; \
                  i=$((i+1)); done; exit 5";
    let started = Instant::now();
    let error = start_error("sh", &["-c", script], Duration::from_secs(60));
    assert!(
        error.contains("exited with code 5 before initializing"),
        "the server was not blocked by its stderr: {error}"
    );
    let lines = quoted(&error);
    assert_eq!(lines.first(), Some(&"…"), "{error}");
    assert_eq!(
        lines.last(),
        Some(&"line 19999: the quick brown fox jumps over the lazy dog"),
        "{error}"
    );
    assert!(lines.len() <= 21, "{} lines: {error}", lines.len());
    assert!(error.len() < 5000, "{} bytes", error.len());
    assert!(started.elapsed() < Duration::from_secs(30));
}

fn a_chatty_server_that_never_answers_times_out_with_the_end_of_its_stderr() {
    let script = "i=0; while [ $i -lt 20000 ]; do echo \"noise $i\" >&2; i=$((i+1)); done; \
                  echo 'waiting for something' >&2; exec sleep 60";
    let started = Instant::now();
    let error = start_error("sh", &["-c", script], Duration::from_secs(3));
    assert!(
        error.contains("did not answer within 3 s of starting; it was stopped"),
        "{error}"
    );
    assert_eq!(
        quoted(&error).last(),
        Some(&"waiting for something"),
        "{error}"
    );
    assert!(quoted(&error).len() <= 21, "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

fn a_server_killed_by_a_signal_is_reported_so() {
    let error = start_error(
        "sh",
        &["-c", "echo 'going down' >&2; kill -TERM $$; exit 3"],
        Duration::from_secs(20),
    );
    // `SIGTERM` reaches it (the reaper blocks the signals it waits for, not the server), and
    // the reaper ends as the server did.
    assert!(
        error.contains("was killed by signal 15 before initializing"),
        "{error}"
    );
    assert_eq!(quoted(&error), ["going down"], "{error}");
}

/// Whether `pid` is alive and still runs `sleep 86397` (a zombie is dead; a pid taken by
/// another program is not the daemon).
fn daemon_alive(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    cmdline.starts_with(b"sleep\x0086397") && !zombie
}

fn a_daemon_of_a_server_is_gone_when_the_server_is() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    // The first fork is the subshell, the second `setsid`'s own background job; the daemon
    // writes its pid, then the server fails to start.
    let script = format!(
        "( setsid sh -c 'echo $$ > \"$1\"; exec sleep 86397' daemon '{}' \
         </dev/null >/dev/null 2>&1 & ); \
         while [ ! -s '{}' ]; do sleep 0.01; done; echo 'daemon started' >&2; exit 4",
        pidfile.display(),
        pidfile.display()
    );
    let error = start_error("sh", &["-c", &script], Duration::from_secs(20));
    assert!(error.contains("exited with code 4"), "{error}");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let start = Instant::now();
    while daemon_alive(pid) {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("the daemon {pid} outlived its server");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
