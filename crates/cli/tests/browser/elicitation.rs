//! An MCP server's elicitation through the page, against the official everything server
//! installed by the README's test command in `target/mcp-servers` (the test fails, never skips, without it):
//! the question opens a dialog naming who asks, with the form derived from the server's schema;
//! a reloaded tab gets it back while it waits and not once it is answered; the values the user
//! sends are what the server reports to the model.

use std::path::PathBuf;

use golem_testkit::mock::MockServer;
use serde_json::json;

use crate::harness::{Ui, WIRE, project, tid, worker};
use golem_testkit::cli::TestEnv;

/// The everything server's entry point, or a failure saying how to install it.
fn everything() -> PathBuf {
    golem_testkit::mcp_servers::package("server-everything")
}

/// The input `name` of the question's form.
fn field(name: &str) -> String {
    format!("{} [name=\"{name}\"]", tid("input-dialog"))
}

#[test]
fn the_servers_question_is_answered_in_a_dialog() {
    let env = TestEnv::new();
    let worker = project(
        &env,
        &worker(&format!(
            "toolsets:\n  mcp:\n    servers:\n      everything: {{ command: node, args: [\"{}\", stdio] }}\n    \
             tools: {{ everything: [trigger-elicitation-request] }}\n    \
             approval: {{ default: preApproved }}\n",
            everything().display()
        )),
    );
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[(
            "call_1",
            "everything__trigger-elicitation-request",
            json!({}),
        )]),
        WIRE.text("Thanks."),
    ]);
    let ui = Ui::open(
        "the_servers_question_is_answered_in_a_dialog",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.send("ask me");
    let shown = ui.wait_text(&tid("input-dialog"), "MCP server `everything` asks");
    assert!(
        shown.contains("Please provide inputs for the following fields:"),
        "{shown}\n{}",
        ui.describe()
    );
    // A tab that comes (back) while the question waits gets it.
    ui.reload();
    ui.wait_connected();
    ui.wait_element(&field("name"));
    // The required name left empty is refused in the page.
    ui.click(&tid("input-submit"));
    ui.wait_element(&tid("field-error"));
    ui.fill(&field("name"), "Grace Hopper");
    ui.fill(&field("integer"), "9");
    ui.click(&tid("input-submit"));
    ui.wait_gone(&tid("input-dialog"));
    ui.wait_message("assistant", "Thanks.");
    ui.wait_idle();
    let result = server.requests()[1].body.to_string();
    for expected in [
        "- Name: Grace Hopper",
        "- Favorite Integer: 9",
        "- Favorite Number: 3.14",
    ] {
        assert!(result.contains(expected), "{expected} missing: {result}");
    }
    // Answered: a reloaded tab does not ask again.
    ui.reload();
    ui.wait_connected();
    ui.wait_message("assistant", "Thanks.");
    assert!(!ui.exists(&tid("input-dialog")), "{}", ui.describe());
}
