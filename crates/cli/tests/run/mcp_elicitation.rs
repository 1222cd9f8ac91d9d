//! An MCP server's elicitation through `golem-forge run`, against the official everything
//! server installed by `scripts/test` in `target/mcp-servers` (the tests fail, never skip, without
//! it). Headless (`--json`, stdin not a terminal) nobody can answer: the question is never
//! shown, the server is told the user declined, and the run goes on to its answer. At a
//! terminal (the chat's pseudo-terminal harness) the question is asked on the screen, and
//! cancelling it tells the server so.

use std::path::PathBuf;

use super::*;
use crate::chat::{ANSWER, Chat, WORKER, project as chat_project, worker as chat_worker};

/// The everything server's entry point (a failure says how to install it).
fn everything() -> PathBuf {
    golem_testkit::mcp_servers::package("server-everything")
}

/// `toolsets:` with the everything server's elicitation tool, pre-approved.
fn toolsets() -> String {
    format!(
        "toolsets:\n  mcp:\n    servers:\n      everything: {{ command: node, args: [\"{}\", stdio] }}\n    \
         tools: {{ everything: [trigger-elicitation-request, echo] }}\n    \
         approval: {{ default: preApproved }}\n",
        everything().display()
    )
}

#[test]
fn headless_the_question_is_declined_and_the_run_goes_on() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", worker("main", &toolsets()))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "everything__trigger-elicitation-request", json!({}))]),
        wire.tool_calls(&[("c2", "everything__echo", json!({"message": "still here"}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    // Listed: we declare the elicitation capability even when nobody can answer.
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(
        tools.contains("everything__trigger-elicitation-request"),
        "{tools}"
    );
    let first = results_sent(wire, &server, 1);
    assert!(!wire.is_error(&first[0]), "{first:?}");
    assert!(
        first[0]
            .content
            .contains("User declined to provide the requested information"),
        "{first:?}"
    );
    let second = results_sent(wire, &server, 2);
    assert!(
        second
            .iter()
            .any(|r| r.content.contains("Echo: still here")),
        "the run goes on: {second:?}"
    );
    let events = events(&output);
    let kinds = types(&events);
    assert!(
        !kinds.contains(&"inputRequired") && !kinds.contains(&"inputResolved"),
        "nobody is asked headless: {kinds:?}"
    );
    assert_eq!(of_type(&events, "turnEnded")[0]["response"], "Done.");
}

#[test]
fn at_a_terminal_the_question_is_asked_and_cancelling_tells_the_server() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    chat_project(&env, &chat_worker(&toolsets()));
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "everything__trigger-elicitation-request", json!({}))]),
        wire.text("Done."),
    ]);
    let envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
    let worker = format!("proj/{WORKER}.worker");
    let mut pty = Chat::start(
        &env,
        &["run", &worker, "go", "--model", model_for(wire)],
        &envs,
    );
    pty.wait_for("┌ MCP server `everything` asks");
    pty.wait_for("[Enter] fill in  [d] decline  [c] cancel");
    pty.wait_prompt_text(ANSWER);
    pty.send_line("c");
    assert_eq!(pty.wait_exit(LIMIT), 0, "{}", pty.dump());
    assert!(
        pty.history().contains("↳ question cancelled"),
        "{}",
        pty.dump()
    );
    assert!(pty.history().contains("Done."), "{}", pty.dump());
    let sent = results_sent(wire, &server, 1);
    assert!(
        sent[0]
            .content
            .contains("User cancelled the elicitation dialog"),
        "{sent:?}"
    );
}
