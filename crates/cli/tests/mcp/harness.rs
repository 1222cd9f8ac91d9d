//! The harness of the MCP tests: the client scripts of `clients/` (run by the Python `mcp`
//! client, 2.x from PyPI, of `golem_testkit::cli::python`) against `golem-forge mcp` over
//! stdio (started by the client) or streamable HTTP (started here), for a worker project of
//! `golem_testkit::cli::Project` whose model is the mock server. `GOLEM_FORGE_LOG` and
//! `GOLEM_FORGE_LOG_FILE`, when set for the tests, are passed on to the servers, to see their
//! diagnostics.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use golem_testkit::Wire;
use golem_testkit::cli::python::run_script;
use golem_testkit::cli::{self, Project, fs_front_matter, model_for};
use serde_json::{Value, json};

/// The wire the mock model speaks in these tests (the front end does not depend on it).
pub const WIRE: Wire = Wire::OpenAi;

/// The binary under test: this build's, or the one `GOLEM_FORGE_MCP_BIN` names (to measure a
/// release build with `measure.rs`).
pub fn binary() -> PathBuf {
    std::env::var_os("GOLEM_FORGE_MCP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(cli::binary)
}

/// The transport a test speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The client starts the server and talks over its stdin and stdout.
    Stdio,
    /// The test starts the server with `--http`; the client sends the token.
    Http,
}

/// The protocol the client negotiates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The initialize handshake (2025-11-25): elicitation requests from the server.
    Handshake,
    /// The client's default, discovery (2026-07-28): elicitation in input-required results.
    Discovery,
}

impl Protocol {
    fn mode(self) -> &'static str {
        match self {
            Protocol::Handshake => "legacy",
            Protocol::Discovery => "auto",
        }
    }

    /// The version the client should end up with.
    pub fn version(self) -> &'static str {
        match self {
            Protocol::Handshake => "2025-11-25",
            Protocol::Discovery => "2026-07-28",
        }
    }
}

/// Every transport with every protocol.
pub const VARIANTS: [(Transport, Protocol); 4] = [
    (Transport::Stdio, Protocol::Handshake),
    (Transport::Stdio, Protocol::Discovery),
    (Transport::Http, Protocol::Handshake),
    (Transport::Http, Protocol::Discovery),
];

/// A worker file named `name` with `description` (its tool's) and `front_matter`.
pub use golem_testkit::cli::worker_described as worker;

/// The worker `main`: a read-write zone `out` with `zone_approval` (an indented `approval:`
/// line, or nothing for `ask`) and the filesystem tools.
pub fn writer(zone_approval: &str) -> String {
    worker(
        "main",
        "Writes notes into its out zone",
        &fs_front_matter(zone_approval),
    )
}

/// The worker `reader`: the `out` zone read-only, and the filesystem tools.
pub fn reader() -> String {
    worker(
        "reader",
        "Reads the notes",
        "sandbox:\n  zones:\n    - name: out\n      mode: ro\ntoolsets:\n  filesystem: {}\n",
    )
}

/// `mcp WORKERS... --model M EXTRA...`, the worker files under `proj/`.
pub fn server_args(workers: &[&str], extra: &[&str]) -> Vec<String> {
    let mut args = vec!["mcp".to_owned()];
    args.extend(workers.iter().map(|w| format!("{}/{w}", cli::PROJECT)));
    args.extend(["--model".to_owned(), model_for(WIRE).to_owned()]);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// A `golem-forge mcp --http` server, stopped (SIGINT) and waited for when dropped.
pub struct HttpServer {
    child: Option<Child>,
    stderr: Option<ChildStderr>,
    /// The endpoint.
    pub url: String,
    /// The token it printed.
    pub token: String,
}

impl HttpServer {
    /// Starts the server for `workers` of `project` on a free port of 127.0.0.1 and reads the
    /// endpoint and token from the first line of its stdout.
    pub fn start(project: &Project, workers: &[&str], extra: &[&str]) -> Self {
        let mut args = server_args(workers, extra);
        args.extend(["--http".to_owned(), "127.0.0.1:0".to_owned()]);
        let mut child = Command::new(binary())
            .args(&args)
            .current_dir(project.env.path())
            .env_clear()
            .envs(project.server_env(WIRE))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("golem-forge mcp --http printed no address within 30 s");
            }
        };
        let mut fields = line.split_whitespace();
        let (Some(url), Some(token), None) = (fields.next(), fields.next(), fields.next()) else {
            let _ = child.kill();
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the first line on stdout is not `URL TOKEN`: {line:?}\n{err}");
        };
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        assert_eq!(token.len(), 32, "a 128-bit token as hex: {token}");
        Self {
            url: url.to_owned(),
            token: token.to_owned(),
            stderr: child.stderr.take(),
            child: Some(child),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or_default()
    }

    /// Stops the server with SIGINT; returns its exit code and stderr.
    pub fn stop(mut self) -> (Option<i32>, String) {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> (Option<i32>, String) {
        let Some(mut child) = self.child.take() else {
            return (None, String::new());
        };
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("golem-forge mcp --http did not stop within 30 s of SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = self.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        (code, stderr)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop_inner();
        }
    }
}

/// How a client script reaches the server: over stdio it starts `golem-forge mcp` for
/// `workers` with `extra` options; over HTTP it uses `server`.
pub fn connection(
    project: &Project,
    transport: Transport,
    protocol: Protocol,
    workers: &[&str],
    extra: &[&str],
    server: Option<&HttpServer>,
) -> Value {
    match transport {
        Transport::Stdio => {
            let env: serde_json::Map<String, Value> = project
                .server_env(WIRE)
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            json!({
                "transport": "stdio",
                "mode": protocol.mode(),
                "command": binary(),
                "args": server_args(workers, extra),
                "cwd": project.env.path(),
                "env": env,
            })
        }
        Transport::Http => {
            let server = server.expect("an HTTP test starts its server");
            json!({
                "transport": "http",
                "mode": protocol.mode(),
                "url": server.url,
                "token": server.token,
                "server_pid": server.pid(),
            })
        }
    }
}

/// What a client script printed, and its stderr (the stdio server's too).
#[allow(missing_docs)] // fields are named for what they hold
pub struct ScriptRun {
    pub report: Value,
    /// stderr.
    pub stderr: String,
}

/// Runs the client script `script` of `clients/` with `config` (the connection, with the
/// script's own fields added); fails the test with its stderr when it fails.
pub fn run_client(script: &str, config: Value, project: &Project) -> ScriptRun {
    let (status, out, err) = run_client_unchecked(script, config, project);
    assert!(
        status.success(),
        "{script} failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    let report = out
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("{script} printed no report:\n{out}\n--- stderr\n{err}"));
    ScriptRun {
        report,
        stderr: err,
    }
}

/// Runs the client script `script` like [`run_client`], whatever becomes of it: its exit
/// status, stdout and stderr.
pub fn run_client_unchecked(
    script: &str,
    config: Value,
    project: &Project,
) -> (ExitStatus, String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/clients")
        .join(script);
    run_script(&path, &config, &project.env)
}

/// `base` with the fields of `more` added.
pub fn with(mut base: Value, more: Value) -> Value {
    if let (Some(base), Value::Object(more)) = (base.as_object_mut(), more) {
        base.extend(more);
    }
    base
}

/// The text of a call result's content.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}
