//! Undo from the command line: `sessions undo` puts back what a turn's `write_file` and
//! `run_code` changeset did, byte for byte, and notes it in the transcript for the resumed
//! model; a file edited outside the session since is a conflict (listed, nothing changed)
//! until `--force`; a turn past the size cap says at once that it cannot be undone.

use super::*;
use crate::run::changes::zone_files;
use crate::run::transcript::only_session_id;

/// `main` with the pre-approved rw zone `out`, the filesystem tools and `run_code`.
fn undo_worker() -> String {
    worker(
        "main",
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { create: \
         preApproved, write: preApproved, delete: preApproved }\ntoolsets:\n  filesystem: {}\n  \
         code: {}\n",
    )
}

/// One turn: `write_file` of `out/a.txt`, then a bash run that creates, changes and deletes.
fn busy_turn(wire: Wire) -> Vec<Reply> {
    vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "new a\n"}),
        )]),
        wire.tool_calls(&[(
            "call_2",
            "run_code",
            json!({"language": "bash", "code": "echo made > made.txt; echo changed > old.txt; rm gone.txt; mkdir -p sub; echo deep > sub/d.txt"}),
        )]),
        wire.text("Done."),
    ]
}

/// The project, its zone seeded; returns the zone as it was.
fn seeded(env: &TestEnv) -> Vec<(String, String)> {
    project(env, &[("main.worker", undo_worker())]);
    env.write("proj/out/a.txt", "old a\n");
    env.write("proj/out/old.txt", "old\n");
    env.write("proj/out/gone.txt", "gone\n");
    zone_files(env)
}

/// Runs the busy turn as a session of its own; its id and the run's output.
fn busy_session(env: &TestEnv) -> (String, Output) {
    let wire = Wire::Anthropic;
    let server = MockServer::start_blocking(busy_turn(wire));
    let output = run(env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    (only_session_id(env), output)
}

/// Checks that `output` ended with `code` and said `needle` on stderr.
fn refused(output: &Output, code: i32, needle: &str) {
    assert_exit(output, code);
    assert!(stderr(output).contains(needle), "{}", stderr(output));
}

fn sessions_undo(env: &TestEnv, args: &[&str]) -> Output {
    env.command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "undo"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn sessions_undo_puts_back_a_write_and_a_changeset_and_tells_the_model() {
    let env = TestEnv::new();
    let before = seeded(&env);
    let (id, _) = busy_session(&env);
    let after = zone_files(&env);
    assert_ne!(after, before);
    assert!(
        after.contains(&("made.txt".into(), "made\n".into())),
        "{after:?}"
    );

    let output = sessions_undo(&env, &[&id]);
    assert_exit(&output, 0);
    let said = stdout(&output);
    assert!(said.contains("undid turn 1"), "{said}");
    assert!(said.contains("/out/a.txt"), "{said}");
    assert_eq!(zone_files(&env), before, "byte for byte as before the turn");
    assert!(
        !env.path().join("proj/out/sub").exists(),
        "the made directory is gone"
    );

    // The transcript tells a resumed model.
    let lines = &env.transcripts("proj")[0];
    let note = lines
        .iter()
        .rev()
        .find(|l| l["kind"] == "message")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    let text = note["message"].to_string();
    assert!(
        text.contains("The user undid the file changes of turn 1"),
        "{text}"
    );

    // Nothing more to undo.
    refused(&sessions_undo(&env, &[&id]), 2, "nothing to undo");
}

#[test]
fn an_outside_edit_is_a_conflict_until_forced() {
    let env = TestEnv::new();
    let before = seeded(&env);
    let (id, _) = busy_session(&env);
    env.write("proj/out/old.txt", "mine, edited by hand\n");
    let held = zone_files(&env);

    let output = sessions_undo(&env, &[&id]);
    assert_exit(&output, 1);
    let said = stderr(&output);
    assert!(said.contains("/out/old.txt"), "{said}");
    assert!(said.contains("changed since the session left"), "{said}");
    assert!(said.contains("--force"), "{said}");
    assert_eq!(zone_files(&env), held, "a conflict changes nothing");

    let output = sessions_undo(&env, &[&id, "--force"]);
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("overwrote"), "{}", stdout(&output));
    assert_eq!(zone_files(&env), before);
}

#[test]
fn a_turn_past_the_undo_cap_says_so_and_cannot_be_undone() {
    let env = TestEnv::new();
    seeded(&env);
    env.write("proj/golem-forge.config.yaml", "undo:\n  max_mb: 0\n");
    let (id, output) = busy_session(&env);
    let events = events(&output);
    let warned = of_type(&events, "status").iter().any(|e| {
        e["message"]
            .as_str()
            .unwrap_or("")
            .contains("this turn cannot be undone")
    });
    assert!(warned, "{events:#?}");
    refused(&sessions_undo(&env, &[&id]), 2, "turn 1 cannot be undone");
}

#[test]
fn sessions_undo_puts_back_what_git_checkout_wrote_in_the_working_tree() {
    use crate::run::git::{git_project, host_git};
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let repo = git_project(&env);
    host_git(&repo, &["branch", "-M", "main"]);
    host_git(&repo, &["switch", "-q", "-c", "side"]);
    env.write("proj/repo/README.md", "# Side\n");
    env.write("proj/repo/side.txt", "side\n");
    host_git(&repo, &["add", "README.md", "side.txt"]);
    host_git(&repo, &["commit", "-q", "-m", "Side"]);
    host_git(&repo, &["switch", "-q", "main"]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "git_checkout", json!({"branch": "side"}))]),
        wire.text("Switched."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "switch",
            "--json",
            "--approval",
            "approve_all",
        ],
    );
    assert_exit(&output, 0);
    assert_eq!(env.read("proj/repo/side.txt").as_deref(), Some("side\n"));
    let id = only_session_id(&env);

    let output = sessions_undo(&env, &[&id]);
    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("/repo/README.md"),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        env.read("proj/repo/README.md").as_deref(),
        Some("# Project\n\nfirst line\n")
    );
    assert!(
        !repo.join("side.txt").exists(),
        "the file the switch added is gone"
    );
}

#[test]
fn a_resumed_session_says_an_undo_was_cut_off_and_the_next_undo_finishes_it() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let before = seeded(&env);
    let (id, _) = busy_session(&env);
    // As a kill -9 in the middle of an undo leaves it: begun, one file put back, not finished.
    let journal = env
        .path()
        .join(format!("proj/.golem-forge/undo/{id}/journal.jsonl"));
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"kind\":\"undoBegun\",\"turns\":[1]}\n");
    std::fs::write(&journal, text).unwrap();
    env.write("proj/out/a.txt", "old a\n");

    let server = MockServer::start_blocking(vec![wire.text("Back.")]);
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "resume", &id, "go on", "--json"])
        .envs(provider_env(wire, &server))
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let events = events(&output);
    let said: Vec<&str> = of_type(&events, "status")
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("an undo of turn 1 was cut off")),
        "{said:?}"
    );
    let output = sessions_undo(&env, &[&id]);
    assert_exit(&output, 0);
    assert_eq!(zone_files(&env), before);
}
