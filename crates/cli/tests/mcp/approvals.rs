//! Approvals as elicitation: a write that asks becomes the client's elicitation request (the
//! tool, what it does, its risk, the diff preview); accept writes the file, decline (with a
//! note that reaches the model) does not, accept for this session answers the identical call
//! that follows without asking again.

use serde_json::json;

use crate::calls::call;
use crate::harness::{VARIANTS, WIRE, text_of, writer};
use golem_testkit::cli::Project;

#[test]
fn an_approval_is_an_elicitation_accept_writes_and_decline_does_not() {
    for variant in VARIANTS {
        let write = |id: &str, path: &str, content: &str| {
            (id.to_owned(), path.to_owned(), content.to_owned())
        };
        let calls = [
            write("call_a", "/out/a.md", "alpha\n"),
            write("call_b", "/out/b.md", "beta\n"),
        ];
        let mut replies = Vec::new();
        for (id, path, content) in &calls {
            replies.push(WIRE.tool_calls(&[(
                id.as_str(),
                "write_file",
                json!({"path": path, "content": content}),
            )]));
            replies.push(WIRE.text(&format!("Done with {path}.")));
        }
        // Twice the same write in one turn: accepted for the session, asked once.
        let same = json!({"path": "/out/c.md", "content": "gamma\n"});
        replies.push(WIRE.tool_calls(&[
            ("call_c1", "write_file", same.clone()),
            ("call_c2", "write_file", same),
        ]));
        replies.push(WIRE.text("Done with /out/c.md."));
        let project = Project::new(&[("main.worker", writer(""))], replies);
        let (report, _) = call(
            &project,
            variant,
            &["main.worker"],
            &[],
            json!([
                {"tool": "main", "arguments": {"input": "write a"},
                 "answers": [{"action": "accept", "content": {"decision": "accept"}}]},
                {"tool": "main", "arguments": {"input": "write b"},
                 "answers": [{"action": "accept", "content": {"decision": "decline", "note": "write to /out/notes.md instead"}}]},
                {"tool": "main", "arguments": {"input": "write c twice"},
                 "answers": [{"action": "accept", "content": {"decision": "accept_for_session"}}]},
            ]),
            true,
        );

        // Accepted: asked once, with the tool, its description, its risk and the preview.
        let accepted = &report["calls"][0];
        let asked = accepted["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{variant:?}: {accepted}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Worker `main` asks to run write_file: "),
            "{variant:?}: {message}"
        );
        assert!(message.contains("/out/a.md"), "{message}");
        assert!(message.contains("Risk: medium."), "{message}");
        assert!(
            message.contains("Created /out/a.md") && message.contains("+alpha"),
            "the diff preview: {message}"
        );
        let decision = &asked[0]["requestedSchema"]["properties"]["decision"];
        let choices: Vec<_> = decision["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["title"].as_str().unwrap())
            .collect();
        assert_eq!(choices, ["Accept", "Accept for this session", "Decline"]);
        assert_eq!(
            asked[0]["requestedSchema"]["properties"]["note"]["type"],
            "string"
        );
        assert_eq!(project.read("out/a.md").as_deref(), Some("alpha\n"));
        assert_eq!(
            accepted["result"]["structuredContent"]["filesChanged"],
            json!(["/out/a.md"])
        );

        // Declined: not written; the note reaches the model.
        let declined = &report["calls"][1];
        assert_eq!(declined["elicitations"].as_array().unwrap().len(), 1);
        assert_eq!(project.read("out/b.md"), None, "{variant:?}");
        assert_eq!(
            declined["result"]["structuredContent"]["toolCalls"],
            json!([{"name": "write_file", "status": "denied"}])
        );
        assert_eq!(
            declined["result"]["structuredContent"]["filesChanged"],
            json!([])
        );
        assert_eq!(text_of(&declined["result"]), "Done with /out/b.md.");
        let results = WIRE.tool_results(&project.model.requests()[3]);
        assert!(
            results[0]
                .content
                .contains("write to /out/notes.md instead"),
            "{variant:?}: {results:?}"
        );

        // Accepted for the session: the identical second call is not asked.
        let session = &report["calls"][2];
        assert_eq!(
            session["elicitations"].as_array().unwrap().len(),
            1,
            "{variant:?}: {session}"
        );
        assert_eq!(
            session["result"]["structuredContent"]["toolCalls"],
            json!([
                {"name": "write_file", "status": "success"},
                {"name": "write_file", "status": "success"}
            ])
        );
        assert_eq!(project.read("out/c.md").as_deref(), Some("gamma\n"));

        // Each decision is in its call's transcript, decided by the user (the transcripts'
        // names do not sort in the order of the calls).
        let transcripts = project.transcripts();
        assert_eq!(transcripts.len(), 3, "{variant:?}");
        let mut decided: Vec<_> = transcripts
            .iter()
            .flatten()
            .filter(|l| l["event"]["type"] == "approvalResolved")
            .map(|l| {
                (
                    l["event"]["approved"].as_bool().unwrap(),
                    l["event"]["decidedBy"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        decided.sort();
        assert_eq!(
            decided,
            [
                (false, "user".to_owned()),
                (true, "session_memory".to_owned()),
                (true, "user".to_owned()),
                (true, "user".to_owned()),
            ],
            "{variant:?}"
        );
    }
}
