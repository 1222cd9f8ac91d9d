//! Project rules through the session host, with no front end that answers approvals: a rule
//! in `.golem-forge/approvals.yaml` pre-approves a matching write (`decidedBy: rule` in
//! `approvalResolved` and in the transcript), a write it does not match is denied with the
//! headless message, and a blocked write stays blocked. A bad rules file fails the open with
//! the file, line and key; `/approvals` lists rules and forgets them from the file.

use std::path::PathBuf;

use golem_protocol::{
    ActionEvent, ApprovalScope, DecidedBy, DisplayEvent, SessionAction, ToolStatus,
};
use golem_runtime::approvals_file;
use golem_runtime::host::SessionHost;
use golem_session::TranscriptEntry;
use golem_testkit::mock::MockServer;
use golem_testkit::openai;
use serde_json::json;

use crate::scenario::Scenario;

const RULES: &str = "rules:\n  - tool: write_file\n    match:\n      path: {glob: /out/notes/**}\n  \
                     - tool: write_file\n    match:\n      path: {glob: /locked/**}\n";

/// A program with the `mock` provider at `server`, the zones `out` (writes ask) and `locked`
/// (writes blocked), and `rules` as its approvals file.
fn program(server: &MockServer, rules: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("golem-forge.config.yaml"),
        format!(
            "providers:\n  mock:\n    base_url: {}/v1\n",
            server.base_url
        ),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("out/notes")).unwrap();
    std::fs::create_dir(root.join("locked")).unwrap();
    std::fs::create_dir(root.join(".golem-forge")).unwrap();
    std::fs::write(root.join(".golem-forge/approvals.yaml"), rules).unwrap();
    let worker = root.join("main.worker");
    std::fs::write(
        &worker,
        "---\nname: main\nmodel: mock:m1\nsandbox:\n  zones:\n    - name: out\n      mode: rw\n      \
         approval: { create: ask, write: ask }\n    - name: locked\n      mode: rw\n      \
         approval: { create: blocked, write: blocked }\ntoolsets:\n  filesystem: {}\n---\nYou write.\n",
    )
    .unwrap();
    (dir, worker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_rule_approves_a_matching_write_and_not_others_nor_a_blocked_one() {
    let program = Scenario::new(vec![
        openai::tool_calls(&[
            (
                "call_1",
                "write_file",
                json!({"path": "/out/notes/a.md", "content": "kept\n"}),
            ),
            (
                "call_2",
                "write_file",
                json!({"path": "/out/b.md", "content": "no\n"}),
            ),
            (
                "call_3",
                "write_file",
                json!({"path": "/locked/c.md", "content": "no\n"}),
            ),
        ]),
        openai::text("Done."),
    ])
    .program(|server| program(server, RULES))
    .build()
    .await;
    // No front end answers approvals: anything asked is denied with the headless message.
    let mut s = program.start_headless();
    let session_id = s.id().to_owned();
    s.input("write");
    let (_, seen) = s.turn_ended().await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, DisplayEvent::ApprovalRequired(_))),
        "nobody is asked: {seen:#?}"
    );
    let resolved: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::ApprovalResolved(r) => {
                Some((r.tool_call_id.as_str(), r.approved, r.decided_by))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [
            ("call_1", true, DecidedBy::Rule),
            ("call_2", false, DecidedBy::Mode),
            ("call_3", false, DecidedBy::Policy),
        ]
    );
    let results: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::ToolResult {
                tool_call_id,
                status,
                value,
                ..
            } => Some((tool_call_id.as_str(), *status, value.to_model_text())),
            _ => None,
        })
        .collect();
    assert_eq!(results[0].1, ToolStatus::Success);
    assert_eq!(results[1].1, ToolStatus::Denied);
    assert!(
        results[1].2.contains("no terminal is attached"),
        "{results:?}"
    );
    assert_eq!(results[2].1, ToolStatus::Blocked);
    assert_eq!(
        std::fs::read_to_string(program.path("out/notes/a.md")).unwrap(),
        "kept\n"
    );
    assert!(!program.path("out/b.md").exists());
    assert!(!program.path("locked/c.md").exists());
    s.end().await;

    let transcript = program.transcript(&session_id);
    let decided: Vec<_> = transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::ToolCall(call) => Some((call.tool_call_id.as_str(), call.decided_by)),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("call_1", Some(DecidedBy::Rule)),
            ("call_2", Some(DecidedBy::Mode)),
            ("call_3", Some(DecidedBy::Policy)),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_rules_file_is_an_error_naming_the_file_line_and_key() {
    let program = Scenario::new(Vec::new())
        .program(|server| {
            program(
                server,
                "rules:\n  - tool: write_file\n    match:\n      path: {glob: out/**}\n",
            )
        })
        .build()
        .await;
    let Err(error) = SessionHost::open(program.options()) else {
        panic!("a bad rules file opens");
    };
    let text = error.to_string();
    let file = program.path(".golem-forge/approvals.yaml");
    assert!(
        text.starts_with(&format!("approvals file {}, line 4:", file.display())),
        "{text}"
    );
    assert!(text.contains("`rules[0].match.path`"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_lists_project_rules_and_forgets_them_from_the_file() {
    let program = Scenario::new(Vec::new())
        .program(|server| program(server, RULES))
        .build()
        .await;
    let mut s = program.start();
    s.send(ActionEvent::ListApprovals {
        request_id: Some("l".into()),
    });
    let (listed, _) = s
        .until(|e| matches!(e, DisplayEvent::ApprovalsRemembered { .. }))
        .await;
    let DisplayEvent::ApprovalsRemembered { approvals, .. } = listed else {
        unreachable!()
    };
    assert_eq!(approvals.len(), 2);
    assert_eq!(approvals[0].scope, ApprovalScope::Project);
    assert_eq!(
        approvals[0].args,
        json!({"path": {"glob": "/out/notes/**"}})
    );
    s.send(ActionEvent::ForgetApprovals {
        request_id: Some("f".into()),
        index: Some(1),
    });
    let forgot = s.action_result().await;
    assert_eq!(forgot.action, SessionAction::ForgetApprovals);
    assert!(forgot.ok, "{forgot:?}");
    let left = approvals_file::load(&approvals_file::approvals_path(program.dir.path())).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[0].match_json(),
        json!({"path": {"glob": "/locked/**"}})
    );
    s.end().await;
}
