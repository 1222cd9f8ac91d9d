//! Architecture rules that CI enforces: every Rust file opens with a `//!` header, crate
//! dependencies point only downwards (DESIGN.md §2), and test-support crates are only ever
//! dev-dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("target") && !path.ends_with("snapshots") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_header() {
    let mut files = Vec::new();
    rust_files(&workspace_root().join("crates"), &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header: {missing:#?}"
    );
}

/// The layer of each crate: a crate may depend only on crates of lower layers.
fn layers() -> BTreeMap<&'static str, u32> {
    BTreeMap::from([
        ("golem-protocol", 0),
        ("golem-core", 1),
        ("golem-llm", 2),
        ("golem-sandbox", 2),
        ("golem-tools", 3),
        ("golem-runtime", 4),
        ("golem-web", 5),
        // The MCP front end shares the web front end's address rules (`BoundAddress`) and its
        // accept loop (`listen`).
        ("golem-mcp", 6),
        ("golem-forge", 7),
    ])
}

/// Crates that only tests may use: allowed as dev-dependencies, never as normal ones.
const TEST_ONLY: &[&str] = &["golem-testkit"];

/// The workspace's packages as `cargo metadata` sees them.
fn workspace_packages() -> Vec<serde_json::Value> {
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
fn dependencies_of_kind(kind: Option<&str>) -> BTreeMap<String, BTreeSet<String>> {
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

fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
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
                "{krate} must not depend on {dep} (DESIGN.md §2: protocol ← core ← {{llm, sandbox}} ← tools ← runtime ← web ← mcp ← cli)"
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

/// Crates that draw on a terminal or serve a socket: only the front ends may use them.
const FRONT_END_ONLY: &[&str] = &[
    "crossterm",
    "reedline",
    "portable-pty",
    "vt100",
    "axum",
    "tokio-tungstenite",
    "tungstenite",
];

/// The crates that are front ends.
const FRONT_ENDS: &[&str] = &["golem-forge", "golem-web", "golem-mcp"];

/// Each library source file below `crates/*/src` of a crate that is not a front end or test
/// support, with the text before its `#[cfg(test)]` part.
fn library_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in ["protocol", "core", "llm", "sandbox", "tools", "runtime"] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 20, "found only {} files", files.len());
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = match text.find("\n#[cfg(test)]") {
                Some(at) => text[..at].to_owned(),
                None => text,
            };
            let name = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, code)
        })
        .collect()
}

#[test]
fn only_the_front_ends_touch_a_terminal_or_a_users_socket() {
    for (krate, deps) in workspace_dependencies() {
        if FRONT_ENDS.contains(&krate.as_str()) || TEST_ONLY.contains(&krate.as_str()) {
            continue;
        }
        for dep in FRONT_END_ONLY {
            assert!(
                !deps.contains(*dep),
                "{krate} depends on {dep}: only the front ends ({FRONT_ENDS:?}) draw on a \
                 terminal or serve a socket; libraries speak the protocol"
            );
        }
    }
    // The jail's helper is a process of its own whose stdio are pipes to its parent, not a
    // terminal: it reads `go`, and reports on stdout/stderr. So is its reaper mode, whose stderr
    // is the stderr of the program it runs (an MCP server's, read into its start error).
    let helper_process = |name: &str| {
        name.starts_with("crates/sandbox/src/jail/")
            || name.starts_with("crates/sandbox/src/bin/")
            || name == "crates/sandbox/src/reaper.rs"
    };
    let terminal_words = [
        "println!",
        "print!(",
        "io::stdout(",
        "io::stdin(",
        "is_terminal",
        "TcpListener",
        "UnixListener",
    ];
    let mut offenders = Vec::new();
    for (name, code) in library_sources() {
        if helper_process(&name) {
            continue;
        }
        for word in terminal_words {
            if code.contains(word) {
                offenders.push(format!("{name}: {word}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "libraries must not write to a terminal or listen on a socket (emit protocol events \
         instead): {offenders:#?}"
    );
}

#[test]
fn nothing_but_the_orchestrator_calls_tool_execute() {
    // The orchestrator is the one path of a tool call (gate, events, outcome); a decorated
    // tool passes `execute` on to the tool it wraps.
    let allowed = [
        "crates/core/src/orchestrator.rs",
        "crates/core/src/decorated.rs",
    ];
    let callers: Vec<String> = library_sources()
        .into_iter()
        .filter(|(name, code)| !allowed.contains(&name.as_str()) && code.contains(".execute("))
        .map(|(name, _)| name)
        .collect();
    assert!(
        callers.is_empty(),
        "only the orchestrator may call Tool::execute: {callers:#?}"
    );
}
