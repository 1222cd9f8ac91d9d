//! The MCP tool-list cache and the servers' lifecycle end to end, against the everything
//! reference server behind a wrapper script that notes each start: a warm cache starts no
//! server for a session whose model calls no MCP tool, the cached list is what the model sees
//! (and a changed list is written back with a `status` notice), a corrupt cache file is listed
//! again, `mcp-refresh` and `check` report per server without printing secrets, and no
//! process of a server (not even a grandchild) outlives the session.

use std::path::{Path, PathBuf};

use super::leftovers::{assert_none_left, marker};
use super::mcp_toolset::{mcp_worker, offered, package};
use super::*;

/// A secret in a server's environment, never printed or stored.
const SECRET: &str = "s3cret-value-4711";

/// The wrapper of the everything server: appends a line to `starts` when started, leaves a
/// background grandchild carrying `marker` (which does not exit when stdin closes), then
/// becomes the server.
fn wrapper(env: &TestEnv, marker: &str) -> PathBuf {
    let starts = env.path().join("starts.log");
    env.write(
        "proj/wrap.sh",
        &format!(
            "echo started >> {}\nsh -c 'sleep 300' {marker} &\nexec node {} stdio\n",
            starts.display(),
            package("server-everything").display()
        ),
    )
}

/// The worker `main` with the everything server behind the wrapper (its `TOKEN` the secret)
/// and `extra` servers, echo and get-sum pre-approved.
fn wrapped_worker(env: &TestEnv, marker: &str, extra: &str) -> String {
    wrapper(env, marker);
    mcp_worker(&format!(
        "    servers:\n      everything: {{ command: sh, args: [\"./wrap.sh\"], env: {{ TOKEN: \
         \"{SECRET}\" }} }}\n{extra}    tools: {{ everything: [echo, get-sum] }}\n    \
         approval: {{ default: preApproved }}\n"
    ))
}

/// How many times the wrapped server was started.
fn starts(env: &TestEnv) -> usize {
    env.read("starts.log").unwrap_or_default().lines().count()
}

/// The cache files of the project.
fn cache_files(env: &TestEnv) -> Vec<PathBuf> {
    let dir = env.path().join("proj/.golem-forge/mcp-tools");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_warm_cache_starts_no_server_until_a_tool_is_called() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mark = marker("lazy");
    let worker = wrapped_worker(&env, &mark, "");
    project(&env, &[("main.worker", worker)]);

    let server = MockServer::start_blocking(vec![wire.text("Hi.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    assert_eq!(starts(&env), 1, "a cold cache lists the server once");
    assert_eq!(cache_files(&env).len(), 1, "and caches its list");
    assert_none_left(&mark);

    let server = MockServer::start_blocking(vec![wire.text("Hi again.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    assert_eq!(starts(&env), 1, "a warm cache starts no server");
    assert_eq!(
        offered(&server, 0),
        ["everything__echo", "everything__get-sum"],
        "the tools come from the cache"
    );

    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "everything__echo", json!({"message": "lazy"}))]),
        wire.text("Done."),
    ]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    assert_eq!(starts(&env), 2, "the first call starts the server");
    let results = results_sent(wire, &server, 1);
    assert!(results[0].content.contains("Echo: lazy"), "{results:?}");
    assert_none_left(&mark);
}

#[test]
fn the_cached_list_is_used_and_a_changed_list_written_back() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mark = marker("cached");
    let worker = wrapped_worker(&env, &mark, "");
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![wire.text("Hi.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    let [file] = cache_files(&env).try_into().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(SECRET), "no secret in the cache: {text}");
    let mut cached: Value = serde_json::from_str(&text).unwrap();
    let tools = cached["tools"].as_array_mut().unwrap();
    let echo = tools.iter_mut().find(|t| t["name"] == "echo").unwrap();
    echo["description"] = json!("THE CACHED DESCRIPTION");
    std::fs::write(&file, serde_json::to_string(&cached).unwrap()).unwrap();

    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "everything__echo", json!({"message": "x"}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    assert_eq!(
        starts(&env),
        2,
        "the cached list was used: no listing at start"
    );
    let request = server.requests()[0].body.to_string();
    assert!(
        request.contains("THE CACHED DESCRIPTION"),
        "the model sees the cached list: {request}"
    );
    let events = events(&output);
    let notices: Vec<&Value> = of_type(&events, "status")
        .into_iter()
        .filter(|e| e.to_string().contains("tool list changed"))
        .collect();
    assert_eq!(notices.len(), 1, "one notice: {events:?}");
    assert!(
        notices[0].to_string().contains("next session"),
        "{notices:?}"
    );
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert!(
        !rewritten.contains("THE CACHED DESCRIPTION"),
        "the cache holds the live list again"
    );
}

#[test]
fn a_corrupt_cache_file_is_listed_again() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mark = marker("corrupt");
    let worker = wrapped_worker(&env, &mark, "");
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![wire.text("Hi.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    let [file] = cache_files(&env).try_into().unwrap();
    std::fs::write(&file, "{ \"format\": 1, \"tools\": [tru").unwrap();

    let server = MockServer::start_blocking(vec![wire.text("Hi.")]);
    assert_exit(&run(&env, wire, &server, &["proj/main.worker", "go"]), 0);
    assert_eq!(starts(&env), 2, "listed again");
    assert_eq!(
        offered(&server, 0),
        ["everything__echo", "everything__get-sum"]
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let fixed: Value = serde_json::from_str(&text).unwrap();
    assert!(fixed["tools"].as_array().is_some_and(|t| t.len() > 2));
    assert_none_left(&mark);
}

#[test]
fn mcp_refresh_reports_each_server_and_writes_the_cache() {
    let env = TestEnv::new();
    let mark = marker("refresh");
    let worker = wrapped_worker(
        &env,
        &mark,
        "      broken: { command: /nonexistent/mcp-server }\n",
    );
    project(&env, &[("main.worker", worker)]);
    let output = env
        .command()
        .args(["mcp-refresh", "proj/main.worker"])
        .output()
        .unwrap();
    assert_exit(&output, 1);
    let out = stdout(&output);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"))
            .to_owned()
    };
    let everything = line("everything");
    assert!(
        everything.contains(" tools, version 2.0.0") && everything.contains("cached (changed)"),
        "{out}"
    );
    let broken = line("broken");
    assert!(
        broken.contains("error") && broken.contains("MCP server `broken`"),
        "{out}"
    );
    assert!(!out.contains(SECRET), "{out}");
    assert_eq!(starts(&env), 1);
    let [file] = cache_files(&env).try_into().unwrap();
    let cached: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let count = cached["tools"].as_array().map_or(0, Vec::len);
    assert!(
        everything.contains(&format!(": {count} tools,")),
        "the count printed is the count cached ({count}): {everything}"
    );

    let again = env
        .command()
        .args(["mcp-refresh", "proj/main.worker"])
        .output()
        .unwrap();
    assert!(
        stdout(&again).contains("cached (unchanged)"),
        "{}",
        render(&again)
    );
    assert_none_left(&mark);
}

#[test]
fn check_lists_transport_and_cache_state_and_refreshes() {
    let env = TestEnv::new();
    let mark = marker("check");
    let worker = wrapped_worker(&env, &mark, "");
    project(&env, &[("main.worker", worker)]);
    let first = check_offline(&env);
    assert!(
        first.contains("everything: stdio, `sh ./wrap.sh`, runs outside the jail")
            && first.contains("TOKEN")
            && first.contains("tool list not cached"),
        "{first}"
    );
    let second = check_offline(&env);
    let cached = second
        .lines()
        .find(|l| l.contains("tool list cached"))
        .unwrap_or_else(|| panic!("{second}"));
    assert!(
        cached.contains("version 2.0.0") && cached.contains("Z ("),
        "when, how many tools and the version: {second}"
    );
    let refreshed = env
        .command()
        .args([
            "check",
            "proj/main.worker",
            "--model",
            "test:default",
            "--refresh",
        ])
        .output()
        .unwrap();
    assert_exit(&refreshed, 0);
    let out = stdout(&refreshed);
    assert!(
        out.contains("Refreshing the MCP tool lists") && out.contains("cached (unchanged)"),
        "{out}"
    );
    for text in [&first, &second, &out] {
        assert!(!text.contains(SECRET), "{text}");
    }
    assert_none_left(&mark);
}

#[test]
fn no_server_process_outlives_the_session() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mark = marker("stop");
    let worker = wrapped_worker(&env, &mark, "");
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "everything__get-sum", json!({"a": 1, "b": 2}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 0);
    assert_eq!(starts(&env), 2, "listed, then started for the call");
    let results = results_sent(wire, &server, 1);
    assert!(results[0].content.contains('3'), "{results:?}");
    assert!(
        Path::new("/proc/self/cmdline").exists(),
        "the scan needs /proc"
    );
    assert_none_left(&mark);
}

#[test]
fn the_mcp_example_checks_offline() {
    let env = TestEnv::new();
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/mcp-everything");
    let _installed = package("server-everything");
    let output = env.command().arg("check").arg(&example).output().unwrap();
    assert_exit(&output, 0);
    let out = stdout(&output);
    for shown in [
        "everything: stdio, `node ",
        "everything__echo",
        "everything__get-sum",
        "everything__get-tiny-image",
        "ask (configured)",
    ] {
        assert!(out.contains(shown), "{shown}: {out}");
    }
}
