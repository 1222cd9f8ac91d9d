//! Stdio MCP servers in the process jail (`jail:` on a server), end to end with the real jail,
//! the machine's Node and the reference servers installed by `scripts/test` into
//! `target/mcp-servers` (a read-only zone `servers` here; the tests fail, never skip, without
//! them): the everything server's tools are listed and called through `golem-forge run`, its
//! environment is the jail's plus its own `env` (never our API key), and nothing of it
//! outlives the run; the filesystem server, allowed `/` by its own arguments, reads inside its
//! zones but not a host file outside them, which the same server outside the jail reads; a
//! working directory below a zone's root is where the server starts; a server that fails to
//! start in the jail reports the end of its stderr; `check` shows which servers run in the
//! jail; a zone the worker lacks or a working directory outside the jail's zones stops the
//! launch naming it.

use std::path::{Path, PathBuf};

use super::leftovers::{assert_none_left, marker};
use super::mcp_toolset::{offered, package, run_with};
use super::*;

/// `golem-forge run proj/main.worker go --json`.
const RUN: &[&str] = &["proj/main.worker", "go", "--json"];

/// The installed reference servers (the directory holding `node_modules`), canonical.
fn servers_root() -> PathBuf {
    let index = package("server-everything");
    let root = index
        .ancestors()
        .nth(5)
        .unwrap_or_else(|| panic!("no root above {}", index.display()));
    root.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

/// Where the package `name` (`server-everything`) is in the jail.
fn in_jail(name: &str) -> String {
    format!("/servers/node_modules/@modelcontextprotocol/{name}/dist/index.js")
}

/// The worker `main` with the zones `servers` (the installed servers, read-only) and `docs`
/// (`proj/docs`, read-write), and `mcp` as its `toolsets.mcp` (indented four spaces).
fn jailed_worker(mcp: &str) -> String {
    worker(
        "main",
        &format!(
            "sandbox:\n  zones:\n    - name: servers\n      path: {}\n      mode: ro\n    \
             - name: docs\n      mode: rw\ntoolsets:\n  mcp:\n{mcp}",
            servers_root().display()
        ),
    )
}

#[test]
fn a_jailed_server_is_listed_and_called_and_gone_after_the_run() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mark = marker("everything");
    let worker = jailed_worker(&format!(
        "    servers:\n      everything: {{ command: node, args: [\"{}\", stdio, \"{mark}\"], \
         env: {{ GREETING: \"hi ${{MCP_TEST_GREETING}}\" }}, jail: {{ zones: [servers] }} }}\n    \
         tools: {{ everything: [echo, get-sum, get-env] }}\n    \
         approval: {{ default: preApproved }}\n",
        in_jail("server-everything")
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            (
                "c1",
                "everything__echo",
                json!({"message": "from the jail"}),
            ),
            ("c2", "everything__get-sum", json!({"a": 20, "b": 22})),
            ("c3", "everything__get-env", json!({})),
        ]),
        wire.text("Done."),
    ]);
    let output = run_with(
        &env,
        wire,
        &server,
        RUN,
        &[
            ("MCP_TEST_GREETING", "there"),
            ("GOLEM_TEST_SECRET_TOKEN", "never-in-the-jail"),
        ],
    );
    assert_exit(&output, 0);
    let tools = offered(&server, 0);
    assert_eq!(
        tools,
        [
            "everything__echo",
            "everything__get-env",
            "everything__get-sum"
        ],
        "listed from the jail"
    );
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0].content.contains("Echo: from the jail"),
        "{results:?}"
    );
    assert!(results[1].content.contains("42"), "{results:?}");
    let env_text = &results[2].content;
    assert!(!wire.is_error(&results[2]), "{env_text}");
    assert!(
        env_text.contains("hi there"),
        "its own env, ${{VAR}} expanded: {env_text}"
    );
    assert!(
        !env_text.contains("never-in-the-jail")
            && !env_text.contains("API_KEY")
            && !env_text.contains("GOLEM_TEST_SECRET_TOKEN"),
        "nothing else of ours: {env_text}"
    );
    assert!(
        env_text.contains("\"HOME\":\"/tmp\"") || env_text.contains("\"HOME\": \"/tmp\""),
        "the jail's own HOME: {env_text}"
    );
    assert!(
        Path::new("/proc/self/cmdline").exists(),
        "the scan needs /proc"
    );
    assert_none_left(&mark);
}

#[test]
fn the_jail_not_the_servers_allow_list_keeps_host_files_out() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    env.write("proj/docs/note.txt", "a note inside the zone\n");
    env.mkdir("proj/docs/sub");
    let outside = env.write("outside/secret.txt", "a host file outside every zone\n");
    let mark = marker("files");
    let files = in_jail("server-filesystem");
    let worker = jailed_worker(&format!(
        "    servers:\n      \
         files: {{ command: node, args: [\"{files}\", \"/\", \"/{mark}\"], jail: {{ zones: [servers, docs] }} }}\n      \
         here: {{ command: node, args: [\"{files}\", \".\"], cwd: /docs/sub, jail: true }}\n      \
         open: {{ command: node, args: [\"{}\", \"/\"] }}\n    \
         tools: {{ files: [read_text_file], here: [list_allowed_directories], open: [read_text_file] }}\n    \
         approval: {{ default: preApproved }}\n",
        package("server-filesystem").display()
    ));
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            (
                "c1",
                "files__read_text_file",
                json!({"path": "/docs/note.txt"}),
            ),
            ("c2", "files__read_text_file", json!({"path": outside})),
            ("c3", "open__read_text_file", json!({"path": outside})),
            ("c4", "here__list_allowed_directories", json!({})),
        ]),
        wire.text("Done."),
    ]);
    let output = run_with(&env, wire, &server, RUN, &[]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(!wire.is_error(&results[0]), "{results:?}");
    assert!(
        results[0].content.contains("a note inside the zone"),
        "reads inside its zone: {results:?}"
    );
    assert!(
        wire.is_error(&results[1]) && !results[1].content.contains("outside every zone"),
        "the host file is not in the jail: {results:?}"
    );
    assert!(
        !results[1].content.contains("outside allowed directories"),
        "its own allow-list (`/`) let the path through: {results:?}"
    );
    assert!(
        results[2]
            .content
            .contains("a host file outside every zone"),
        "the same server outside the jail reads it: {results:?}"
    );
    assert!(
        results[3].content.contains("/docs/sub"),
        "started in its working directory: {results:?}"
    );
    assert_none_left(&mark);
}

#[test]
fn a_jailed_server_that_fails_to_start_shows_its_stderr() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let worker = jailed_worker(
        "    servers:\n      broken: { command: node, args: [\"/servers/no-such-server.js\"], \
         jail: { zones: [servers] } }\n",
    );
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![]);
    let output = run_with(&env, wire, &server, RUN, &[]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("MCP server `broken`")
            && err.contains("in the jail")
            && err.contains("exited with code 1")
            && err.contains("Cannot find module")
            && err.contains("/servers/no-such-server.js"),
        "names the server, how it ended and the end of its stderr: {err}"
    );
}

#[test]
fn check_shows_which_servers_run_in_the_jail() {
    let env = TestEnv::new();
    let worker = jailed_worker(&format!(
        "    servers:\n      \
         inside: {{ command: node, args: [\"{}\", stdio], env: {{ MODE: quiet }}, jail: {{ zones: [servers] }} }}\n      \
         netted: {{ command: node, args: [\"{}\", stdio], jail: {{ network: true }} }}\n      \
         outside: {{ command: node, args: [\"{}\", stdio] }}\n    \
         tools: {{ inside: [echo], netted: [echo], outside: [echo] }}\n",
        in_jail("server-everything"),
        in_jail("server-everything"),
        package("server-everything").display()
    ));
    project(&env, &[("main.worker", worker)]);
    let out = check_offline(&env);
    let line = |server: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{server}: stdio")))
            .unwrap_or_else(|| panic!("no line for {server}: {out}"))
            .to_owned()
    };
    let inside = line("inside");
    assert!(
        inside.contains("runs in the jail (zones: servers; network: off; cwd: /servers)")
            && inside.contains("environment: the jail's PATH, HOME, LANG, MODE"),
        "{out}"
    );
    assert!(
        line("netted").contains("runs in the jail (zones: servers, docs; network: on"),
        "`jail:` without zones is every zone: {out}"
    );
    assert!(line("outside").contains("runs outside the jail"), "{out}");
    assert!(out.contains("Jail (for MCP servers)"), "{out}");
    for tool in ["inside__echo", "netted__echo", "outside__echo"] {
        assert!(out.contains(tool), "listed through the jail: {out}");
    }
}

#[test]
fn a_zone_the_worker_lacks_or_a_cwd_outside_the_jail_stops_the_launch() {
    for (server, says) in [
        (
            "{ command: node, jail: { zones: [servers, nope] } }",
            "toolsets.mcp.servers.bad.jail: zones: `nope` is not a zone of this worker (zones: \
             servers, docs)",
        ),
        (
            "{ command: node, cwd: /docs, jail: { zones: [servers] } }",
            "toolsets.mcp.servers.bad.cwd: \"/docs\" is not a directory of the jail's zones \
             (servers)",
        ),
        (
            "{ command: node, cwd: /servers/missing, jail: { zones: [servers] } }",
            "toolsets.mcp.servers.bad.cwd: \"/servers/missing\"",
        ),
    ] {
        let env = TestEnv::new();
        let worker = jailed_worker(&format!("    servers:\n      bad: {server}\n"));
        project(&env, &[("main.worker", worker)]);
        let output = env
            .command()
            .args(["check", "proj/main.worker", "--model", "test:default"])
            .output()
            .unwrap();
        assert_exit(&output, 2);
        let err = stderr(&output);
        assert!(err.contains(says), "{server}: {err}");
    }
}

#[test]
fn a_jailed_servers_writes_pass_the_zones_approval() {
    let wire = Wire::OpenAi;
    let files = in_jail("server-filesystem");
    for (flags, applied) in [(&[][..], false), (&["--approval", "approve_all"][..], true)] {
        let env = TestEnv::new();
        env.write("proj/docs/note.txt", "a note\n");
        let worker = jailed_worker(&format!(
            "    servers:\n      \
             files: {{ command: node, args: [\"{files}\", \"/docs\"], jail: {{ zones: [servers, docs] }} }}\n    \
             tools: {{ files: [write_file, read_text_file] }}\n    \
             approval: {{ default: preApproved }}\n"
        ));
        project(&env, &[("main.worker", worker)]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "c1",
                "files__write_file",
                json!({"path": "/docs/made.txt", "content": "by the server\n"}),
            )]),
            wire.tool_calls(&[(
                "c2",
                "files__read_text_file",
                json!({"path": "/docs/made.txt"}),
            )]),
            wire.text("Done."),
        ]);
        let mut args = RUN.to_vec();
        args.extend_from_slice(flags);
        let output = run_with(&env, wire, &server, &args, &[]);
        assert_exit(&output, 0);
        let written = &results_sent(wire, &server, 1)[0];
        let sent = results_sent(wire, &server, 2);
        let read = sent.iter().find(|r| r.tool_call_id == "c2").unwrap();
        if applied {
            assert!(!wire.is_error(written), "{written:?}");
            assert_eq!(
                env.read("proj/docs/made.txt").as_deref(),
                Some("by the server\n")
            );
            assert!(
                read.content.contains("by the server"),
                "restarted, it reads the zone: {read:?}"
            );
        } else {
            assert!(wire.is_error(written), "{written:?}");
            assert!(
                written.content.contains("create /docs/made.txt"),
                "{written:?}"
            );
            assert_eq!(
                env.read("proj/docs/made.txt"),
                None,
                "the zone is unchanged"
            );
            assert!(wire.is_error(read), "the file never landed: {read:?}");
        }
    }
}
