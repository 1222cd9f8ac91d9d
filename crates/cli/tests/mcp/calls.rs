//! Listing the workers and calling them: the tools (name, description, input schema,
//! annotations), a call's answer and structured result, its progress notifications, its
//! transcript; invalid input and an unknown tool; a run that fails; a client that cannot
//! answer approvals.

use serde_json::{Value, json};

use crate::harness::{
    HttpServer, Protocol, Transport, VARIANTS, WIRE, connection, reader, run_client, text_of, with,
    writer,
};
use golem_testkit::cli::Project;

/// Runs `call.py` with `calls` against a server for `workers` of `project` over `transport`;
/// returns the report and the server's stderr.
pub fn call(
    project: &Project,
    (transport, protocol): (Transport, Protocol),
    workers: &[&str],
    extra: &[&str],
    calls: Value,
    elicits: bool,
) -> (Value, String) {
    let server = (transport == Transport::Http).then(|| HttpServer::start(project, workers, extra));
    let config = with(
        connection(
            project,
            transport,
            protocol,
            workers,
            extra,
            server.as_ref(),
        ),
        json!({"calls": calls, "elicits": elicits}),
    );
    let run = run_client("call.py", config, project);
    let stderr = match server {
        Some(server) => {
            let (code, stderr) = server.stop();
            assert_eq!(code, Some(0), "the HTTP server exits cleanly:\n{stderr}");
            stderr
        }
        None => run.stderr,
    };
    assert_eq!(
        run.report["protocol"],
        protocol.version(),
        "{transport:?}/{protocol:?}"
    );
    (run.report, stderr)
}

#[test]
fn a_client_lists_the_workers_calls_one_and_gets_its_answer_progress_and_record() {
    for variant in VARIANTS {
        let project = Project::new(
            &[
                (
                    "main.worker",
                    writer("      approval: { create: preApproved }\n"),
                ),
                ("reader.worker", reader()),
            ],
            vec![
                WIRE.tool_calls(&[(
                    "call_1",
                    "write_file",
                    json!({"path": "/out/note.md", "content": "# Note\n"}),
                )]),
                WIRE.text("Wrote the note to /out/note.md."),
            ],
        );
        let (report, stderr) = call(
            &project,
            variant,
            &["main.worker", "reader.worker"],
            &[],
            json!([
                {"tool": "main", "arguments": {"input": "write a note", "instructions": "keep it short"}},
                {"tool": "main", "arguments": {"task": "write a note"}},
                {"tool": "main", "arguments": {"input": 42}},
                {"tool": "nobody", "arguments": {"input": "hello"}},
            ]),
            true,
        );

        // tools/list: one tool per worker, named and described after it.
        let tools = report["tools"].as_array().unwrap();
        let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["main", "reader"], "{variant:?}");
        let main = &tools[0];
        assert_eq!(main["description"], "Writes notes into its out zone");
        assert_eq!(main["inputSchema"]["required"], json!(["input"]));
        assert_eq!(
            main["inputSchema"]["properties"]["instructions"]["type"],
            "string"
        );
        assert_eq!(main["inputSchema"]["additionalProperties"], false);
        assert_eq!(main["annotations"]["readOnlyHint"], false, "{main}");
        assert_eq!(main["annotations"]["destructiveHint"], true, "{main}");
        assert_eq!(main["annotations"]["openWorldHint"], false, "{main}");
        assert_eq!(
            tools[1]["annotations"]["readOnlyHint"], true,
            "{}",
            tools[1]
        );
        assert!(main["outputSchema"]["properties"]["filesChanged"].is_object());

        // The call: the answer as text, the record as structured content.
        let first = &report["calls"][0];
        let result = &first["result"];
        assert_eq!(result["isError"], false, "{variant:?}: {first}");
        assert_eq!(text_of(result), "Wrote the note to /out/note.md.");
        let record = &result["structuredContent"];
        assert_eq!(record["worker"], "main");
        assert_eq!(record["status"], "completed");
        assert_eq!(record["answer"], "Wrote the note to /out/note.md.");
        assert_eq!(
            record["toolCalls"],
            json!([{"name": "write_file", "status": "success"}])
        );
        assert_eq!(record["filesChanged"], json!(["/out/note.md"]));
        assert_eq!(record["usage"]["inputTokens"], 20, "{record}");
        assert_eq!(record["usage"]["outputTokens"], 10, "{record}");
        assert_eq!(project.read("out/note.md").as_deref(), Some("# Note\n"));
        let body = project.model.requests()[0].body.to_string();
        assert!(
            body.contains("write a note\\n\\nInstructions for this task:\\nkeep it short"),
            "the instructions reach the worker: {body}"
        );

        // Progress: the tool call and the streamed answer, in order, counting up.
        let progress = first["progress"].as_array().unwrap();
        let messages: Vec<&str> = progress
            .iter()
            .map(|p| p["message"].as_str().unwrap_or(""))
            .collect();
        let started = messages.iter().position(|m| *m == "write_file: started");
        let ended = messages
            .iter()
            .position(|m| m.starts_with("write_file: success ("));
        assert!(
            started.is_some() && started < ended,
            "{variant:?}: {messages:?}"
        );
        let streamed: String = messages[ended.unwrap() + 1..].concat();
        assert_eq!(streamed, "Wrote the note to /out/note.md.", "{messages:?}");
        let values: Vec<f64> = progress
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");

        // The session's transcript, as for `run`; the record names it.
        let transcripts = project.transcripts();
        assert_eq!(
            transcripts.len(),
            1,
            "{variant:?}: one session per call that ran"
        );
        let started = transcripts[0]
            .iter()
            .find(|l| l["event"]["type"] == "sessionStarted")
            .unwrap();
        assert_eq!(
            record["sessionId"], started["event"]["sessionId"],
            "{started}"
        );
        let last = transcripts[0].last().unwrap();
        assert_eq!(
            (&last["kind"], &last["reason"]),
            (&json!("ended"), &json!("completed"))
        );
        assert!(
            stderr.contains("golem-forge mcp: main completed in"),
            "{variant:?}: {stderr}"
        );

        // Invalid input: an error result the model can act on, and no session.
        for (index, why) in [
            (1, "unknown argument `task`"),
            (2, "`input` must be a string"),
        ] {
            let result = &report["calls"][index]["result"];
            assert_eq!(result["isError"], true, "{variant:?}: {result}");
            assert!(text_of(result).contains(why), "{variant:?}: {result}");
        }
        // An unknown tool is a protocol error.
        let unknown = &report["calls"][3]["error"];
        assert_eq!(unknown["code"], -32602, "{variant:?}: {unknown}");
        assert!(
            unknown["message"]
                .as_str()
                .unwrap()
                .contains("unknown tool `nobody`"),
            "{unknown}"
        );
        assert_eq!(project.model.requests().len(), 2, "{variant:?}");
    }
}

#[test]
fn a_failing_run_is_an_error_result_and_the_server_goes_on() {
    for variant in [VARIANTS[0], VARIANTS[3]] {
        let project = Project::new(
            &[("main.worker", writer(""))],
            vec![
                golem_testkit::mock::Reply::json(
                    400,
                    r#"{"error": {"message": "the model refuses this request", "type": "invalid_request_error"}}"#,
                ),
                WIRE.text("Second time lucky."),
            ],
        );
        let (report, _) = call(
            &project,
            variant,
            &["main.worker"],
            &[],
            json!([
                {"tool": "main", "arguments": {"input": "try"}},
                {"tool": "main", "arguments": {"input": "try again"}},
            ]),
            true,
        );
        let failed = &report["calls"][0]["result"];
        assert_eq!(failed["isError"], true, "{variant:?}: {failed}");
        assert!(
            text_of(failed).contains("the model refuses this request"),
            "{variant:?}: {failed}"
        );
        assert_eq!(failed["structuredContent"]["status"], "failed");
        let next = &report["calls"][1]["result"];
        assert_eq!(next["isError"], false, "{variant:?}: {next}");
        assert_eq!(text_of(next), "Second time lucky.");
    }
}

#[test]
fn a_client_without_elicitation_is_denied_saying_why_and_approve_all_needs_no_asking() {
    for protocol in [Protocol::Handshake, Protocol::Discovery] {
        let write = |id: &str, path: &str| {
            WIRE.tool_calls(&[(id, "write_file", json!({"path": path, "content": "x"}))])
        };
        // The default: nobody can be asked, so the call that would ask is denied.
        let project = Project::new(
            &[("main.worker", writer(""))],
            vec![write("call_1", "/out/a.md"), WIRE.text("Could not write.")],
        );
        let (report, _) = call(
            &project,
            (Transport::Stdio, protocol),
            &["main.worker"],
            &[],
            json!([{"tool": "main", "arguments": {"input": "write a"}}]),
            false,
        );
        let record = &report["calls"][0]["result"]["structuredContent"];
        assert_eq!(
            record["toolCalls"],
            json!([{"name": "write_file", "status": "denied"}]),
            "{protocol:?}"
        );
        assert_eq!(project.read("out/a.md"), None);
        // The model is told why, and what changes it: nobody chose `auto_deny`.
        let results = WIRE.tool_results(&project.model.requests()[1]);
        let denial = &results[0].content;
        assert!(
            denial.contains(
                "[DENIED] write_file was denied: this MCP client cannot ask a person for approval"
            ),
            "{protocol:?}: {denial}"
        );
        for names in [
            "elicitation",
            "golem-forge mcp --approval approve_all",
            "--approval defer",
        ] {
            assert!(denial.contains(names), "{protocol:?}: {names}: {denial}");
        }
        assert!(!denial.contains("auto_deny"), "{protocol:?}: {denial}");
        assert!(!denial.contains("terminal"), "{protocol:?}: {denial}");

        // --approval approve_all decides for every client: nothing is asked.
        let project = Project::new(
            &[("main.worker", writer(""))],
            vec![write("call_1", "/out/b.md"), WIRE.text("Wrote b.")],
        );
        let (report, _) = call(
            &project,
            (Transport::Stdio, protocol),
            &["main.worker"],
            &["--approval", "approve_all"],
            json!([{"tool": "main", "arguments": {"input": "write b"}, "answers": []}]),
            true,
        );
        let call = &report["calls"][0];
        assert_eq!(call["elicitations"], json!([]), "{protocol:?}: {call}");
        assert_eq!(project.read("out/b.md").as_deref(), Some("x"));
    }
}

#[test]
fn a_worker_with_an_output_schema_lists_it_and_returns_the_value_as_structured_content() {
    let schema = json!({"type": "object", "properties": {"verdict": {"enum": ["ok", "bad"]}},
                        "required": ["verdict"]});
    let project = Project::new(
        &[(
            "judge.worker",
            crate::harness::worker("judge", "Judges", &format!("output:\n  schema: {schema}\n")),
        )],
        vec![WIRE.text(r#"{"verdict": "bad"}"#)],
    );
    let (report, _) = call(
        &project,
        VARIANTS[0],
        &["judge.worker"],
        &[],
        json!([{"tool": "judge", "arguments": {"input": "judge this"}}]),
        true,
    );
    let tool = &report["tools"][0];
    assert_eq!(
        tool["outputSchema"]["properties"]["output"], schema,
        "{tool}"
    );
    assert!(tool["outputSchema"]["properties"]["toolCalls"].is_object());
    let result = &report["calls"][0]["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["output"],
        json!({"verdict": "bad"})
    );
    assert_eq!(result["structuredContent"]["status"], "completed");
    assert_eq!(text_of(result), r#"{"verdict": "bad"}"#);
}

#[test]
fn with_defer_a_call_that_would_ask_parks_in_the_inbox_and_the_client_is_told() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![WIRE.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.md", "content": "x"}),
        )])],
    );
    let (report, _) = call(
        &project,
        (Transport::Stdio, Protocol::Handshake),
        &["main.worker"],
        &["--approval", "defer"],
        json!([{"tool": "main", "arguments": {"input": "write a"}}]),
        false,
    );
    let result = &report["calls"][0]["result"];
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("is parked") && text.contains("inbox"),
        "the client is told where the call waits: {text}"
    );
    assert_eq!(result["structuredContent"]["status"], "waitingApproval");
    assert_eq!(project.read("out/a.md"), None);
    assert_eq!(
        project.model.requests().len(),
        1,
        "nothing went back to the model"
    );
    let entry = project
        .read(".golem-forge/inbox/1.json")
        .expect("one parked call");
    assert!(entry.contains("\"write_file\""), "{entry}");
}
