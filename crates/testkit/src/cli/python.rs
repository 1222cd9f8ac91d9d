//! The Python of the protocol tests' clients: the virtual environment `target/mcp-venv` (or
//! the Python `GOLEM_FORGE_MCP_PYTHON` names) with the `mcp` package 2.x, which `scripts/test`
//! makes, and a runner of one client script in a test's temporary home. Without the
//! environment a test fails, naming the command that makes it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::env::{TestEnv, repo_root};
use super::output::signal;
use crate::parts::{MCP_PYTHON_INSTALL as INSTALL, TEST_COMMAND};

/// How long a client script may run before the test gives up on it.
const SCRIPT_LIMIT: Duration = Duration::from_secs(90);

/// The Python of the virtual environment with the `mcp` package 2.x, checked once.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = match std::env::var_os("GOLEM_FORGE_MCP_PYTHON") {
            Some(path) => PathBuf::from(path),
            None => repo_root().join("target/mcp-venv/bin/python"),
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

/// Runs the Python script at `path` with `config` (as JSON) as its argument, in `env`'s
/// directory with a clean environment, whatever becomes of it: its exit status, stdout and
/// stderr (killed after [`SCRIPT_LIMIT`]).
pub fn run_script(path: &Path, config: &Value, env: &TestEnv) -> (ExitStatus, String, String) {
    let script = path.display();
    let mut child = Command::new(python())
        .arg("-B")
        .arg(path)
        .arg(config.to_string())
        .current_dir(env.path())
        .env_clear()
        .env("HOME", env.path())
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
        signal(pid, "KILL");
        panic!("{script} did not finish within {SCRIPT_LIMIT:?}");
    };
    (status.unwrap(), out, err)
}
