//! The fixtures of the browser tests: the worker `scribe`, its project, and the wire the mock
//! model speaks.

use golem_testkit::Wire;
use serde_json::{Value, json};

use crate::common::TestEnv;

/// The wire every browser test speaks to the mock model.
pub const WIRE: Wire = Wire::OpenAi;

/// The worker of the fixtures.
pub const WORKER: &str = "scribe";

/// The worker `scribe` with `front_matter` (YAML lines, each ending in a newline).
pub fn worker(front_matter: &str) -> String {
    format!(
        "---\nname: {WORKER}\ndescription: the {WORKER} worker\n{front_matter}---\nYou are the {WORKER} worker.\n"
    )
}

/// `scribe` with one read-write zone `out` whose writes ask, and the filesystem tools (whose
/// read-only tools the user may run by hand).
pub fn fs_worker() -> String {
    worker(
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { write: ask }\ntoolsets:\n  filesystem: {}\n",
    )
}

/// Writes the project `proj/` (a program config, the zone directory `out`, `scribe.worker` with
/// `worker_text`); returns the worker file's path relative to the test's directory.
pub fn project(env: &TestEnv, worker_text: &str) -> String {
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 5\n",
    );
    env.mkdir("proj/out");
    let path = format!("proj/{WORKER}.worker");
    env.write(&path, worker_text);
    path
}

/// The arguments of a `write_file` call.
pub fn write_args(path: &str, content: &str) -> Value {
    json!({"path": path, "content": content})
}
