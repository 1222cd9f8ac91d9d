//! MCP servers as toolsets end to end, against the official reference servers installed from
//! npm by `scripts/test` into `target/mcp-servers` (the tests fail, never skip, without them): a
//! worker's `toolsets.mcp` names the everything server (and the filesystem server), the model
//! calls its tools through `golem-forge run`. Text, image and structured results arrive
//! mapped; the whitelist hides the other tools; `${VAR}` reaches the server and our other
//! variables (the API key) do not; an unconfigured tool asks and is denied headless while a
//! pre-approved one runs; a server killed mid-call gives an error result naming it and the
//! next call starts it again.

use std::time::Instant;

pub(super) use golem_testkit::mcp_servers::package;

use super::*;

/// The names of the tools offered in the model request `index`.
pub(super) fn offered(server: &MockServer, index: usize) -> Vec<String> {
    server.requests()[index].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The worker `main` whose `toolsets.mcp` is `mcp` (indented four spaces, ending in a
/// newline).
pub(super) fn mcp_worker(mcp: &str) -> String {
    worker("main", &format!("toolsets:\n  mcp:\n{mcp}"))
}

/// The everything server as a `servers:` entry named `everything`.
fn everything() -> String {
    format!(
        "      everything: {{ command: node, args: [\"{}\", stdio] }}\n",
        package("server-everything").display()
    )
}

/// `golem-forge run` with `extra` variables in its environment.
pub(super) fn run_with(
    env: &TestEnv,
    wire: Wire,
    server: &MockServer,
    args: &[&str],
    extra: &[(&str, &str)],
) -> Output {
    env.command()
        .arg("run")
        .args(args)
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, server))
        .envs(extra.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn tools_are_called_and_their_results_mapped() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let docs = env.path().join("docs");
    env.write("docs/note.txt", "a note for the filesystem server\n");
    let worker = mcp_worker(&format!(
        "    servers:\n{}      files: {{ command: node, args: [\"{}\", \"{}\"] }}\n      \
         env_check: {{ command: node, args: [\"{}\", stdio], env: {{ GREETING: \"hi ${{MCP_TEST_GREETING}}\" }} }}\n    \
         tools:\n      everything: [echo, get-tiny-image, get-structured-content]\n      \
         files: [read_text_file]\n      env_check: [get-env]\n    \
         approval: {{ default: preApproved }}\n",
        everything(),
        package("server-filesystem").display(),
        docs.display(),
        package("server-everything").display(),
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("c1", "everything__echo", json!({"message": "hello"})),
            ("c2", "everything__get-tiny-image", json!({})),
            (
                "c3",
                "everything__get-structured-content",
                json!({"location": "Chicago"}),
            ),
            ("c4", "everything__get-sum", json!({"a": 1, "b": 2})),
            (
                "c5",
                "files__read_text_file",
                json!({"path": docs.join("note.txt")}),
            ),
            ("c6", "env_check__get-env", json!({})),
        ]),
        wire.text("Done."),
    ]);
    let output = run_with(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go", "--json"],
        &[("MCP_TEST_GREETING", "there")],
    );
    assert_exit(&output, 0);
    let tools = offered(&server, 0);
    assert_eq!(
        tools,
        [
            "env_check__get-env",
            "everything__echo",
            "everything__get-structured-content",
            "everything__get-tiny-image",
            "files__read_text_file"
        ],
        "only the whitelisted tools, named <server>__<tool>"
    );
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(results[0].content.contains("Echo: hello"), "{results:?}");
    assert!(wire.is_error(&results[3]), "not whitelisted: {results:?}");
    assert!(
        results[4]
            .content
            .contains("a note for the filesystem server"),
        "{results:?}"
    );
    let env_text = &results[5].content;
    assert!(
        env_text.contains("hi there"),
        "${{VAR}} expanded: {env_text}"
    );
    assert!(
        !env_text.contains("API_KEY") && !env_text.contains("NO_COLOR"),
        "the server's environment is minimal: {env_text}"
    );
    let events = events(&output);
    let values: Vec<&Value> = of_type(&events, "toolResult")
        .iter()
        .map(|e| &e["value"])
        .collect();
    assert_eq!(values[0]["kind"], "text", "{values:?}");
    assert_eq!(values[1]["kind"], "image", "{values:?}");
    assert_eq!(values[1]["mimeType"], "image/png", "{values:?}");
    assert!(
        values[1]["data"]["base64"]
            .as_str()
            .is_some_and(|b| b.len() > 100)
    );
    assert_eq!(values[2]["kind"], "structured", "{values:?}");
    assert!(values[2]["data"]["temperature"].is_number(), "{values:?}");
}

#[test]
fn an_unconfigured_tool_asks_and_a_pre_approved_one_runs() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let worker = mcp_worker(&format!(
        "    servers:\n{}    tools: {{ everything: [echo, get-sum] }}\n    \
         approval: {{ tools: {{ everything__get-sum: preApproved }} }}\n",
        everything()
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("c1", "everything__echo", json!({"message": "hello"})),
            ("c2", "everything__get-sum", json!({"a": 2, "b": 3})),
        ]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(wire.is_error(&results[0]), "{results:?}");
    assert!(
        results[0]
            .content
            .contains(&headless_message("everything__echo")),
        "{results:?}"
    );
    assert!(!wire.is_error(&results[1]), "{results:?}");
    assert!(results[1].content.contains('5'), "{results:?}");
}

#[test]
fn a_server_killed_mid_call_gives_an_error_result_and_the_run_goes_on() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let pids = env.path().join("pids");
    // The server is a shell that records its pid and becomes node.
    let worker = mcp_worker(&format!(
        "    servers:\n      everything: {{ command: sh, args: [\"-c\", \"echo $$ >> {} && exec node {} stdio\"] }}\n    \
         approval: {{ default: preApproved }}\n",
        pids.display(),
        package("server-everything").display()
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "c1",
            "everything__trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
        )]),
        wire.tool_calls(&[("c2", "everything__echo", json!({"message": "again"}))]),
        wire.text("Done."),
    ]);
    let child = spawn(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    // The first pid is the listing at launch; the second the session's server.
    let start = Instant::now();
    let pid = loop {
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        if let Some(pid) = text.lines().nth(1) {
            break pid.trim().parse::<u32>().unwrap();
        }
        assert!(
            start.elapsed() < LIMIT,
            "the server was never started for the call"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500));
    send_signal(pid, "-KILL");
    let output = wait_for_exit(child);
    assert_exit(&output, 0);
    let first = results_sent(wire, &server, 1);
    assert!(wire.is_error(&first[0]), "{first:?}");
    assert!(
        first[0].content.contains("MCP server `everything`"),
        "names the server: {first:?}"
    );
    let sent = results_sent(wire, &server, 2);
    let second = sent
        .iter()
        .find(|r| r.tool_call_id == "c2")
        .unwrap_or_else(|| panic!("no result of the second call: {sent:?}"));
    assert!(!wire.is_error(second), "started again: {second:?}");
    assert!(second.content.contains("Echo: again"), "{second:?}");
}

#[test]
fn a_whitelisted_tool_the_server_lacks_stops_the_launch() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let worker = mcp_worker(&format!(
        "    servers:\n{}    tools: {{ everything: [echo, nope] }}\n",
        everything()
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("everything") && err.contains("nope"),
        "names the server and the tool: {err}"
    );
}

#[test]
fn check_lists_the_servers_and_their_tools() {
    let env = TestEnv::new();
    let worker = mcp_worker(&format!(
        "    servers:\n{}    tools: {{ everything: [echo, get-sum] }}\n    \
         approval: {{ tools: {{ everything__get-sum: preApproved }} }}\n",
        everything()
    ));
    project(&env, &[("main.worker", worker)]);
    let out = check_offline(&env);
    assert!(
        out.contains("everything: stdio, `node ") && out.contains("runs outside the jail"),
        "{out}"
    );
    let echo = out
        .lines()
        .find(|l| l.contains("everything__echo"))
        .unwrap_or_default();
    assert!(echo.contains("ask (default)"), "{out}");
    let sum = out
        .lines()
        .find(|l| l.contains("everything__get-sum"))
        .unwrap_or_default();
    assert!(sum.contains("preApproved (configured)"), "{out}");
}

#[test]
fn a_server_that_cannot_start_shows_its_own_error_in_run_and_check() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    // A server not installed: node says so on its stderr and exits.
    let worker = mcp_worker(
        "    servers:\n      broken: { command: node, args: [\"no-such-server/index.js\", stdio] }\n",
    );
    project(&env, &[("main.worker", worker)]);
    let expect_reported = |err: &str| {
        assert!(
            err.contains("MCP server `broken` did not start")
                && err.contains("`node no-such-server/index.js stdio` exited with code 1")
                && err.contains("Cannot find module")
                && err.contains("is the server installed?"),
            "names the server, its command, how it ended, node's own error and a hint: {err}"
        );
    };
    let server = MockServer::start_blocking(vec![]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 2);
    expect_reported(&stderr(&output));
    let output = env
        .command()
        .args(["check", "proj/main.worker", "--model", "test:default"])
        .output()
        .unwrap();
    assert_exit(&output, 2);
    expect_reported(&stderr(&output));
}
