//! A test environment: runs the built binary with a clean, temporary home and no provider keys,
//! and renders what the user sees (stdout, stderr, exit status) for snapshots.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;

/// A temporary home and working directory for one test.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The binary, run in the temp dir with a clean environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::cargo_bin("golem-forge").expect("binary built");
        cmd.current_dir(self.path())
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1");
        cmd
    }

    /// Runs with `args` and renders the output as the user sees it.
    pub fn run(&self, args: &[&str]) -> String {
        render(&self.command().args(args).output().expect("binary runs"))
    }
}

/// stdout, stderr and the exit status, as one text for snapshots.
pub fn render(output: &Output) -> String {
    let mut text = String::new();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stdout.is_empty() {
        text.push_str(&stdout);
        if !stdout.ends_with('\n') {
            text.push('\n');
        }
    }
    if !stderr.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&stderr);
        if !stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    match output.status.code() {
        Some(code) => text.push_str(&format!("[exit status: {code}]\n")),
        None => text.push_str("[killed by a signal]\n"),
    }
    text
}
