//! Architecture rules that CI enforces: every Rust file opens with a `//!` header, crate
//! dependencies point only downwards (ARCHITECTURE.md, Invariants), test-support crates are
//! only ever dev-dependencies, and no file of the subcommands, the protocol or the core is on an
//! import cycle.

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
        ("golem-mcp-client", 4),
        ("golem-runtime", 5),
        // Who may connect and the accept loop, shared by both HTTP front ends.
        ("golem-http", 5),
        ("golem-web", 6),
        ("golem-mcp-server", 6),
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
                "{krate} must not depend on {dep} (ARCHITECTURE.md, Invariants: protocol ← core ← {{llm, sandbox}} ← toolset ← tools ← runtime ← {{web, mcp-server}} ← cli)"
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
const FRONT_ENDS: &[&str] = &["golem-forge", "golem-web", "golem-mcp-server", "golem-http"];

/// Each library source file below `crates/*/src` of a crate that is not a front end or test
/// support, with the text before its `#[cfg(test)]` part.
fn library_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in [
        "protocol",
        "core",
        "llm",
        "sandbox",
        "toolset",
        "tools",
        "mcp-client",
        "runtime",
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

/// The source trees none of whose files may be on an import cycle, each with its crate's `src`
/// (a cycle may pass through other files of the crate).
const ACYCLIC_TREES: &[(&str, &str)] = &[
    ("crates/cli/src", "crates/cli/src/commands/"),
    ("crates/protocol/src", "crates/protocol/src/"),
    ("crates/core/src", "crates/core/src/"),
];

#[test]
fn no_import_cycle_runs_through_the_commands_the_protocol_or_the_core() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    for (src, tree) in ACYCLIC_TREES {
        let graph = import_graph(&root.join(src));
        assert!(
            graph.values().map(BTreeSet::len).sum::<usize>() > 10,
            "found almost no imports in {src}: {graph:#?}"
        );
        let shown = |file: &PathBuf| file.strip_prefix(&root).unwrap().display().to_string();
        for cycle in cycles_through(&graph, &root.join(tree)) {
            let names: Vec<String> = cycle.iter().map(shown).collect();
            cycles.push(names.join(" → "));
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other, directly or through others (move what both need into \
         one of them, or into a third file): {cycles:#?}"
    );
}

#[test]
fn the_import_scan_follows_uses_and_paths_but_not_comments_or_strings() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "//! Root.\nmod a;\nmod b;\nmod c;\nmod d;\n");
    write(
        "a.rs",
        "//! See [`x`](crate::d::X).\nuse crate::{b::{self, Thing as Other}, c::*};\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    write(
        "b/mod.rs",
        "//! B.\nmod inner;\nconst S: &str = \"crate::d::X\";\nconst C: char = '\"';\n\
         fn f<'a>(x: &'a str) -> &'a str { x }\n",
    );
    write(
        "b/inner.rs",
        "//! Inner.\npub fn g() { super::super::a::h(); }\n",
    );
    write("c.rs", "//! C.\n/* crate::d::X /* nested */ */\n");
    write("d.rs", "//! D.\n#[path = \"d_tests.rs\"]\nmod tests;\n");
    write("d_tests.rs", "//! D's tests.\nuse super::*;\n");
    let graph = import_graph(src);
    let edges = |file: &str| -> Vec<String> {
        graph[&src.join(file)]
            .iter()
            .map(|to| to.strip_prefix(src).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(edges("a.rs"), ["b/mod.rs", "c.rs"]);
    assert!(edges("b/mod.rs").is_empty());
    assert_eq!(edges("b/inner.rs"), ["a.rs"]);
    assert!(edges("c.rs").is_empty());
    assert!(edges("d_tests.rs").contains(&"d.rs".to_owned()));
    assert!(cycles_through(&graph, src).is_empty());
    write("c.rs", "//! C.\nfn k() { crate::b::inner::g() }\n");
    let graph = import_graph(src);
    let cycles = cycles_through(&graph, &src.join("b"));
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let names: Vec<String> = cycles[0]
        .iter()
        .map(|file| file.strip_prefix(src).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["b/inner.rs", "a.rs", "c.rs", "b/inner.rs"]);
}

/// Each source file of the crate whose sources are in `src` (its library: no `main.rs`, no
/// `bin/`), and the files it imports: the modules its `crate::`, `super::` and `self::` paths
/// name (in `use` declarations or in code; comments and strings do not count), resolved to the
/// file that holds the module (`a/b.rs` or `a/b/mod.rs`, or a `#[path]`) or, for an item, its
/// module's file. A module's own `mod` declarations are not imports.
fn import_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|file| file != &src.join("main.rs") && !file.starts_with(src.join("bin")));
    let mut modules: BTreeMap<PathBuf, Vec<String>> = files
        .iter()
        .map(|file| (file.clone(), module_path(src, file)))
        .collect();
    // `#[path = "x.rs"] mod name;` puts `x.rs` (beside the declaring file) at `…::name`.
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (target, name) in path_attributes(&text) {
            let target = file.parent().unwrap().join(target);
            let mut path = modules[file].clone();
            path.push(name);
            modules.insert(target, path);
        }
    }
    let by_path: BTreeMap<&Vec<String>, &PathBuf> =
        modules.iter().map(|(file, path)| (path, file)).collect();
    let file_of = |path: &[String]| -> PathBuf {
        (0..=path.len())
            .rev()
            .find_map(|len| by_path.get(&path[..len].to_vec()).copied())
            .unwrap_or_else(|| panic!("no file for the crate root in {}", src.display()))
            .clone()
    };
    let mut graph = BTreeMap::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let mut imports = BTreeSet::new();
        for (inline, path) in crate_paths(&tokens(&code)) {
            let mut module = modules[file].clone();
            module.extend(inline);
            let mut words = path.iter().map(String::as_str).peekable();
            let mut target = match words.peek() {
                Some(&"crate") => {
                    words.next();
                    Vec::new()
                }
                _ => module,
            };
            for word in words {
                match word {
                    "super" => {
                        target.pop();
                    }
                    "self" => {}
                    name => target.push(name.to_owned()),
                }
            }
            let to = file_of(&target);
            if &to != file {
                imports.insert(to);
            }
        }
        graph.insert(file.clone(), imports);
    }
    graph
}

/// The module path of `file` below `src` from where it lies (`a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs` is the crate root).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path == ["lib"] || path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The `#[path = "…"] mod name;` declarations of a file: the path and the module's name.
fn path_attributes(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for piece in text.split("#[path = \"").skip(1) {
        let Some((target, rest)) = piece.split_once('"') else {
            continue;
        };
        let rest = rest.trim_start_matches([']', ' ', '\n']);
        if let Some(name) = rest
            .strip_prefix("mod ")
            .and_then(|rest| rest.split([';', ' ', '{']).next())
        {
            found.push((target.to_owned(), name.to_owned()));
        }
    }
    found
}

/// `text` without its comments, string literals and character literals (lifetimes stay).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if (rest[0] == 'r' || rest.starts_with(&['b', 'r']))
            && (i == 0 || !ident(chars[i - 1]))
            && raw_string_start(rest).is_some()
        {
            let (open, hashes) = raw_string_start(rest).unwrap();
            i += open;
            while i < chars.len()
                && !(chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|c| **c == '#').count() >= hashes)
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if rest[0] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            // An escaped character: `'\n'`, `'\''`, `'\u{1F600}'`.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    out
}

/// For a raw string starting `r"`, `r#"`, `br##"`…: the length of its opening and its number of
/// `#`.
fn raw_string_start(chars: &[char]) -> Option<(usize, usize)> {
    let after_r = if chars.first() == Some(&'b') { 2 } else { 1 };
    let hashes = chars[after_r..].iter().take_while(|c| **c == '#').count();
    (chars.get(after_r + hashes) == Some(&'"')).then_some((after_r + hashes + 1, hashes))
}

/// A token of code: a word, `::`, or another character.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// The paths starting with `crate`, `super` or `self` in `tokens` (use trees expanded), each with
/// the inline modules (`mod tests { … }`) it is written in.
fn crate_paths(tokens: &[Token]) -> Vec<(Vec<String>, Vec<String>)> {
    let word = |at: usize| match tokens.get(at) {
        Some(Token::Word(word)) => Some(word.as_str()),
        _ => None,
    };
    let mut found = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod = None;
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, at)| *at == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Token::Word(w) if w == "mod" => {
                if let (Some(name), Some(Token::Punct('{'))) = (word(i + 1), tokens.get(i + 2)) {
                    pending_mod = Some(name.to_owned());
                }
            }
            Token::Word(w)
                if matches!(w.as_str(), "crate" | "super" | "self")
                    && tokens.get(i + 1) == Some(&Token::PathSep)
                    && !matches!(
                        i.checked_sub(1).map(|at| &tokens[at]),
                        Some(Token::Punct('$') | Token::PathSep)
                    )
                    && i.checked_sub(1).and_then(word) != Some("in") =>
            {
                let modules: Vec<String> = inline.iter().map(|(name, _)| name.clone()).collect();
                let mut paths = Vec::new();
                i = use_tree(tokens, i, Vec::new(), &mut paths);
                found.extend(paths.into_iter().map(|path| (modules.clone(), path)));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Reads the path (or use tree) at `at` below `prefix` into `out`; returns where it ends.
fn use_tree(
    tokens: &[Token],
    mut at: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(at) {
            Some(Token::Word(word)) => {
                path.push(word.clone());
                at += 1;
                if tokens.get(at) != Some(&Token::PathSep) {
                    out.push(path);
                    return at;
                }
                at += 1;
            }
            Some(Token::Punct('{')) => {
                at += 1;
                while at < tokens.len() && tokens[at] != Token::Punct('}') {
                    match &tokens[at] {
                        Token::Punct(',') => at += 1,
                        Token::Word(word) if word == "as" => at += 2,
                        _ => at = use_tree(tokens, at, path.clone(), out),
                    }
                }
                return at + 1;
            }
            // A glob, or a path cut short: the module so far.
            _ => {
                out.push(path);
                return at + 1;
            }
        }
    }
}

/// Import cycles through files of `tree` (a directory): each once, as the files from one of
/// them back to it, starting from the first in order.
fn cycles_through(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>, tree: &Path) -> Vec<Vec<PathBuf>> {
    let mut cycles: Vec<Vec<PathBuf>> = Vec::new();
    let mut seen: BTreeSet<BTreeSet<PathBuf>> = BTreeSet::new();
    for start in graph.keys().filter(|file| file.starts_with(tree)) {
        // Breadth first from `start`'s imports back to `start`: a shortest cycle through it.
        let mut came_from: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closed = false;
        while let Some(file) = queue.pop_front() {
            for next in graph.get(file).into_iter().flatten() {
                if next == start {
                    came_from.insert(next, file);
                    closed = true;
                    break;
                }
                if !came_from.contains_key(next) {
                    came_from.insert(next, file);
                    queue.push_back(next);
                }
            }
            if closed {
                break;
            }
        }
        if !closed {
            continue;
        }
        let mut cycle = vec![start.clone()];
        let mut at = came_from[start];
        while at != start {
            cycle.push(at.clone());
            at = came_from[at];
        }
        cycle.push(start.clone());
        // Walked backwards: `start`, its importers, …, `start`.
        cycle.reverse();
        let members: BTreeSet<PathBuf> = cycle.iter().cloned().collect();
        if seen.insert(members) {
            cycles.push(cycle);
        }
    }
    cycles
}
