//! The harness of the MCP tests: a worker project on disk whose model is the mock server, the
//! Python `mcp` client (2.x, from PyPI) in a virtual environment, its scripts in `clients/`,
//! and `golem-forge mcp` run over stdio (started by the client) or streamable HTTP (started
//! here).
//!
//! The virtual environment is `target/mcp-venv` under the workspace root, or the Python
//! named by `GOLEM_FORGE_MCP_PYTHON`. Without it the tests fail, naming the command that
//! makes it (`scripts/test`, the README's test command, runs it). `GOLEM_FORGE_LOG` and `GOLEM_FORGE_LOG_FILE`, when set for
//! the tests, are passed on to the servers, to see their diagnostics.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use golem_testkit::Wire;
use golem_testkit::mock::{MockServer, Reply};
use serde_json::{Value, json};

use crate::common::{TestEnv, model_for, provider_env};

use golem_testkit::parts::{MCP_PYTHON_INSTALL as INSTALL, TEST_COMMAND};

/// The wire the mock model speaks in these tests (the front end does not depend on it).
pub const WIRE: Wire = Wire::OpenAi;

/// How long a client script may run before the test gives up on it.
const SCRIPT_LIMIT: Duration = Duration::from_secs(90);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the virtual environment with the `mcp` package 2.x, checked once.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = match std::env::var_os("GOLEM_FORGE_MCP_PYTHON") {
            Some(path) => PathBuf::from(path),
            None => workspace_root().join("target/mcp-venv/bin/python"),
        };
        let version = Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, mcp; print(m.version('mcp'))",
            ])
            .output();
        match version {
            Ok(out) if out.status.success() && out.stdout.starts_with(b"2.") => python,
            Ok(out) => panic!(
                "{} has no `mcp` package 2.x ({}{}).\nThe README's test command makes the \
                 virtual environment:\n    {TEST_COMMAND}\nor make just it from the workspace \
                 root with:\n    {INSTALL}\n(or point GOLEM_FORGE_MCP_PYTHON at a Python that \
                 has it)",
                python.display(),
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => panic!(
                "cannot run {} ({e}).\nThe README's test command makes the virtual \
                 environment:\n    {TEST_COMMAND}\nor make just it from the workspace root \
                 with:\n    {INSTALL}\n(or point GOLEM_FORGE_MCP_PYTHON at a Python that has \
                 `mcp` 2.x)",
                python.display()
            ),
        }
    })
}

/// The binary under test: this build's, or the one `GOLEM_FORGE_MCP_BIN` names (to measure a
/// release build with `measure.rs`).
pub fn binary() -> PathBuf {
    std::env::var_os("GOLEM_FORGE_MCP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_golem-forge")))
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

/// A worker file named `name` with `front_matter` (YAML lines, each ending in a newline).
pub fn worker(name: &str, description: &str, front_matter: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n{front_matter}---\nYou are the {name} \
         worker.\n"
    )
}

/// The worker `main`: a read-write zone `out` with `zone_approval` (an indented `approval:`
/// line, or nothing for `ask`) and the filesystem tools.
pub fn writer(zone_approval: &str) -> String {
    worker(
        "main",
        "Writes notes into its out zone",
        &format!(
            "sandbox:\n  zones:\n    - name: out\n      mode: rw\n{zone_approval}toolsets:\n  \
             filesystem: {{}}\n"
        ),
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

/// A worker project under `proj/` whose model is a mock server with scripted replies.
pub struct Project {
    /// The temporary home and working directory.
    pub env: TestEnv,
    /// The mock model.
    pub model: MockServer,
}

impl Project {
    /// Writes `workers` (file name, text) into `proj/` with a program config and an `out`
    /// zone, and starts the mock model with `replies`.
    pub fn new(workers: &[(&str, String)], replies: Vec<Reply>) -> Self {
        let env = TestEnv::new();
        env.write(
            "proj/golem-forge.config.yaml",
            "delegation:\n  max_depth: 5\n",
        );
        env.mkdir("proj/out");
        for (file, text) in workers {
            env.write(&format!("proj/{file}"), text);
        }
        Self {
            env,
            model: MockServer::start_blocking(replies),
        }
    }

    /// The server's environment: a clean one, with the mock model's provider.
    pub fn server_env(&self) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = provider_env(WIRE, &self.model)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        vars.push(("HOME".into(), self.env.path().display().to_string()));
        vars.push(("NO_COLOR".into(), "1".into()));
        vars.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
        // To see the server's diagnostics when a test fails.
        for name in ["GOLEM_FORGE_LOG", "GOLEM_FORGE_LOG_FILE"] {
            if let Ok(value) = std::env::var(name) {
                vars.push((name.into(), value));
            }
        }
        vars
    }

    /// `mcp WORKERS... --model M EXTRA...`, the worker files under `proj/`.
    pub fn server_args(&self, workers: &[&str], extra: &[&str]) -> Vec<String> {
        let mut args = vec!["mcp".to_owned()];
        args.extend(workers.iter().map(|w| format!("proj/{w}")));
        args.extend(["--model".to_owned(), model_for(WIRE).to_owned()]);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    }

    /// The text of `relative` under `proj/`.
    pub fn read(&self, relative: &str) -> Option<String> {
        self.env.read(&format!("proj/{relative}"))
    }

    /// The transcripts of the project's sessions.
    pub fn transcripts(&self) -> Vec<Vec<Value>> {
        self.env.transcripts("proj")
    }
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
        let mut args = project.server_args(workers, extra);
        args.extend(["--http".to_owned(), "127.0.0.1:0".to_owned()]);
        let mut child = Command::new(binary())
            .args(&args)
            .current_dir(project.env.path())
            .env_clear()
            .envs(project.server_env())
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
                .server_env()
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            json!({
                "transport": "stdio",
                "mode": protocol.mode(),
                "command": binary(),
                "args": project.server_args(workers, extra),
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
    run_script(&path, config, project)
}

/// Runs the Python script at `path` with `config` as its argument in `project`'s directory,
/// whatever becomes of it: its exit status, stdout and stderr (killed after [`SCRIPT_LIMIT`]).
pub fn run_script(path: &Path, config: Value, project: &Project) -> (ExitStatus, String, String) {
    let script = path.display();
    let mut child = Command::new(python())
        .arg("-B")
        .arg(path)
        .arg(config.to_string())
        .current_dir(project.env.path())
        .env_clear()
        .env("HOME", project.env.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut out = String::new();
        let mut err = String::new();
        let reader = std::thread::spawn(move || {
            let _ = stderr.read_to_string(&mut err);
            err
        });
        let _ = stdout.read_to_string(&mut out);
        let err = reader.join().unwrap_or_default();
        let status = child.wait();
        let _ = tx.send((status, out, err));
    });
    let Ok((status, out, err)) = rx.recv_timeout(SCRIPT_LIMIT) else {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("{script} did not finish within {SCRIPT_LIMIT:?}");
    };
    (status.unwrap(), out, err)
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
