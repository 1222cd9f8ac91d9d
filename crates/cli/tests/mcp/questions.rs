//! A served worker's tool asks its user a question (the everything reference server's
//! `trigger-elicitation-request`, an MCP toolset of the worker): for a client that can elicit,
//! the question becomes the client's elicitation request (the prompt prefixed by who asks,
//! the form as a flat schema) and its answer goes back to the tool — accepted values reach
//! the tool's result, a decline is reported as one. A client that cannot elicit is never
//! asked, and the tool declines by itself. The reference server is the one `scripts/test` installs
//! in `target/mcp-servers` (the tests fail, never skip, without it).

use std::path::PathBuf;

use serde_json::json;

use crate::calls::call;
use crate::harness::{Transport, VARIANTS, WIRE, worker};
use golem_testkit::cli::Project;

/// The everything server's entry point (a failure says how to install it).
fn everything() -> PathBuf {
    golem_testkit::mcp_servers::package("server-everything")
}

/// The worker `main`, whose MCP toolset is the everything server's elicitation tool,
/// pre-approved.
fn asker() -> String {
    worker(
        "main",
        "Asks its user through an MCP server",
        &format!(
            "toolsets:\n  mcp:\n    servers:\n      everything: {{ command: node, args: [\"{}\", \
             stdio] }}\n    tools: {{ everything: [trigger-elicitation-request] }}\n    \
             approval: {{ default: preApproved }}\n",
            everything().display()
        ),
    )
}

/// The model's replies for `calls` calls: the question, then an answer.
fn replies(calls: usize) -> Vec<golem_testkit::mock::Reply> {
    (0..calls)
        .flat_map(|n| {
            [
                WIRE.tool_calls(&[(
                    format!("call_{n}").as_str(),
                    "everything__trigger-elicitation-request",
                    json!({}),
                )]),
                WIRE.text("Thanks."),
            ]
        })
        .collect()
}

#[test]
fn a_tools_question_is_asked_of_the_client_and_its_answer_reaches_the_tool() {
    for variant in VARIANTS {
        let project = Project::new(&[("main.worker", asker())], replies(2));
        let (report, _) = call(
            &project,
            variant,
            &["main.worker"],
            &[],
            json!([
                {"tool": "main", "arguments": {"input": "ask me"},
                 "answers": [{"action": "accept", "content": {"name": "Grace Hopper", "integer": 9}}]},
                {"tool": "main", "arguments": {"input": "ask me again"},
                 "answers": [{"action": "decline"}]},
            ]),
            true,
        );

        // Accepted: asked once, as the everything server asked, its values back to the tool.
        let accepted = &report["calls"][0];
        let asked = accepted["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{variant:?}: {accepted}");
        let message = asked[0]["message"].as_str().unwrap();
        assert_eq!(
            message,
            "MCP server `everything` asks: Please provide inputs for the following fields:",
            "{variant:?}"
        );
        let schema = &asked[0]["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name"]), "{schema}");
        assert_eq!(schema["properties"]["name"]["type"], "string", "{schema}");
        assert_eq!(schema["properties"]["check"]["type"], "boolean", "{schema}");
        assert_eq!(
            schema["properties"]["integer"]["type"], "integer",
            "{schema}"
        );
        assert_eq!(schema["properties"]["integer"]["default"], 42, "{schema}");
        assert_eq!(schema["properties"]["number"]["type"], "number", "{schema}");
        let heroes: Vec<_> = schema["properties"]["titledSingleSelectEnum"]["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema}"))
            .iter()
            .map(|c| c["title"].as_str().unwrap())
            .collect();
        assert_eq!(heroes, ["Superman", "Green Lantern", "Wonder Woman"]);
        assert_eq!(
            accepted["result"]["isError"], false,
            "{variant:?}: {accepted}"
        );
        assert_eq!(
            accepted["result"]["structuredContent"]["toolCalls"],
            json!([{"name": "everything__trigger-elicitation-request", "status": "success"}]),
            "{variant:?}"
        );
        let requests = project.model.requests();
        let results = WIRE.tool_results(&requests[1]);
        for expected in [
            "User provided the requested information",
            "- Name: Grace Hopper",
            "- Favorite Integer: 9",
            "- Favorite Number: 3.14",
        ] {
            assert!(
                results[0].content.contains(expected),
                "{variant:?}: {expected} missing: {results:?}"
            );
        }

        // Declined: asked once, the tool reports the decline.
        let declined = &report["calls"][1];
        assert_eq!(
            declined["elicitations"].as_array().unwrap().len(),
            1,
            "{variant:?}: {declined}"
        );
        let results = WIRE.tool_results(&requests[3]);
        assert!(
            results[0]
                .content
                .contains("User declined to provide the requested information"),
            "{variant:?}: {results:?}"
        );

        // Each question is in its call's transcript, answered as the client did.
        let mut resolved: Vec<String> = project
            .transcripts()
            .iter()
            .flatten()
            .filter(|l| l["event"]["type"] == "inputResolved")
            .map(|l| l["event"]["action"].as_str().unwrap().to_owned())
            .collect();
        resolved.sort();
        assert_eq!(resolved, ["accept", "decline"], "{variant:?}");
    }
}

#[test]
fn a_client_that_cannot_elicit_is_not_asked_and_the_tool_declines() {
    for variant in VARIANTS
        .into_iter()
        .filter(|(transport, _)| *transport == Transport::Stdio)
    {
        let project = Project::new(&[("main.worker", asker())], replies(1));
        let (report, _) = call(
            &project,
            variant,
            &["main.worker"],
            &[],
            json!([{"tool": "main", "arguments": {"input": "ask me"}}]),
            false,
        );
        let first = &report["calls"][0];
        assert_eq!(first["elicitations"], json!([]), "{variant:?}: {first}");
        assert_eq!(first["result"]["isError"], false, "{variant:?}: {first}");
        let results = WIRE.tool_results(&project.model.requests()[1]);
        assert!(
            results[0]
                .content
                .contains("User declined to provide the requested information"),
            "{variant:?}: {results:?}"
        );
        let kinds: Vec<_> = project
            .transcripts()
            .iter()
            .flatten()
            .filter_map(|l| l["event"]["type"].as_str().map(str::to_owned))
            .collect();
        assert!(
            !kinds.iter().any(|k| k == "inputRequired"),
            "nobody was asked: {kinds:?}"
        );
    }
}
