//! A worker program on disk for tests that open a session against the mock model: a
//! temporary directory with a program config naming the `mock` provider (OpenAI chat wire, no
//! key) at the mock server, an `out` zone and `main.worker` with the filesystem tools; and
//! additions to a program's config.

use std::path::{Path, PathBuf};

use crate::mock::MockServer;

/// Writes the program; `zone_approval` is inserted under the `out` zone (e.g.
/// `"      approval: { create: ask }\n"`, or `""`). Returns the directory (keep it alive) and
/// the worker file.
pub fn mock_program(server: &MockServer, zone_approval: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("golem-forge.config.yaml"),
        format!(
            "providers:\n  mock:\n    base_url: {}/v1\n",
            server.base_url
        ),
    )
    .unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    let worker = root.join("main.worker");
    std::fs::write(
        &worker,
        format!(
            "---\nname: main\ndescription: the main worker\nmodel: mock:m1\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n{zone_approval}toolsets:\n  filesystem: {{}}\n---\nYou are the main worker.\n"
        ),
    )
    .unwrap();
    (dir, worker)
}

/// Appends `text` to the program config (`golem-forge.config.yaml`) of the program at `root`.
pub fn append_config(root: &Path, text: &str) {
    let config = root.join("golem-forge.config.yaml");
    let mut current = std::fs::read_to_string(&config).unwrap();
    current.push_str(text);
    std::fs::write(&config, current).unwrap();
}
