//! Architecture rules that CI enforces: every Rust file opens with a `//!` header, crate
//! dependencies point only downwards (ARCHITECTURE.md, Invariants), and test-support crates are
//! only ever dev-dependencies.

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
        // What a toolset is (the trait, its build context, the jail settings they share).
        ("golem-toolset", 3),
        ("golem-tools", 4),
        ("golem-web-tools", 4),
        ("golem-runtime", 5),
        // Who may connect and the accept loop, shared by both HTTP front ends.
        ("golem-http", 5),
        ("golem-web", 6),
        ("golem-mcp", 6),
        ("golem-forge", 8),
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
                "{krate} must not depend on {dep} (ARCHITECTURE.md, Invariants: protocol ← core ← {{llm, sandbox}} ← tools ← runtime ← web ← mcp ← cli)"
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

/// The crates that are front ends, and the part both HTTP front ends share (`golem-http`).
const FRONT_ENDS: &[&str] = &["golem-forge", "golem-web", "golem-mcp", "golem-http"];

/// Each library source file below `crates/*/src` of a crate that is not a front end or test
/// support, with the text before its `#[cfg(test)]` part.
fn library_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in [
        "protocol", "core", "llm", "sandbox", "toolset", "tools", "runtime",
    ] {
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

/// The map and the contracts: ARCHITECTURE.md and every Markdown file under `docs/`.
fn documentation_files() -> Vec<PathBuf> {
    fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                markdown(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = workspace_root();
    let mut files = vec![root.join("ARCHITECTURE.md")];
    markdown(&root.join("docs"), &mut files);
    files.sort();
    files
}

/// Where a repository path may start: the top-level directories a document points into, and
/// `../`, which leads out of the repository and so is never a path that exists in it.
const PATH_ROOTS: &[&str] = &["crates/", "docs/", "scripts/", "examples/", ".ci/", "../"];

/// The repository paths `text` names: backticked tokens under one of [`PATH_ROOTS`] or naming a
/// top-level Markdown file (`README.md`), and the targets of relative Markdown links. Tokens
/// that stand for many paths (`crates/*/src`, `<name>`, `{a,b}`, `…`) and fenced code blocks
/// (examples, not references) are left out.
fn named_paths(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let mut paths = Vec::new();
    for (index, token) in prose.split('`').enumerate() {
        if index % 2 == 0 {
            continue;
        }
        let token = token.trim();
        let looks_like_path = PATH_ROOTS.iter().any(|root| token.starts_with(root))
            || (!token.contains('/') && token.ends_with(".md"));
        let pattern = token.contains(['*', '<', '>', '{', '}', ' ', '…', '|', '$']);
        if looks_like_path && !pattern {
            paths.push(token.to_owned());
        }
    }
    for piece in prose.split("](").skip(1) {
        let Some(target) = piece.split(')').next() else {
            continue;
        };
        let target = target.split('#').next().unwrap_or("").trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            paths.push(target.to_owned());
        }
    }
    paths
}

/// `base` joined with `path`, with `.` and `..` resolved lexically; `None` when the result
/// leaves `root`.
fn inside(root: &Path, base: &Path, path: &str) -> Option<PathBuf> {
    use std::path::Component;
    let mut joined = base.to_path_buf();
    for component in Path::new(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !joined.pop() {
                    return None;
                }
            }
            Component::Normal(part) => joined.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    joined.starts_with(root).then_some(joined)
}

#[test]
fn every_path_the_documentation_names_exists() {
    let root = workspace_root();
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in documentation_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        let dir = file.parent().unwrap();
        for path in named_paths(&text) {
            checked += 1;
            // Backticked paths are from the repository root; a link is from its own file.
            // Either way the path must stay inside the repository.
            let exists = |base: &Path| inside(&root, base, &path).is_some_and(|p| p.exists());
            if !exists(&root) && !exists(dir) {
                missing.push(format!("{shown}: {path}"));
            }
        }
    }
    assert!(
        checked > 50,
        "found only {checked} paths in the documentation"
    );
    assert!(
        missing.is_empty(),
        "paths named in the documentation that do not exist (paths are relative to the \
         repository root): {missing:#?}"
    );
}

#[test]
fn the_architecture_map_stays_a_map() {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() <= 300,
        "ARCHITECTURE.md has {} lines; it is a map of at most 300: move details into docs/ \
         or docs/decisions/",
        lines.len()
    );
    let long: Vec<String> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.chars().count() > 200)
        .map(|(at, line)| format!("line {}: {} characters", at + 1, line.chars().count()))
        .collect();
    assert!(
        long.is_empty(),
        "ARCHITECTURE.md lines over 200 characters: {long:#?}"
    );
}

/// Every text file below `dir`, skipping build output.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("target") && !path.ends_with("node_modules") {
                text_files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn nothing_points_outside_the_repository() {
    // Built from pieces, so that this file does not name what it looks for.
    let needles = [
        ["DESIGN", ".md"].concat(),
        ["..", "/shared"].concat(),
        ["seed", " 00"].concat(),
    ];
    let root = workspace_root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in ["crates", "docs", "scripts"] {
        text_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut offenders = Vec::new();
    for file in &files {
        // Binary files (images, fonts) are not read as text.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let lower = text.to_lowercase();
        for needle in &needles {
            if lower.contains(&needle.to_lowercase()) {
                let shown = file.strip_prefix(&root).unwrap().display().to_string();
                offenders.push(format!("{shown}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "files that point outside the repository (write the contract in docs/ and point \
         there): {offenders:#?}"
    );
}
