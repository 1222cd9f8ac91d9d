//! Consent for effects, end to end: what `run_code` and `shell` change in a zone waits in a
//! copy-on-write layer and reaches the zone only through the zone's approval table (pre-approved
//! → applied; ask → one request with the diff, denied without a terminal; blocked or protected →
//! the whole changeset refused), and the result lists what was applied.

use super::*;
use crate::chat::{ANSWER, Chat, NOTE};

/// The worker `main` with the rw zone `out` (its `approval:` as given, YAML flow mapping or
/// nothing) and `toolsets` (YAML lines under `toolsets:`).
fn gated_worker(approval: &str, toolsets: &str) -> String {
    let approval = match approval {
        "" => String::new(),
        table => format!("      approval: {table}\n"),
    };
    worker(
        "main",
        &format!(
            "sandbox:\n  zones:\n    - name: out\n      mode: rw\n{approval}toolsets:\n{toolsets}"
        ),
    )
}

const CODE: &str = "  code: {}\n";

/// A model that runs `code` (bash) once, then answers.
fn bash_once(wire: Wire, code: &str) -> Vec<Reply> {
    vec![
        wire.tool_calls(&[(
            "call_1",
            "run_code",
            json!({"language": "bash", "code": code}),
        )]),
        wire.text("Done."),
    ]
}

/// The zone `out` with `keep.txt` and `old.txt` in it.
fn seeded(env: &TestEnv, approval: &str, toolsets: &str) {
    project(env, &[("main.worker", gated_worker(approval, toolsets))]);
    env.write("proj/out/keep.txt", "keep\n");
    env.write("proj/out/old.txt", "old\n");
}

/// Every file under `proj/out`, with its content, sorted.
pub(crate) fn zone_files(env: &TestEnv) -> Vec<(String, String)> {
    let root = env.path().join("proj/out");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(&root).unwrap().display().to_string();
                files.push((name, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

const SCRIPT: &str =
    "echo new > new.txt; echo changed > old.txt; mkdir -p sub; echo deep > sub/d.txt";

#[test]
fn a_pre_approved_zone_takes_the_changes_at_once_and_the_result_lists_them() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    seeded(&env, "{ create: preApproved, write: preApproved }", CODE);
    let server = MockServer::start_blocking(bash_once(wire, SCRIPT));
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    assert_eq!(
        zone_files(&env),
        [
            ("keep.txt".into(), "keep\n".into()),
            ("new.txt".into(), "new\n".into()),
            ("old.txt".into(), "changed\n".into()),
            ("sub/d.txt".into(), "deep\n".into()),
        ]
    );
    let events = events(&output);
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["status"], "success", "{result}");
    let files = result["value"]["data"]["changes"]["data"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"));
    let changes: Vec<&str> = files
        .iter()
        .map(|f| f["change"].as_str().unwrap())
        .collect();
    assert!(
        changes.iter().any(|c| c.starts_with("create /out/new.txt")),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.starts_with("write /out/old.txt")),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.starts_with("create /out/sub ")),
        "{changes:?}"
    );
    // The model is told what reached the zone.
    let text = &results_sent(wire, &server, 1)[0].content;
    assert!(text.contains("changes applied to the zones"), "{text}");
    assert!(text.contains("write /out/old.txt"), "{text}");
    // No question was asked: every change was pre-approved.
    assert_eq!(of_type(&events, "approvalRequired").len(), 0);
}

#[test]
fn an_asking_zone_is_unchanged_when_no_one_can_approve_and_changed_when_all_is_approved() {
    let wire = Wire::Anthropic;
    for (flags, applied) in [(&[][..], false), (&["--approval", "approve_all"][..], true)] {
        let env = TestEnv::new();
        seeded(&env, "{ create: preApproved, write: ask }", CODE);
        let before = zone_files(&env);
        assert_eq!(before.len(), 2);
        let server = MockServer::start_blocking(bash_once(wire, SCRIPT));
        let mut args = vec!["proj/main.worker", "go", "--json"];
        args.extend_from_slice(flags);
        let output = run(&env, wire, &server, &args);
        assert_exit(&output, 0);
        let events = events(&output);
        // The call itself is pre-approved (it is jailed); its changes are one decision.
        let resolved = of_type(&events, "approvalResolved");
        assert_eq!(resolved.len(), 2, "{flags:?}: {resolved:?}");
        assert_eq!(resolved[0]["decidedBy"], "policy");
        assert_eq!(resolved[1]["decidedBy"], "mode");
        assert_eq!(resolved[1]["approved"], applied);
        assert_eq!(resolved[1]["toolCallId"], "call_1");
        let result = of_type(&events, "toolResult")[0];
        let text = &results_sent(wire, &server, 1)[0].content;
        if applied {
            assert_eq!(result["status"], "success", "{result}");
            assert_eq!(zone_files(&env).len(), 4);
        } else {
            assert_eq!(result["status"], "denied", "{result}");
            assert_eq!(zone_files(&env), before, "byte for byte unchanged");
            assert!(text.contains("no terminal is attached"), "{text}");
            assert!(text.contains("Discarded"), "{text}");
            assert!(text.contains("write /out/old.txt"), "{text}");
        }
    }
}

#[test]
fn a_blocked_operation_refuses_the_whole_changeset() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    seeded(
        &env,
        "{ create: preApproved, write: preApproved, delete: blocked }",
        CODE,
    );
    let before = zone_files(&env);
    let server = MockServer::start_blocking(bash_once(wire, "echo new > new.txt; rm old.txt"));
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    assert_eq!(zone_files(&env), before, "not even the pre-approved file");
    let events = events(&output);
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["status"], "blocked", "{result}");
    let text = &results_sent(wire, &server, 1)[0].content;
    assert!(text.contains("delete /out/old.txt"), "{text}");
}

#[test]
fn protected_files_are_refused_from_jailed_code_in_a_pre_approved_zone() {
    let wire = Wire::Anthropic;
    for target in [
        ".git/config",
        ".git/hooks/post-checkout",
        ".git/commondir",
        "sub/.git/config",
        ".golem-forge/approvals.yaml",
        "golem-forge.config.yaml",
        "main.worker",
    ] {
        let env = TestEnv::new();
        seeded(
            &env,
            "{ create: preApproved, write: preApproved, delete: preApproved }",
            CODE,
        );
        env.write("proj/out/.git/HEAD", "ref: refs/heads/main\n");
        let before = zone_files(&env);
        let script = format!(
            "echo fine > fine.txt; mkdir -p \"$(dirname '{target}')\"; echo planted > '{target}'"
        );
        let server = MockServer::start_blocking(bash_once(wire, &script));
        let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
        assert_exit(&output, 0);
        assert_eq!(zone_files(&env), before, "{target}: the zone is unchanged");
        let events = events(&output);
        let result = of_type(&events, "toolResult")[0];
        assert_eq!(result["status"], "blocked", "{target}: {result}");
        let text = &results_sent(wire, &server, 1)[0].content;
        assert!(text.contains("protected"), "{target}: {text}");
    }
}

#[test]
fn shell_commands_pass_the_same_gate() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    seeded(
        &env,
        "{ create: ask }",
        "  shell:\n    rules:\n      - { pattern: \"touch \", approval: preApproved }\n",
    );
    let before = zone_files(&env);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "shell", json!({"command": "touch made.txt"}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    assert_eq!(
        zone_files(&env),
        before,
        "the command ran; its file did not land"
    );
    let events = events(&output);
    let resolved = of_type(&events, "approvalResolved");
    assert_eq!(resolved.len(), 2, "{resolved:?}");
    assert_eq!(resolved[1]["approved"], false);
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["status"], "denied", "{result}");
    let text = &results_sent(wire, &server, 1)[0].content;
    assert!(text.contains("create /out/made.txt"), "{text}");
}

/// The last line of a box with nothing to edit.
const CHOICES_WITHOUT_EDIT: &str =
    "[y] yes  [s] session  [p] always in this project  [n] no  [q] stop";

/// `golem-forge run … --approval interactive` of the gated worker in the pseudo-terminal,
/// until the box for the run's changes is shown; returns the run and the box.
fn asked_at_a_terminal(env: &TestEnv, wire: Wire, server: &MockServer) -> (Chat, String) {
    let envs: Vec<(&str, String)> = provider_env(wire, server).into_iter().collect();
    let args = [
        "run",
        "proj/main.worker",
        "go",
        "--approval",
        "interactive",
        "--model",
        model_for(wire),
    ];
    let mut pty = Chat::start(env, &args, &envs);
    pty.wait_for(CHOICES_WITHOUT_EDIT);
    pty.wait_prompt_text(ANSWER);
    let shown = pty.history();
    let start = shown
        .find("┌ Approve")
        .unwrap_or_else(|| panic!("no approval box:\n{shown}"));
    let end = shown[start..].find(CHOICES_WITHOUT_EDIT).unwrap() + CHOICES_WITHOUT_EDIT.len();
    let shown_box = shown[start..start + end].to_owned();
    (pty, shown_box)
}

#[test]
fn at_a_terminal_one_box_shows_the_real_diff_and_the_answer_decides() {
    let wire = Wire::Anthropic;
    for (answer, applied) in [("y", true), ("n", false)] {
        let env = TestEnv::new();
        seeded(&env, "{ create: preApproved, write: ask }", CODE);
        let before = zone_files(&env);
        let server = MockServer::start_blocking(bash_once(wire, SCRIPT));
        let (mut pty, shown_box) = asked_at_a_terminal(&env, wire, &server);
        for expected in [
            "Approve run_code?",
            "run_code changed 4 files in /out",
            "/out/old.txt",
            "old",
            "changed",
            "/out/new.txt",
        ] {
            assert!(shown_box.contains(expected), "{expected}:\n{shown_box}");
        }
        assert_eq!(zone_files(&env), before, "nothing lands before the answer");
        pty.send(answer);
        if answer == "n" {
            pty.wait_prompt_text(NOTE);
            pty.send_line("");
        }
        pty.wait_for("Done.");
        assert_eq!(pty.wait_exit(LIMIT), 0, "{}", pty.dump());
        if applied {
            assert_eq!(zone_files(&env).len(), 4);
            assert_eq!(env.read("proj/out/old.txt").as_deref(), Some("changed\n"));
        } else {
            assert_eq!(zone_files(&env), before, "denied: byte for byte unchanged");
            let text = &results_sent(wire, &server, 1)[0].content;
            assert!(
                text.contains("The user denied run_code's changes"),
                "{text}"
            );
        }
    }
}

/// A module whose `note` tool writes a file into the zone and whose `count` only reads.
const NOTE_MODULE: &str = r#"
import os


def note(name: str, text: str) -> str:
    """Writes a note into /out."""
    with open("/out/" + name, "w") as f:
        f.write(text)
    return "noted " + name


def count() -> str:
    """Counts the files in /out."""
    return str(len(os.listdir("/out")))
"#;

#[test]
fn a_custom_tools_writes_pass_the_gate_and_its_process_starts_again() {
    let wire = Wire::OpenAi;
    for (flags, applied) in [(&[][..], false), (&["--approval", "approve_all"][..], true)] {
        let env = TestEnv::new();
        let toolsets =
            "  custom:\n    module: ./tools.py\n    approval: { default: preApproved }\n";
        seeded(&env, "{ create: ask }", toolsets);
        env.write("proj/tools.py", NOTE_MODULE);
        let before = zone_files(&env);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_1", "note", json!({"name": "n.txt", "text": "hi"}))]),
            wire.tool_calls(&[("call_2", "count", json!({}))]),
            wire.text("Done."),
        ]);
        let mut args = vec!["proj/main.worker", "go", "--json"];
        args.extend_from_slice(flags);
        let output = run(&env, wire, &server, &args);
        assert_exit(&output, 0);
        let noted = &results_sent(wire, &server, 1)[0];
        // The next call runs in a fresh process, which sees the zone as it now is.
        let sent = results_sent(wire, &server, 2);
        let counted = sent
            .iter()
            .find(|result| result.tool_call_id == "call_2")
            .unwrap_or_else(|| panic!("{sent:?}"));
        if applied {
            assert_eq!(noted.content, "noted n.txt");
            assert_eq!(env.read("proj/out/n.txt").as_deref(), Some("hi"));
            assert_eq!(counted.content, "3", "{counted:?}");
        } else {
            assert!(wire.is_error(noted), "{noted:?}");
            assert!(noted.content.contains("create /out/n.txt"), "{noted:?}");
            assert_eq!(zone_files(&env), before, "byte for byte unchanged");
            assert_eq!(counted.content, "2", "{counted:?}");
        }
    }
}

#[test]
fn a_custom_tool_cannot_plant_protected_files() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let toolsets = "  custom:\n    module: ./tools.py\n    approval: { default: preApproved }\n";
    seeded(
        &env,
        "{ create: preApproved, write: preApproved }",
        toolsets,
    );
    env.write("proj/tools.py", NOTE_MODULE);
    env.write("proj/out/.git/HEAD", "ref: refs/heads/main\n");
    let before = zone_files(&env);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "note",
            json!({"name": ".git/config", "text": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}),
        )]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 0);
    assert_eq!(zone_files(&env), before);
    let result = &results_sent(wire, &server, 1)[0];
    assert!(wire.is_error(result), "{result:?}");
    assert!(result.content.contains("protected"), "{result:?}");
}
