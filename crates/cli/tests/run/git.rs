//! The git toolset end to end: a worker whose zone `repo` holds a repository made by the test
//! reviews, stages, commits and pulls through the model's calls, in the real jail; the model's
//! `git_push` is refused and nothing reaches the remote; a repository whose `.git/config` and
//! hooks try to run programs runs none of them; `check` lists the tools; a bad `git:` section
//! stops the launch naming the key.
//!
//! The bare remote lives in a second zone, `remote`, as `origin.git`: the jail shows a program
//! only the worker's zones, each at `/<zone>`, so git inside the jail reaches the remote at
//! `/remote/origin.git`, which is the URL `origin` is given (the host's git, which sets the
//! repositories up, uses the real path instead).

use super::*;
pub(crate) use golem_testkit::git::host_git;

/// The worker `main` with the zones `repo` and `remote` (both `rw`) and `toolsets.git` as
/// `git` (YAML after `git:`).
pub(crate) fn git_worker(name: &str, git: &str) -> String {
    worker(
        name,
        &format!(
            "sandbox:\n  zones:\n    - name: repo\n      mode: rw\n    - name: remote\n      \
             mode: rw\ntoolsets:\n  git: {git}\n"
        ),
    )
}

/// The project `proj` of [`git_worker`] `main` on its zone `repo`, with [`git_repositories`];
/// the repository's host path.
pub(crate) fn git_project(env: &TestEnv) -> std::path::PathBuf {
    project(
        env,
        &[("main.worker", git_worker("main", "{ zone: repo }"))],
    );
    git_repositories(env, "proj");
    env.path().join("proj/repo")
}

/// `root/repo`: a repository with one commit of `README.md` whose `origin` is the bare
/// `root/remote/origin.git`, as the jail shows it (`/remote/origin.git`).
pub(crate) fn git_repositories(env: &TestEnv, root: &str) {
    let repo = env.mkdir(&format!("{root}/repo"));
    let remote = env.mkdir(&format!("{root}/remote"));
    host_git(&repo, &["init", "-q"]);
    env.write(
        &format!("{root}/repo/README.md"),
        "# Project\n\nfirst line\n",
    );
    host_git(&repo, &["add", "README.md"]);
    host_git(&repo, &["commit", "-q", "-m", "Initial commit"]);
    host_git(&remote, &["init", "-q", "--bare", "origin.git"]);
    host_git(&repo, &["remote", "add", "origin", "/remote/origin.git"]);
}

/// The commit `branch` is at in the bare remote under `root`, or `None`.
pub(crate) fn remote_branch(env: &TestEnv, root: &str, branch: &str) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("refs/heads/{branch}"))
        .env(
            "GIT_DIR",
            env.path().join(format!("{root}/remote/origin.git")),
        )
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// One reply per call, in order, then `Done.`.
fn calls(wire: Wire, calls: &[(&str, Value)]) -> Vec<Reply> {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            let id = format!("call_{}", i + 1);
            wire.tool_calls(&[(id.as_str(), tool, args.clone())])
        })
        .collect();
    replies.push(wire.text("Done."));
    replies
}

#[test]
fn the_model_reviews_stages_commits_and_pulls_but_cannot_push() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    git_project(&env);
    env.write(
        "proj/repo/README.md",
        "# Project\n\nfirst line\nsecond line\n",
    );
    // Someone else pushed a branch `theirs` to the remote, on top of the first commit.
    let origin = env.path().join("proj/remote/origin.git");
    let origin = origin.to_str().unwrap();
    host_git(
        &env.path().join("proj/repo"),
        &["push", "-q", origin, "main:refs/heads/base"],
    );
    host_git(env.path(), &["clone", "-q", "-b", "base", origin, "other"]);
    let other = env.path().join("other");
    std::fs::write(other.join("theirs.txt"), "theirs\n").unwrap();
    host_git(&other, &["add", "theirs.txt"]);
    host_git(&other, &["commit", "-q", "-m", "Their commit"]);
    host_git(&other, &["push", "-q", "origin", "HEAD:refs/heads/theirs"]);

    let server = MockServer::start_blocking(calls(
        wire,
        &[
            ("git_status", json!({})),
            ("git_diff", json!({})),
            ("git_stage", json!({"paths": ["README.md"]})),
            ("git_commit", json!({"message": "Add the second line"})),
            ("git_log", json!({"limit": 5})),
            ("git_pull", json!({"branch": "theirs"})),
            ("git_push", json!({"branch": "main"})),
        ],
    ));
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "review",
            "--json",
            "--approval",
            "approve_all",
        ],
    );
    assert_exit(&output, 0);
    // Each request carries the whole conversation: the newest result is the last one.
    let result = |index| {
        let results = results_sent(wire, &server, index);
        results.last().unwrap().content.clone()
    };
    let status = result(1);
    assert!(status.contains("0 staged, 1 modified"), "{status}");
    assert!(status.contains("/repo/README.md"), "{status}");
    let diff = result(2);
    assert!(
        diff.contains("Changed /repo/README.md") && diff.contains("+second line"),
        "{diff}"
    );
    assert!(result(3).contains("1 staged, 0 modified"), "{}", result(3));
    assert!(
        result(4).starts_with("[main ") && result(4).contains("Add the second line"),
        "{}",
        result(4)
    );
    let log = result(5);
    assert!(
        log.contains("Add the second line") && log.contains("Initial commit"),
        "{log}"
    );
    let sent = results_sent(wire, &server, 6);
    assert!(!wire.is_error(sent.last().unwrap()), "the pull: {sent:?}");
    assert_eq!(
        env.read("proj/repo/theirs.txt").as_deref(),
        Some("theirs\n")
    );
    let sent = results_sent(wire, &server, 7);
    let push = sent.last().unwrap();
    assert!(
        push.content
            .contains("Tool not found: git_push (it can only be invoked by the user)"),
        "{push:?}"
    );
    assert!(wire.is_error(push));
    assert_eq!(
        remote_branch(&env, "proj", "main"),
        None,
        "nothing was pushed"
    );

    // The model is never offered git_push.
    let first = server.requests()[0].body.to_string();
    assert!(first.contains("git_status") && first.contains("git_pull"));
    assert!(!first.contains("git_push"), "git_push is manual only");

    let events = events(&output);
    let kinds: Vec<&Value> = of_type(&events, "toolResult")
        .iter()
        .map(|e| &e["value"]["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            "git.status",
            "diff",
            "git.status",
            "text",
            "table",
            "text",
            "tool_error"
        ]
    );
    let decided: Vec<&Value> = of_type(&events, "approvalResolved")
        .iter()
        .map(|e| &e["decidedBy"])
        .collect();
    // Status, diff and log are pre-approved; stage, commit and pull ask (the mode answers).
    assert_eq!(
        decided,
        ["policy", "policy", "mode", "mode", "policy", "mode"]
    );
}

#[test]
fn a_repository_that_names_programs_runs_none_of_them() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let repo = git_project(&env);
    host_git(
        &repo,
        &["config", "core.fsmonitor", "touch /repo/pwned-fsmonitor"],
    );
    for hook in ["pre-commit", "post-commit"] {
        let path = env.write(
            &format!("proj/repo/.git/hooks/{hook}"),
            &format!("#!/bin/sh\ntouch /repo/pwned-{hook}\n"),
        );
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }
    env.write("proj/repo/b.txt", "b\n");
    let server = MockServer::start_blocking(calls(
        wire,
        &[
            ("git_status", json!({})),
            ("git_stage", json!({"paths": ["/repo/b.txt"]})),
            ("git_commit", json!({"message": "Add b"})),
        ],
    ));
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go", "--approval", "approve_all"],
    );
    assert_exit(&output, 0);
    let sent = results_sent(wire, &server, 3);
    let commit = &sent.last().unwrap().content;
    assert!(
        commit.starts_with("[main "),
        "the commit was made: {commit}"
    );
    for marker in ["fsmonitor", "pre-commit", "post-commit"] {
        assert_eq!(
            env.read(&format!("proj/repo/pwned-{marker}")),
            None,
            "{marker} ran"
        );
    }
}

#[test]
fn check_lists_the_git_tools_and_who_may_call_them() {
    let env = TestEnv::new();
    git_project(&env);
    let text = check_offline(&env);
    for expected in [
        "Jail (for git)",
        "repository: /repo (the zone's root)",
        "hooks: off",
        "the repository's own, else Golem Forge <golem-forge@localhost>",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    let push = text
        .lines()
        .find(|line| line.contains("│ git_push"))
        .unwrap_or_else(|| panic!("git_push is not listed:\n{text}"));
    assert!(push.contains("user") && !push.contains("model"), "{push}");
    assert!(push.contains("ask when `force`"), "{push}");
    let stage = text
        .lines()
        .find(|line| line.contains("│ git_stage"))
        .unwrap();
    assert!(
        stage.contains("model, user") && stage.contains("ask"),
        "{stage}"
    );
}

#[test]
fn a_bad_git_section_stops_the_launch_naming_the_key() {
    let wire = Wire::Anthropic;
    for (git, message) in [
        (
            "{ zone: nowhere }",
            "toolsets.git: zone `nowhere` is not a zone of this worker (zones: repo, remote)",
        ),
        ("", "`toolsets.git` must give `zone`"),
        ("{ hooks: true }", "missing key `zone` in `toolsets.git`"),
        (
            "{ zone: repo, hook: true }",
            "unknown key `hook` in `toolsets.git` (did you mean `hooks`?)",
        ),
        (
            "{ zone: repo, timeout: 0 }",
            "`toolsets.git.timeout` must be at least 1",
        ),
    ] {
        let env = TestEnv::new();
        project(&env, &[("main.worker", git_worker("main", git))]);
        env.mkdir("proj/repo");
        env.mkdir("proj/remote");
        let server = MockServer::start_blocking(vec![wire.text("never")]);
        let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
        assert_exit(&output, 2);
        assert!(
            stderr(&output).contains(message),
            "{git}: {}",
            render(&output)
        );
        assert!(server.requests().is_empty());
    }
}
