//! Protection computed from git's own configuration (issue 45), end to end: a zone over a
//! project whose repositories keep hooks and configuration where names cannot tell —
//! `core.hooksPath=.githooks`, a bare `mirror.git/`, a `.git` file naming `.repo-git/`, an
//! `include.path` to a work-tree file — with every change pre-approved and `--approval
//! approve_all`. The model's writes there are refused, a jailed run's changeset that makes a
//! hook executable or lays out a bare repository is refused whole, and the real `git`, run
//! afterwards as the user would, runs nothing the model planted.

use super::git::host_git;
use super::*;

/// The worker `main` whose zone `work` is the project root, every change pre-approved, with
/// the filesystem tools and `run_code`.
fn root_worker() -> String {
    worker(
        "main",
        "sandbox:\n  zones:\n    - name: work\n      path: .\n      mode: rw\n      \
         approval: { create: preApproved, write: preApproved, delete: preApproved }\n\
         toolsets:\n  filesystem: {}\n  code: {}\n",
    )
}

/// A script that leaves `marker` behind when something runs it.
fn planted(marker: &std::path::Path) -> String {
    format!("#!/bin/sh\ntouch {}\n", marker.display())
}

/// The project: a repository at its root with `core.hooksPath=.githooks` (holding a
/// `pre-commit` the user left disabled — not executable — that leaves the marker `pwned`)
/// and `include.path=../.gitconfig`, a bare `mirror.git/`, and `app/` whose `.git` file names
/// `.repo-git/`.
fn repositories(env: &TestEnv) -> std::path::PathBuf {
    project(env, &[("main.worker", root_worker())]);
    let proj = env.path().join("proj");
    host_git(&proj, &["init", "-q"]);
    host_git(&proj, &["config", "core.hooksPath", ".githooks"]);
    host_git(&proj, &["config", "include.path", "../.gitconfig"]);
    env.write(
        "proj/.githooks/pre-commit",
        &planted(&env.path().join("pwned")),
    );
    env.write("proj/.gitconfig", "[user]\n\tname = Tester\n");
    host_git(&proj, &["init", "-q", "--bare", "mirror.git"]);
    host_git(
        &proj,
        &["init", "-q", "--separate-git-dir", ".repo-git", "app"],
    );
    proj
}

#[test]
fn writes_where_git_s_configuration_points_are_refused_and_git_runs_nothing_planted() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let proj = repositories(&env);
    let marker = env.path().join("pwned");
    let hook = planted(&marker);
    let fsmonitor = format!("[core]\n\tfsmonitor = touch {}\n", marker.display());
    let targets: [(&str, &str); 6] = [
        ("/work/.githooks/pre-commit", &hook),
        ("/work/.githooks/post-checkout", &hook),
        ("/work/mirror.git/hooks/post-receive", &hook),
        ("/work/mirror.git/config", &fsmonitor),
        ("/work/.repo-git/config", &fsmonitor),
        ("/work/.gitconfig", &fsmonitor),
    ];
    let before: Vec<Option<String>> = targets
        .iter()
        .map(|(path, _)| env.read(&format!("proj{}", &path["/work".len()..])))
        .collect();
    let mut calls: Vec<(String, Value)> = targets
        .iter()
        .map(|(path, content)| {
            (
                path.to_string(),
                json!({"path": path, "content": content, "createDirs": true}),
            )
        })
        .collect();
    calls.push((
        "ok".to_owned(),
        json!({"path": "/work/notes.md", "content": "fine\n"}),
    ));
    let ids: Vec<String> = (0..calls.len()).map(|at| format!("call_{at}")).collect();
    let batch: Vec<(&str, &str, Value)> = calls
        .iter()
        .zip(&ids)
        .map(|((_, args), id)| (id.as_str(), "write_file", args.clone()))
        .collect();
    let server = MockServer::start_blocking(vec![wire.tool_calls(&batch), wire.text("Done.")]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go", "--approval", "approve_all"],
    );
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), calls.len(), "{results:?}");
    for (result, (path, _)) in results.iter().zip(&targets) {
        assert!(
            result
                .content
                .contains(&format!("protected: {path} is read outside the sandbox")),
            "{path}: {result:?}"
        );
        assert!(wire.is_error(result), "{path}: {result:?}");
    }
    assert!(!wire.is_error(&results[targets.len()]));
    for ((path, _), before) in targets.iter().zip(before) {
        let rel = format!("proj{}", &path["/work".len()..]);
        assert_eq!(env.read(&rel), before, "{path} changed");
    }
    // What the user does next runs nothing the model wrote.
    host_git(&proj, &["add", "notes.md"]);
    host_git(&proj, &["commit", "-q", "-m", "notes"]);
    host_git(&proj, &["checkout", "-q", "-b", "topic"]);
    host_git(&proj, &["push", "-q", "mirror.git", "topic"]);
    host_git(&proj.join("app"), &["status", "--short"]);
    host_git(&proj, &["status", "--short"]);
    assert!(!marker.exists(), "a planted program ran");
}

#[test]
fn a_changeset_that_arms_a_hook_or_lays_out_a_bare_repository_is_refused_whole() {
    let wire = Wire::Anthropic;
    for (what, code) in [
        ("the hooks directory", "chmod +x .githooks/pre-commit"),
        (
            "a new bare repository",
            "mkdir -p new.git/objects new.git/refs new.git/hooks && \
             echo 'ref: refs/heads/main' > new.git/HEAD && \
             printf '#!/bin/sh\\ntouch /work/pwned\\n' > new.git/hooks/post-receive && \
             chmod +x new.git/hooks/post-receive",
        ),
    ] {
        let env = TestEnv::new();
        let proj = repositories(&env);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[(
                "call_1",
                "run_code",
                json!({"language": "bash", "code": format!("cd /work && {code} && echo done")}),
            )]),
            wire.text("Done."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "go", "--approval", "approve_all"],
        );
        assert_exit(&output, 0);
        let results = results_sent(wire, &server, 1);
        assert!(
            results[0].content.contains("is read outside the sandbox"),
            "{what}: {results:?}"
        );
        assert!(!proj.join("new.git").exists(), "{what}: applied");
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(proj.join(".githooks/pre-commit"))
                .unwrap()
                .permissions()
                .mode()
        };
        assert_eq!(mode & 0o111, 0, "{what}: the hook was made executable");
        host_git(&proj, &["commit", "-q", "--allow-empty", "-m", "x"]);
        assert!(!env.path().join("pwned").exists(), "{what}: the hook ran");
    }
}

#[test]
fn check_lists_what_git_s_configuration_protects() {
    let env = TestEnv::new();
    repositories(&env);
    let out = check_offline(&env);
    for shown in [
        ".githooks/** (core.hooksPath)",
        ".gitconfig (include.path)",
        "mirror.git/ (git directory)",
        ".repo-git/ (git directory)",
    ] {
        assert!(out.contains(shown), "{shown}: {out}");
    }
}
