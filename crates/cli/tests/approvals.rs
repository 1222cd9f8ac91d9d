//! `golem-forge approvals` lists the project's rules and removes them by number, `check` shows
//! them, and a bad rules file is an error naming the file, line and key.

use crate::common::TestEnv;

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
