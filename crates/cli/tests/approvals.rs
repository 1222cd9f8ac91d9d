//! Project approval rules from the command line: `golem-forge approvals` lists them and removes
//! them by number, `check` shows them, a bad rules file is an error naming the file, line and
//! key, and in a `run` with no one to answer approvals a rule pre-approves a matching write and
//! not another.

use golem_testkit::cli::TestEnv;

const RULES: &str = "rules:\n  - tool: write_file\n    match:\n      path: {glob: /notes/**}\n  \
                     - tool: shell\n    match:\n      command: git status\n";

fn program() -> TestEnv {
    let env = TestEnv::new();
    env.write("golem-forge.config.yaml", "model: test:default\n");
    env.mkdir("notes");
    env.write(
        "w.worker",
        "---\nname: w\nsandbox:\n  zones:\n    - { name: notes, mode: rw }\ntoolsets:\n  filesystem: {}\n---\nHi\n",
    );
    env
}

#[test]
fn approvals_lists_and_removes_rules_by_number() {
    let env = program();
    let out = env.run(&["approvals"]);
    assert_eq!(
        out,
        "no approval rules (.golem-forge/approvals.yaml has none)\n[exit status: 0]\n"
    );
    env.write(".golem-forge/approvals.yaml", RULES);
    let out = env.run(&["approvals", "list"]);
    assert_eq!(
        out,
        "  1. write_file {\"path\":{\"glob\":\"/notes/**\"}}\n  2. shell {\"command\":\"git status\"}\n\
         [exit status: 0]\n"
    );
    let out = env.run(&["approvals", "rm", "3"]);
    assert!(
        out.contains("Error: no approval rule number 3 (2 in"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    let out = env.run(&["approvals", "rm", "1"]);
    assert_eq!(
        out,
        "removed rule 1: write_file {\"path\":{\"glob\":\"/notes/**\"}}\n[exit status: 0]\n"
    );
    let out = env.run(&["approvals", "list"]);
    assert_eq!(
        out,
        "  1. shell {\"command\":\"git status\"}\n[exit status: 0]\n"
    );
    let file = env.read(".golem-forge/approvals.yaml").unwrap();
    assert!(file.starts_with("# Approvals remembered"), "{file}");
    assert!(!file.contains("write_file"), "{file}");
}

#[test]
fn check_shows_the_rules_and_a_bad_file_is_an_error_naming_it() {
    let env = program();
    env.write(".golem-forge/approvals.yaml", RULES);
    let out = env.run(&["check", "w.worker"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    assert!(
        out.contains(
            "Approval rules (.golem-forge/approvals.yaml)\n  1. write_file {\"path\":{\"glob\":\"/notes/**\"}}\n  2. shell"
        ),
        "{out}"
    );
    env.write(
        ".golem-forge/approvals.yaml",
        "rules:\n  - tool: write_file\n    match:\n      path: {glob: \"notes/**\"}\n",
    );
    for args in [
        &["check", "w.worker"][..],
        &["approvals"][..],
        &["run", "w.worker", "hi"][..],
    ] {
        let out = env.run(args);
        assert!(
            out.contains("approvals.yaml, line 4: `rules[0].match.path`"),
            "{args:?}: {out}"
        );
        assert!(out.ends_with("[exit status: 2]\n"), "{args:?}: {out}");
    }
}

/// `run --json` with no one to answer approvals: the rule pre-approves the matching write
/// (`decidedBy: rule` in `approvalResolved` and the transcript); the other write is denied with
/// the headless message.
#[test]
fn a_rule_pre_approves_a_matching_write_in_a_run_and_not_another() {
    use golem_testkit::Wire;
    use golem_testkit::mock::MockServer;
    use serde_json::{Value, json};

    let wire = Wire::OpenAi;
    let env = program();
    env.mkdir("out");
    env.write(
        "w.worker",
        "---\nname: w\nsandbox:\n  zones:\n    - { name: notes, mode: rw }\n    - { name: out, mode: rw }\n\
         toolsets:\n  filesystem: {}\n---\nHi\n",
    );
    env.write(".golem-forge/approvals.yaml", RULES);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            (
                "call_1",
                "write_file",
                json!({"path": "/notes/a.md", "content": "kept\n"}),
            ),
            (
                "call_2",
                "write_file",
                json!({"path": "/out/b.md", "content": "no\n"}),
            ),
        ]),
        wire.text("Done."),
    ]);
    let output = env
        .command()
        .args(["run", "w.worker", "write", "--json"])
        .args(["--model", golem_testkit::cli::model_for(wire)])
        .envs(golem_testkit::cli::provider_env(wire, &server))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let resolved: Vec<(&str, bool, &str)> = events
        .iter()
        .filter(|e| e["type"] == "approvalResolved")
        .map(|e| {
            (
                e["toolCallId"].as_str().unwrap(),
                e["approved"].as_bool().unwrap(),
                e["decidedBy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        resolved,
        [("call_1", true, "rule"), ("call_2", false, "mode")]
    );
    assert_eq!(env.read("notes/a.md").as_deref(), Some("kept\n"));
    assert!(env.read("out/b.md").is_none());
    let denied = events
        .iter()
        .find(|e| e["type"] == "toolResult" && e["toolCallId"] == "call_2")
        .unwrap();
    assert!(
        denied.to_string().contains(
            "approval needed for write_file but no terminal is attached (use --approval approve_all or auto_deny, or defer to let it wait in the inbox)"
        ),
        "{denied}"
    );
    let transcripts = env.transcripts(".");
    let calls: Vec<(&str, &str)> = transcripts[0]
        .iter()
        .filter(|line| line["kind"] == "toolCall")
        .map(|line| {
            (
                line["toolCallId"].as_str().unwrap(),
                line["decidedBy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(calls, [("call_1", "rule"), ("call_2", "mode")]);
}
