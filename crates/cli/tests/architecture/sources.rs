//! What library code may do: only the front ends draw on a terminal or serve a socket, and
//! only the orchestrator calls `Tool::execute`.

use super::layers::{TEST_ONLY, workspace_dependencies, workspace_packages};
use super::{rust_files, workspace_root};
use std::path::Path;

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
const FRONT_ENDS: &[&str] = &[
    "golem-forge",
    "golem-web",
    "golem-mcp-server",
    "golem-acp",
    "golem-http",
];

/// Each library source file below `src/` of every workspace crate that is not a front end or
/// test support (so a new crate is covered without being listed), with the text before its `#[cfg(test)]` part.
fn library_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for package in workspace_packages() {
        let name = package["name"].as_str().unwrap();
        if FRONT_ENDS.contains(&name) || TEST_ONLY.contains(&name) {
            continue;
        }
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        rust_files(&manifest.parent().unwrap().join("src"), &mut files);
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

/// Library files that still return or keep a `String` as an error, how many times, and why.
/// Invariant 12: a file leaves this list when its errors are typed, and none joins it.
const STRING_ERRORS: &[(&str, usize, &str)] = &[
    (
        "crates/runtime/src/host/serve.rs",
        1,
        "an action's outcome, which is protocol text (`ActionResult`) on both sides",
    ),
    (
        "crates/sandbox/src/jail/parent/process.rs",
        1,
        "the message of the error a first `JailProcess::wait` returned, replayed to a second \
         caller as `JailError::Setup` (a `JailError` holds an `io::Error` and cannot be cloned)",
    ),
];

/// How many times `code` names `Result‹…, String>`, however it is spaced or broken across
/// lines (a `->` inside, as in `Result<Box<dyn Fn() -> T>, E>`, is not a closing bracket).
fn string_results(code: &str) -> usize {
    let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut count = 0;
    let mut rest = flat.as_str();
    while let Some(at) = rest.find("Result<") {
        rest = &rest[at + "Result<".len()..];
        // The top-level arguments so far, and where the current one starts.
        let (mut depth, mut args, mut start, mut previous) = (1usize, Vec::new(), 0, ' ');
        for (i, c) in rest.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if previous == '-' => {}
                '>' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push(rest[start..i].trim());
                        args.retain(|arg| !arg.is_empty()); // a trailing comma
                        if args.len() == 2 && args[1] == "String" {
                            count += 1;
                        }
                        break;
                    }
                }
                ',' if depth == 1 => {
                    args.push(rest[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
            previous = c;
        }
    }
    count
}

#[test]
fn the_string_error_check_counts_what_it_should() {
    assert_eq!(string_results("fn f() -> Result<(), String> {}"), 1);
    assert_eq!(
        string_results("fn f()\n    -> Result<\n        Vec<u8>,\n        String,\n    >"),
        1
    );
    assert_eq!(
        string_results("Option<Result<Vec<Result<u8, String>>, String>>"),
        2
    );
    assert_eq!(string_results("Result<Box<dyn Fn(&str) -> u8>, String>"), 1);
    assert_eq!(
        string_results("Result<String, MountError> Result<(String, u8), Error>"),
        0
    );
    assert_eq!(
        string_results("Result<HashMap<String, String>, StringError>"),
        0
    );
}

#[test]
fn libraries_return_typed_errors_not_strings() {
    let mut problems = Vec::new();
    for (name, code) in library_sources() {
        // Test helpers kept in `src/` (`tests.rs`, `tests/`) implement traits the tests need.
        if name.ends_with("/tests.rs") || name.contains("/tests/") {
            continue;
        }
        let found = string_results(&code);
        let allowed = STRING_ERRORS
            .iter()
            .find(|(file, ..)| *file == name)
            .map_or(0, |(_, allowed, _)| *allowed);
        if found > allowed {
            problems.push(format!(
                "{name}: {found} `Result<_, String>` ({allowed} allowed): libraries return typed \
                 errors (thiserror), whose variants carry the data (invariant 12)"
            ));
        } else if found < allowed {
            problems.push(format!(
                "{name}: {found} `Result<_, String>` but {allowed} allowed: lower or remove its \
                 entry in STRING_ERRORS"
            ));
        }
    }
    for (file, ..) in STRING_ERRORS {
        assert!(
            workspace_root().join(file).exists(),
            "{file} is gone: remove its entry in STRING_ERRORS"
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
