//! The fixtures of the browser tests: the worker `scribe`, its project, and the wire the mock
//! model speaks.

use golem_testkit::Wire;
use serde_json::{Value, json};

use golem_testkit::cli::{self, PROJECT, TestEnv, WRITES_ASK, fs_front_matter};

/// The wire every browser test speaks to the mock model.
pub const WIRE: Wire = Wire::OpenAi;

/// The worker of the fixtures.
pub const WORKER: &str = "scribe";

/// The worker `scribe` with `front_matter` (YAML lines, each ending in a newline).
pub fn worker(front_matter: &str) -> String {
    cli::worker(WORKER, front_matter)
}

/// `scribe` with one read-write zone `out` whose writes ask, and the filesystem tools (whose
/// read-only tools the user may run by hand).
pub fn fs_worker() -> String {
    worker(&fs_front_matter(WRITES_ASK))
}

/// Writes the project `proj/` (a program config, the zone directory `out`, `scribe.worker` with
/// `worker_text`); returns the worker file's path relative to the test's directory.
pub fn project(env: &TestEnv, worker_text: &str) -> String {
    let file = format!("{WORKER}.worker");
    env.project(&[(&file, worker_text)]);
    format!("{PROJECT}/{file}")
}

/// The arguments of a `write_file` call.
pub fn write_args(path: &str, content: &str) -> Value {
    json!({"path": path, "content": content})
}
