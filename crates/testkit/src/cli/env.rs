//! The binary in a temporary home: [`TestEnv`] runs it with a clean environment (`HOME` there,
//! no provider keys, no colours, nothing of the caller's but `PATH`), writes and reads files
//! there, and [`render`] turns what it printed into one text for snapshots. Also the files of
//! this repository ([`repo_root`], [`repo_file`]) and the variables that point the binary's
//! provider clients at a mock model ([`provider_env`]).

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

use crate::Wire;
use crate::mock::MockServer;

/// The name of the binary under test.
const BINARY: &str = "golem-forge";

/// The `golem-forge` binary cargo built for the tests: the path cargo gives a test or bench
/// in `CARGO_BIN_EXE_golem-forge` when it runs one, else the binary beside the directory of
/// the running test program (`target/<profile>/deps/…` → `target/<profile>/golem-forge`).
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os(format!("CARGO_BIN_EXE_{BINARY}")) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test program's path");
    let beside = exe
        .parent()
        .and_then(Path::parent)
        .map(|profile| profile.join(BINARY))
        .filter(|path| path.is_file());
    beside.unwrap_or_else(|| {
        panic!(
            "no {BINARY} binary: CARGO_BIN_EXE_{BINARY} is not set and none is beside {} (run \
             the tests with `cargo test -p {BINARY}`)",
            exe.display()
        )
    })
}

/// The root of this repository (the workspace).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of the repository's file at `path` (relative to its root).
pub fn repo_file(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A temporary home and working directory for one test.
pub struct TestEnv {
    /// The directory; removed when the environment drops.
    pub dir: tempfile::TempDir,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// A fresh, empty temporary directory.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The temporary directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The binary, run in the temp dir with a clean environment.
    pub fn command(&self) -> Command {
        Command::from_std(self.std_command())
    }

    /// [`TestEnv::command`] as a plain `std::process::Command`, for tests that spawn the binary
    /// and signal it while it runs.
    pub fn std_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(binary());
        cmd.current_dir(self.path())
            .env_clear()
            .envs(self.clean_env());
        cmd
    }

    /// The whole environment the binary gets: `HOME` is the temp dir, `PATH` the caller's,
    /// `NO_COLOR` set; nothing else.
    pub fn clean_env(&self) -> [(&'static str, String); 3] {
        [
            ("HOME", self.path().display().to_string()),
            (
                "PATH",
                std::env::var_os("PATH")
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
            ),
            ("NO_COLOR", "1".to_owned()),
        ]
    }

    /// Writes `text` to `relative` under the temp dir (creating its parents); returns the path.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write fixture");
        path
    }

    /// Creates the directory `relative` under the temp dir (and its parents).
    pub fn mkdir(&self, relative: &str) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(&path).expect("mkdir");
        path
    }

    /// The text of `relative` under the temp dir, if it exists.
    pub fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.path().join(relative)).ok()
    }

    /// The session transcripts under `root/.golem-forge/sessions/`, each as its JSON lines.
    pub fn transcripts(&self, root: &str) -> Vec<Vec<serde_json::Value>> {
        let dir = self.path().join(root).join(".golem-forge/sessions");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).collect();
        files.sort();
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
            .map(|f| {
                std::fs::read_to_string(f)
                    .expect("transcript readable")
                    .lines()
                    .map(|line| {
                        serde_json::from_str(line).unwrap_or_else(|e| {
                            panic!("{}: not a JSON line ({e}): {line}", f.display())
                        })
                    })
                    .collect()
            })
            .collect()
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

/// The model name that makes the binary speak `wire` (to the server of [`provider_env`]).
pub fn model_for(wire: Wire) -> &'static str {
    wire.model()
}

/// The environment variable holding the API key of `wire`'s provider.
pub fn api_key_env(wire: Wire) -> &'static str {
    wire.api_key_env()
}

/// The API key and base URL variables that point `wire`'s provider client at `server`
/// (docs/models.md: the Anthropic base URL without `/v1`, the OpenAI one with it).
pub fn provider_env(wire: Wire, server: &MockServer) -> [(&'static str, String); 2] {
    wire.provider_env(&server.base_url)
}
