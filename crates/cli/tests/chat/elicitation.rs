//! An MCP server's elicitation in the chat, against the official everything server installed
//! by `scripts/test` in `target/mcp-servers` (the tests fail, never skip, without it): the model
//! calls `everything__trigger-elicitation-request` (listed only because we declare the
//! elicitation capability), the chat shows who asks and what, the user fills the form field
//! by field (or declines), and the server's report of the answer is the tool result the model
//! gets.

use std::path::PathBuf;

use super::*;

/// The everything server's entry point (a failure says how to install it).
fn everything() -> PathBuf {
    golem_testkit::mcp_servers::package("server-everything")
}

/// The fields of the everything server's form, in its order.
const FIELDS: [&str; 13] = [
    "name",
    "check",
    "firstLine",
    "email",
    "homepage",
    "birthdate",
    "integer",
    "number",
    "untitledSingleSelectEnum",
    "untitledMultipleSelectEnum",
    "titledSingleSelectEnum",
    "titledMultipleSelectEnum",
    "legacyTitledEnum",
];

/// Starts a chat whose worker has the everything server's elicitation tool, pre-approved, and
/// a model that calls it once, then says `Thanks.`.
fn start_asking(env: &TestEnv, wire: Wire, server: &MockServer) -> Chat {
    project(
        env,
        &worker(&format!(
            "toolsets:\n  mcp:\n    servers:\n      everything: {{ command: node, args: [\"{}\", stdio] }}\n    \
             tools: {{ everything: [trigger-elicitation-request] }}\n    \
             approval: {{ default: preApproved }}\n",
            everything().display()
        )),
    );
    let mut chat = start(env, wire, server);
    chat.ready();
    chat
}

fn model(wire: Wire) -> Vec<Reply> {
    vec![
        wire.tool_calls(&[(
            "call_1",
            "everything__trigger-elicitation-request",
            json!({}),
        )]),
        wire.text("Thanks."),
    ]
}

/// Waits until the cursor sits after the prompt of the field `name` (`name (type, …)› `).
fn wait_field(chat: &mut Chat, name: &str) {
    let head = format!("{name} (");
    chat.poll(&format!("the field {name}"), |view, from| {
        let line = view.cursor_line();
        (view.cursor.0 > from && line.starts_with(&head) && line.ends_with('›')).then_some(())
    });
}

/// Sends `line`, waits for the question's box and its `answer›`; returns what was shown.
fn until_asked(chat: &mut Chat, line: &str) -> String {
    chat.send_line(line);
    chat.wait_for("[Enter] fill in  [d] decline  [c] cancel");
    chat.wait_prompt_text(ANSWER);
    chat.since()
}

/// The tool result the model got, as the JSON of its second request.
fn sent_back(server: &MockServer) -> String {
    let bodies = bodies(server);
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    bodies[1].to_string()
}

#[test]
fn the_user_fills_the_servers_form_and_the_tool_reports_the_values() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let server = MockServer::start_blocking(model(wire));
    let mut chat = start_asking(&env, wire, &server);
    let shown = until_asked(&mut chat, "ask me something");
    assert!(
        shown.contains("┌ MCP server `everything` asks"),
        "who asks: {}",
        chat.dump()
    );
    assert!(
        shown.contains("Please provide inputs for the following fields:"),
        "{}",
        chat.dump()
    );
    chat.send_line("");
    for name in FIELDS {
        wait_field(&mut chat, name);
        match name {
            "name" => {
                assert!(
                    chat.since().contains("Your full, legal name"),
                    "the description: {}",
                    chat.dump()
                );
                // Required: an empty answer is asked again.
                chat.send_line("");
                chat.wait_for("name is required");
                wait_field(&mut chat, name);
                chat.send_line("Ada Lovelace");
            }
            "check" => chat.send_line("yes"),
            "integer" => {
                // Not a whole number: asked again.
                chat.send_line("seven");
                chat.wait_for("'seven' is not a whole number");
                wait_field(&mut chat, name);
                chat.send_line("7");
            }
            "titledSingleSelectEnum" => chat.send_line("Wonder Woman"),
            _ => chat.send_line(""),
        }
    }
    chat.wait_prompt();
    let shown = chat.history();
    assert!(shown.contains("↳ answer sent"), "{}", chat.dump());
    assert!(shown.contains("Thanks."), "{}", chat.dump());
    let result = sent_back(&server);
    for expected in [
        "User provided the requested information",
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Favorite Integer: 7",
        // Left empty: the form's default.
        "- Favorite Number: 3.14",
        "hero-3",
        "It was a dark and stormy night.",
    ] {
        assert!(
            result.contains(expected),
            "{expected} missing from the tool result: {result}"
        );
    }
}

#[test]
fn the_user_declines_and_the_server_is_told() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let server = MockServer::start_blocking(model(wire));
    let mut chat = start_asking(&env, wire, &server);
    until_asked(&mut chat, "ask me something");
    chat.send_line("d");
    chat.wait_prompt();
    let shown = chat.history();
    assert!(shown.contains("↳ question declined"), "{}", chat.dump());
    assert!(shown.contains("Thanks."), "{}", chat.dump());
    let result = sent_back(&server);
    assert!(
        result.contains("User declined to provide the requested information"),
        "{result}"
    );
    assert!(!result.contains("Ada"), "{result}");
}
