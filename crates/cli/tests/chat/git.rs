//! The git tools typed in a chat (docs/tools.md, Git): `/git_push --branch main` runs at once,
//! with no approval prompt, and the remote gets the branch; `--force` asks first, and a denied
//! forced push changes nothing; `/git_status` draws the status tree. The repositories are made
//! as in `run/git.rs`: the bare remote in the second zone `remote`, `origin` at
//! `/remote/origin.git` as the jail shows it.

use super::*;
use crate::run::git::{git_repositories, host_git, remote_branch};

/// `scribe` with the zones `repo` and `remote` and the git tools on `repo`; the model answers
/// `I see.` to anything.
fn session() -> (TestEnv, MockServer, Chat) {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &worker(
            "sandbox:\n  zones:\n    - name: repo\n      mode: rw\n    - name: remote\n      \
             mode: rw\ntoolsets:\n  git: { zone: repo }\n",
        ),
    );
    git_repositories(&env, "proj");
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(wire.text("I see."));
    let mut chat = start(&env, wire, &server);
    chat.ready();
    (env, server, chat)
}

fn head(env: &TestEnv) -> String {
    host_git(&env.path().join("proj/repo"), &["rev-parse", "HEAD"])
        .trim()
        .to_owned()
}

#[test]
fn slash_git_push_runs_without_a_prompt_and_force_asks() {
    let (env, server, mut chat) = session();
    let shown = chat.turn("/git_push --branch main");
    assert!(!shown.contains(CHOICES), "no prompt for a push:\n{shown}");
    assert!(shown.contains("⏺ git_push"), "{}", chat.dump());
    assert!(shown.contains("pushed main to origin"), "{}", chat.dump());
    assert_eq!(remote_branch(&env, "proj", "main"), Some(head(&env)));

    // A new local commit, then a forced push: asked, and denied.
    env.write("proj/repo/more.txt", "more\n");
    let repo = env.path().join("proj/repo");
    host_git(&repo, &["add", "more.txt"]);
    host_git(&repo, &["commit", "-q", "-m", "More"]);
    chat.send_line("/git_push --branch main --force");
    chat.wait_for(CHOICES);
    chat.wait_prompt_text(ANSWER);
    let shown = chat.since();
    let boxed = approval_box(&shown);
    assert!(boxed.starts_with("┌ Approve git_push?"), "{boxed}");
    assert!(boxed.contains("Force-push `main`"), "{boxed}");
    chat.send("n");
    chat.wait_prompt_text(NOTE);
    chat.send_line("");
    chat.wait_prompt();
    assert_ne!(
        remote_branch(&env, "proj", "main"),
        Some(head(&env)),
        "a denied push never runs"
    );

    // Asked again and approved, it runs.
    chat.send_line("/git_push --branch main --force");
    chat.wait_for(CHOICES);
    chat.wait_prompt_text(ANSWER);
    chat.send("y");
    chat.wait_prompt();
    assert!(
        chat.since().contains("force-pushed main to origin"),
        "{}",
        chat.dump()
    );
    assert_eq!(remote_branch(&env, "proj", "main"), Some(head(&env)));
    assert!(server.requests().is_empty(), "the model was never asked");
}

#[test]
fn slash_git_status_draws_the_tree() {
    let (env, _server, mut chat) = session();
    env.write("proj/repo/README.md", "changed\n");
    env.write("proj/repo/new.txt", "new\n");
    let shown = chat.turn("/git_status");
    for expected in [
        "⏺ git_status",
        "⎇ main",
        "modified (1)",
        "/repo/README.md",
        "untracked (1)",
        "/repo/new.txt",
    ] {
        assert!(
            shown.contains(expected),
            "{expected} missing:\n{}",
            chat.dump()
        );
    }
}
