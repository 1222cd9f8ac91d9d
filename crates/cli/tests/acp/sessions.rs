//! Sessions driven by the editor: the handshake and a prompt whose answer streams (with an
//! attached file and a mentioned one in its input), the commands advertised, a cancel in the
//! middle of a turn, a recorded session loaded in a new process, and the editor's own MCP
//! server, whose tool runs through the gate.

use serde_json::json;

use crate::harness::{WIRE, writer};
use crate::harness::{
    call_updates, editor, message_text, new_session_then, project_dir, prompt, result, updates,
};
use golem_testkit::cli::Project;

#[test]
fn the_handshake_and_a_prompt_that_streams_with_attached_files() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![WIRE.text("Hello from the worker.")],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(
            &project,
            json!([{"op": "prompt", "blocks": [
                {"text": "summarise"},
                {"link": {"name": "plan.md", "uri": "file:///work/plan.md"}},
                {"embedded": {"uri": "file:///work/notes.md", "text": "line one\n"}},
            ]}]),
        ),
    );
    let init = result(&report, 0);
    assert_eq!(init["protocolVersion"], 1, "{report:#}");
    assert_eq!(init["agentInfo"]["name"], "golem-forge");
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    let session = result(&report, 1)["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(result(&report, 2)["stopReason"], "end_turn", "{report:#}");

    // Streamed as chunks, more than one, that add up to the answer.
    let chunks = updates(&report, "agent_message_chunk");
    assert!(chunks.len() > 1, "{report:#}");
    assert_eq!(message_text(&report), "Hello from the worker.");
    assert!(chunks.iter().all(|u| u["_session"] == session.as_str()));

    // The commands: the session's own, and how much context the turn used.
    let commands = updates(&report, "available_commands_update");
    let names: Vec<&str> = commands[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["clear", "compact", "undo", "model", "status"] {
        assert!(names.contains(&name), "{names:?}");
    }
    assert_eq!(updates(&report, "usage_update").len(), 1, "{report:#}");

    // The input the model got: the words, the mention, and the attachment with its path.
    let sent = project.model.requests()[0].body.to_string();
    assert!(
        sent.contains("summarise @plan.md (/work/plan.md)"),
        "{sent}"
    );
    assert!(
        sent.contains(r#"<attachment path=\"/work/notes.md\">\nline one\n</attachment>"#),
        "{sent}"
    );
    // The session is ours: its transcript is under the project.
    assert_eq!(project.transcripts().len(), 1);
}

#[test]
fn a_cancel_while_the_editor_is_asked_stops_the_turn_as_cancelled() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![WIRE.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "x\n"}),
        )])],
    );
    project.model.set_fallback(WIRE.text("Stopped as asked."));
    let report = editor(
        &project,
        &[],
        new_session_then(
            &project,
            json!([{"op": "prompt", "blocks": [{"text": "save"}], "cancelOnPermission": true}]),
        ),
    );
    assert_eq!(result(&report, 2)["stopReason"], "cancelled", "{report:#}");
    assert!(project.read("out/a.txt").is_none());
    let seen = call_updates(&report, "call_1");
    assert_eq!(seen.last().unwrap()["status"], "failed", "{seen:#?}");
}

#[test]
fn a_recorded_session_loads_in_a_new_process_and_goes_on() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![
            WIRE.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/out/a.txt", "content": "first\n"}),
            )]),
            WIRE.text("First answer."),
            WIRE.text("Second answer."),
        ],
    );
    let first = editor(
        &project,
        &[],
        new_session_then(&project, json!([prompt("first question", &["allow_once"])])),
    );
    let session = result(&first, 1)["sessionId"].as_str().unwrap().to_owned();

    let second = editor(
        &project,
        &[],
        json!([
            {"op": "initialize"},
            {"op": "load", "cwd": project_dir(&project), "sessionId": session},
            prompt("second question", &[]),
            {"op": "load", "cwd": project_dir(&project), "sessionId": "20990101-000000-none"},
        ]),
    );
    result(&second, 1);
    // The history, told again before the load answered: the question, the call, the answer.
    let users = updates(&second, "user_message_chunk");
    assert_eq!(users[0]["content"]["text"], "first question", "{second:#}");
    let call = &call_updates(&second, "call_1")[0];
    assert_eq!(call["sessionUpdate"], "tool_call");
    assert_eq!(call["status"], "completed");
    assert!(
        message_text(&second).starts_with("First answer."),
        "{second:#}"
    );
    // The conversation goes on from there: the model sees the first turn.
    assert_eq!(result(&second, 2)["stopReason"], "end_turn");
    let sent = project.model.requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("first question") && sent.contains("First answer."),
        "{sent}"
    );
    assert!(
        message_text(&second).ends_with("Second answer."),
        "{second:#}"
    );
    // A session that does not exist is an error.
    assert!(second["steps"][3]["error"].is_object(), "{second:#}");
    assert_eq!(
        project.transcripts().len(),
        1,
        "the same transcript, continued"
    );
}

#[test]
fn the_editors_mcp_server_gives_a_tool_that_runs_through_the_gate() {
    let everything = golem_testkit::mcp_servers::package("server-everything");
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![
            WIRE.tool_calls(&[("call_1", "everything__echo", json!({"message": "hi there"}))]),
            WIRE.text("Echoed."),
        ],
    );
    let report = editor(
        &project,
        &[],
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": project_dir(&project), "mcpServers": [
                {"name": "everything", "command": "node",
                 "args": [everything.display().to_string(), "stdio"]}
            ]},
            prompt("echo", &["allow_once"]),
        ]),
    );
    assert_eq!(result(&report, 2)["stopReason"], "end_turn", "{report:#}");
    // Asked, as every tool of the editor's servers is.
    let asked = report["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{report:#}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "call_1");
    let seen = call_updates(&report, "call_1");
    let last = seen.last().unwrap();
    assert_eq!(last["status"], "completed", "{seen:#?}");
    assert!(last["content"].to_string().contains("hi there"), "{last:#}");
}

/// A priced model (per million tokens), so that usage updates carry a cost.
fn priced(project: &Project) {
    let config = project.read("golem-forge.config.yaml").unwrap_or_default();
    project.env.write(
        "proj/golem-forge.config.yaml",
        &format!(
            "{config}prices:\n  \"{}\": {{ input: 1000, output: 2000 }}\n",
            golem_testkit::cli::model_for(WIRE)
        ),
    );
}

/// The costs of the usage updates, in order.
fn costs(report: &serde_json::Value) -> Vec<f64> {
    updates(report, "usage_update")
        .iter()
        .filter_map(|u| u["cost"]["amount"].as_f64())
        .collect()
}

#[test]
fn results_are_readable_and_a_loaded_session_shows_them_as_live_with_its_whole_cost() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![
            WIRE.tool_calls(&[("call_1", "read_file", json!({"path": "/out/about.txt"}))]),
            WIRE.tool_calls(&[(
                "call_2",
                "write_file",
                json!({"path": "/out/a.txt", "content": "new\n"}),
            )]),
            WIRE.text("Done."),
            WIRE.text("Again."),
        ],
    );
    priced(&project);
    project
        .env
        .write("proj/out/about.txt", "Golem Forge\nruns workers\n");
    let first = editor(
        &project,
        &[],
        new_session_then(
            &project,
            json!([prompt("read, then save", &["allow_once"])]),
        ),
    );
    assert_eq!(result(&first, 2)["stopReason"], "end_turn", "{first:#}");
    let session = result(&first, 1)["sessionId"].as_str().unwrap().to_owned();
    let host = |rel: &str| {
        project
            .env
            .path()
            .join("proj/out")
            .join(rel)
            .display()
            .to_string()
    };

    // Live: the file's text in a block with its language, nothing appended; the value raw.
    let read = call_updates(&first, "call_1");
    let read_end = read.last().unwrap();
    assert_eq!(read_end["status"], "completed", "{read:#?}");
    assert_eq!(
        read_end["content"],
        json!([{"type": "content", "content": {"type": "text",
                "text": "```txt\nGolem Forge\nruns workers\n```"}}]),
        "{read:#?}"
    );
    assert_eq!(read_end["rawOutput"]["kind"], "file_content");
    assert_eq!(
        read_end["rawOutput"]["data"]["content"],
        "Golem Forge\nruns workers\n"
    );
    assert_eq!(read[0]["locations"][0]["path"], host("about.txt").as_str());
    let write_live = call_updates(&first, "call_2");
    let write_end = write_live.last().unwrap();
    assert_eq!(write_end["content"][0]["type"], "diff", "{write_live:#?}");
    assert_eq!(
        write_end["locations"],
        json!([{"path": host("a.txt"), "line": 1}])
    );
    let live = costs(&first);
    assert_eq!(live.len(), 3, "{first:#}");
    let per_call = live[0];
    assert!(per_call > 0.0, "{live:?}");

    let second = editor(
        &project,
        &[],
        json!([
            {"op": "initialize"},
            {"op": "load", "cwd": project_dir(&project), "sessionId": session},
            prompt("again", &[]),
        ]),
    );
    assert_eq!(result(&second, 2)["stopReason"], "end_turn", "{second:#}");
    // Told again with the same content kinds: the read as its block, the write as its diff.
    let read_again = &call_updates(&second, "call_1")[0];
    assert_eq!(read_again["content"], read_end["content"], "{second:#}");
    assert_eq!(read_again["rawOutput"], read_end["rawOutput"]);
    let write_again = &call_updates(&second, "call_2")[0];
    assert_eq!(write_again["status"], "completed", "{second:#}");
    assert_eq!(
        write_again["content"],
        json!([{"type": "diff", "path": host("a.txt"), "newText": "new\n"}]),
        "{second:#}"
    );
    assert_eq!(write_again["locations"], write_end["locations"]);
    // The cost goes on from the session's total, rounded (four calls of the same price).
    let after = costs(&second);
    assert_eq!(after.len(), 1, "{second:#}");
    let want = ((live[2] + per_call) * 1e6).round() / 1e6;
    assert_eq!(after[0], want, "live {live:?}, after the load {after:?}");
    assert!(
        after[0] > live[2],
        "live {live:?}, after the load {after:?}"
    );
    for cost in live.iter().chain(&after) {
        let shown = cost.to_string();
        let decimals = shown.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 6, "{shown} is not rounded");
    }
}
