//! Approvals as the editor's permission dialog: a write asks with its diff and is allowed once;
//! allowed for the session, the same call is not asked again; allowed for the project, a rule
//! is written; rejected, nothing is written, the model is told the user denied it and the editor
//! shows that sentence once; a switched
//! mode decides without asking.

use serde_json::{Value, json};

use crate::harness::{WIRE, writer};
use crate::harness::{call_updates, editor, message_text, new_session_then, prompt, result};
use golem_testkit::cli::Project;

fn write(id: &str, content: &str) -> golem_testkit::mock::Reply {
    WIRE.tool_calls(&[(
        id,
        "write_file",
        json!({"path": "/out/a.txt", "content": content}),
    )])
}

#[test]
fn a_write_asks_with_its_diff_and_allowed_once_it_is_written() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![write("call_1", "hello\n"), WIRE.text("Saved.")],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(&project, json!([prompt("save it", &["allow_once"])])),
    );
    assert_eq!(result(&report, 2)["stopReason"], "end_turn", "{report:#}");
    assert_eq!(project.read("out/a.txt").as_deref(), Some("hello\n"));
    let host_path = project
        .env
        .path()
        .join("proj/out/a.txt")
        .display()
        .to_string();

    // Asked once: the call with its kind, where it writes and the diff, and the four options.
    let asked = report["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{report:#}");
    let call = &asked[0]["toolCall"];
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["locations"][0]["path"], host_path.as_str());
    assert_eq!(
        call["content"][0],
        json!({"type": "diff", "path": host_path, "newText": "hello\n"})
    );
    let options: Vec<(&str, &str)> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_session", "allow_always"),
            ("allow_project", "allow_always"),
            ("reject_once", "reject_once"),
        ]
    );

    // The call as the editor saw it: announced pending with the diff, then completed.
    let seen = call_updates(&report, "call_1");
    assert_eq!(seen[0]["sessionUpdate"], "tool_call", "{seen:#?}");
    // `pending` is the default status, which the SDK leaves out.
    assert_eq!(seen[0]["status"].as_str().unwrap_or("pending"), "pending");
    assert_eq!(seen[0]["content"][0]["type"], "diff");
    let last = seen.last().unwrap();
    assert_eq!(last["sessionUpdate"], "tool_call_update");
    assert_eq!(last["status"], "completed", "{seen:#?}");
    assert!(message_text(&report).contains("Saved."), "{report:#}");
}

#[test]
fn allowed_for_the_session_the_same_call_is_not_asked_again() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![
            write("call_1", "same\n"),
            WIRE.text("Saved once."),
            write("call_2", "same\n"),
            WIRE.text("Saved twice."),
        ],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(
            &project,
            json!([
                prompt("save", &["allow_session"]),
                prompt("save again", &[])
            ]),
        ),
    );
    assert_eq!(result(&report, 3)["stopReason"], "end_turn", "{report:#}");
    assert_eq!(
        report["permissions"].as_array().unwrap().len(),
        1,
        "{report:#}"
    );
    let second = call_updates(&report, "call_2");
    assert_eq!(second.last().unwrap()["status"], "completed", "{second:#?}");
}

#[test]
fn allowed_for_the_project_a_rule_is_written() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![write("call_1", "kept\n"), WIRE.text("Saved.")],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(&project, json!([prompt("save", &["allow_project"])])),
    );
    assert_eq!(result(&report, 2)["stopReason"], "end_turn", "{report:#}");
    let rules = project
        .read(".golem-forge/approvals.yaml")
        .expect("the project's approvals file");
    assert!(
        rules.contains("write_file") && rules.contains("/out/a.txt"),
        "{rules}"
    );
}

#[test]
fn rejected_nothing_is_written_and_the_denial_is_one_sentence_said_once() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![write("call_1", "no\n"), WIRE.text("Understood.")],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(&project, json!([prompt("save", &["reject_once"])])),
    );
    assert_eq!(result(&report, 2)["stopReason"], "end_turn", "{report:#}");
    assert!(project.read("out/a.txt").is_none());
    let seen = call_updates(&report, "call_1");
    let last = seen.last().unwrap();
    assert_eq!(last["status"], "failed", "{seen:#?}");
    // The editor shows the denial as one sentence, said once, with no JSON after it.
    assert_eq!(
        last["content"],
        json!([{"type": "content", "content": {"type": "text",
                "text": "The user denied write_file: rejected in the editor"}}]),
        "{seen:#?}"
    );
    assert_eq!(last["rawOutput"]["kind"], "tool_error");
    // The model's second request carries the declined call's result.
    let requests = project.model.requests();
    let told = requests.last().unwrap().body.to_string();
    assert!(
        told.contains("The user denied write_file: rejected in the editor"),
        "{told}"
    );
    assert_eq!(told.matches("The user").count(), 1, "{told}");
}

#[test]
fn a_mode_switched_in_the_editor_decides_without_asking_and_status_says_so() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![write("call_1", "auto\n"), WIRE.text("Saved.")],
    );
    let report = editor(
        &project,
        &[],
        new_session_then(
            &project,
            json!([
                {"op": "set_mode", "mode": "approve_all"},
                prompt("save", &[]),
                prompt("/status", &[]),
                {"op": "set_mode", "mode": "yolo"},
            ]),
        ),
    );
    let modes = &result(&report, 1)["modes"];
    assert_eq!(modes["currentModeId"], "interactive", "{report:#}");
    let ids: Vec<&Value> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(ids, ["interactive", "approve_all", "auto_deny"]);
    assert_eq!(result(&report, 3)["stopReason"], "end_turn", "{report:#}");
    assert!(
        report["permissions"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    assert_eq!(project.read("out/a.txt").as_deref(), Some("auto\n"));
    assert!(
        message_text(&report).contains("approval mode: approve_all"),
        "{report:#}"
    );
    assert_eq!(report["steps"][5]["error"]["code"], -32602, "{report:#}");
}
