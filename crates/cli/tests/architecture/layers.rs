//! The crate graph: each crate's layer, dependencies pointing only downwards, the protocol
//! crate data only, the model clients apart from the tool core, test support only ever a
//! dev-dependency (ARCHITECTURE.md, Invariants).

use std::collections::{BTreeMap, BTreeSet};

use super::workspace_root;

/// The layer of each crate: a crate may depend only on crates of lower layers.
fn layers() -> BTreeMap<&'static str, u32> {
    BTreeMap::from([
        ("golem-protocol", 0),
        // What a call requires and the globs rules are written in, below the gate and the sandbox.
        ("golem-policy", 0),
        ("golem-core", 1),
        ("golem-sandbox", 1),
        ("golem-llm", 2),
        // Traces: display events as OpenTelemetry spans, and their export; below the runtime,
        // which feeds it, and the batch and queue crates, which make batch spans.
        ("golem-telemetry", 2),
        // Session transcripts: what a run recorded, read by every command that shows it.
        ("golem-session", 3),
        // What a toolset is (the trait, its build context, the jail settings they share).
        ("golem-toolset", 3),
        ("golem-tools", 4),
        ("golem-web-tools", 4),
        ("golem-mcp-client", 4),
        ("golem-runtime", 5),
        // Who may connect and the accept loop, shared by both HTTP front ends.
        ("golem-http", 5),
        ("golem-web", 6),
        ("golem-mcp-server", 6),
        // Batches: many sessions of one worker, their state on disk.
        ("golem-batch", 6),
        // `golem-forge acp`: sessions driven by an editor over the Agent Client Protocol.
        ("golem-acp", 6),
        // `golem-forge test`: a worker's test cases run as scratch sessions and checked.
        ("golem-worker-tests", 6),
        // Batches on a Redis queue: consumers anywhere, built on the batch runner.
        ("golem-queue", 7),
        ("golem-forge", 8),
    ])
}

/// Crates that only tests may use: allowed as dev-dependencies, never as normal ones.
pub(super) const TEST_ONLY: &[&str] = &["golem-testkit"];

/// The workspace's packages as `cargo metadata` sees them.
pub(super) fn workspace_packages() -> Vec<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"].as_array().unwrap().clone()
}

/// Each crate's dependencies of `kind` (`None` for normal ones, else "dev" or "build").
pub(super) fn dependencies_of_kind(kind: Option<&str>) -> BTreeMap<String, BTreeSet<String>> {
    let mut deps = BTreeMap::new();
    for package in &workspace_packages() {
        let name = package["name"].as_str().unwrap().to_owned();
        let of_kind: BTreeSet<String> = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].as_str() == kind)
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        deps.insert(name, of_kind);
    }
    deps
}

pub(super) fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    dependencies_of_kind(None)
}

#[test]
fn crate_dependencies_point_downwards() {
    let layers = layers();
    let deps = workspace_dependencies();
    let names: BTreeSet<_> = deps.keys().cloned().collect();
    let expected: BTreeSet<_> = layers
        .keys()
        .chain(TEST_ONLY)
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        names, expected,
        "a crate was added or removed: update this test and ARCHITECTURE.md"
    );
    for (krate, krate_deps) in &deps {
        for dep in krate_deps
            .iter()
            .filter(|d| layers.contains_key(d.as_str()))
        {
            assert!(
                layers[dep.as_str()] < layers[krate.as_str()],
                "{krate} must not depend on {dep} (ARCHITECTURE.md, Invariants: the layers of `layers()`)"
            );
        }
    }
}

#[test]
fn the_model_clients_do_not_know_the_tool_core() {
    // Tool definitions and text helpers live in golem-protocol; the runtime turns a model's
    // tool call into the orchestrator's.
    let deps = workspace_dependencies();
    assert!(
        !deps["golem-llm"].contains("golem-core"),
        "golem-llm must not depend on golem-core: {:?}",
        deps["golem-llm"]
    );
}

#[test]
fn the_protocol_crate_is_data_only() {
    let deps = workspace_dependencies();
    let protocol = &deps["golem-protocol"];
    let allowed: BTreeSet<String> = ["serde", "serde_json", "schemars"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        protocol.is_subset(&allowed),
        "golem-protocol may use only {allowed:?}, has {protocol:?}"
    );
}

#[test]
fn test_support_crates_are_only_dev_dependencies() {
    let normal = workspace_dependencies();
    let build = dependencies_of_kind(Some("build"));
    for (krate, deps) in normal.iter().chain(&build) {
        for test_only in TEST_ONLY {
            assert!(
                !deps.contains(*test_only),
                "{krate} depends on {test_only}, which is for tests only: move it to [dev-dependencies]"
            );
        }
    }
    let dev = dependencies_of_kind(Some("dev"));
    assert!(
        dev["golem-llm"].contains("golem-testkit") && dev["golem-forge"].contains("golem-testkit"),
        "the provider and end-to-end tests use the shared mock server: {dev:?}"
    );
    for test_only in TEST_ONLY {
        let own: Vec<_> = normal[*test_only]
            .iter()
            .filter(|d| d.starts_with("golem-"))
            .collect();
        assert!(
            own.is_empty(),
            "{test_only} must not depend on product crates (it would hide their layering): {own:?}"
        );
    }
}
