//! MCP servers that do not start, outside the jail: building the toolset lists each server's
//! tools, so a server that exits, closes its output or stays silent before it initializes
//! fails the build with an error naming the server, its command, how it ended and the last
//! lines of its stderr (bounded, however much it wrote, and read all along so that a chatty
//! server never blocks), and asking whether it is installed when something was not found.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use golem_tools::mcp::{McpOptions, McpServerOptions, McpTransportOptions, mcp_tools};

/// The error of building a toolset with the one server `broken`, started as `command` with
/// `args` in a temporary directory, bounded by `timeout`.
fn start_error(command: &str, args: &[&str], timeout: Duration) -> String {
    let cwd = tempfile::tempdir().unwrap();
    let env = BTreeMap::from([("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned())]);
    let options = McpOptions {
        servers: vec![McpServerOptions {
            name: "broken".to_owned(),
            transport: McpTransportOptions::Stdio {
                command: command.to_owned(),
                args: args.iter().map(|&a| a.to_owned()).collect(),
                env,
                cwd: cwd.path().to_path_buf(),
            },
        }],
        timeout,
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

#[test]
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

#[test]
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

#[test]
fn a_program_that_does_not_exist_is_named() {
    let error = start_error("no-such-mcp-server", &["stdio"], Duration::from_secs(20));
    assert!(
        error.contains("MCP server `broken` could not be started")
            && error.contains("`no-such-mcp-server` was not found on its PATH")
            && error.contains("is it installed?"),
        "{error}"
    );
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

#[test]
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

#[test]
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

#[test]
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
