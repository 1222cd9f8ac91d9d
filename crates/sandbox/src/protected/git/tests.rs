//! Git's own rules, against repositories the real `git` made and configured.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::GitRules;
use super::repo::Scopes;

/// Runs git in `dir` with no system or global configuration; fails the test (with how to
/// install git) when it cannot run.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.org")
        .env("GIT_COMMITTER_NAME", "Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.org")
        .output()
        .unwrap_or_else(|e| panic!("git cannot run ({e}): apt-get install -y git"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A temporary directory (its real path) and rules for a zone at `zone` inside it, reading no
/// system or global configuration.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

fn rules(zone: &Path) -> GitRules {
    GitRules::with_scopes(
        zone.to_path_buf(),
        Scopes::given(Vec::new(), Vec::new(), None),
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_hooks_directory_is_where_core_hooks_path_says_and_follows_changes() {
    let (_dir, root) = setup();
    git(&root, &["init", "-q"]);
    let rules = rules(&root);
    assert!(!rules.protects(&root.join(".githooks/pre-commit")));
    assert!(!rules.protects(&root.join("src/main.rs")));
    // Set during the session: counts from the next check.
    git(&root, &["config", "core.hooksPath", ".githooks"]);
    assert!(rules.protects(&root.join(".githooks/pre-commit")));
    assert!(rules.protects(&root.join(".githooks")));
    assert!(!rules.protects(&root.join("src/main.rs")));
    git(&root, &["config", "core.hooksPath", "tools/hooks"]);
    assert!(rules.protects(&root.join("tools/hooks/post-checkout")));
    assert!(!rules.protects(&root.join("tools/build.sh")));
    // husky's `_/` stubs run the scripts one directory up.
    git(&root, &["config", "core.hooksPath", ".config/husky/_"]);
    assert!(rules.protects(&root.join(".config/husky/pre-commit")));
    assert!(rules.protects(&root.join(".config/husky/_/h")));
    assert!(!rules.protects(&root.join(".config/other.toml")));
}

#[test]
fn a_zone_inside_a_repository_follows_the_repository_s_configuration() {
    let (_dir, root) = setup();
    git(&root, &["init", "-q"]);
    git(&root, &["config", "core.hooksPath", "notes/hooks"]);
    let zone = root.join("notes");
    std::fs::create_dir(&zone).unwrap();
    let rules = rules(&zone);
    assert!(rules.protects(&zone.join("hooks/pre-commit")));
    assert!(!rules.protects(&zone.join("todo.md")));
}

#[test]
fn git_directories_not_named_dot_git_are_judged_as_git_directories() {
    let (_dir, root) = setup();
    // `git init --separate-git-dir`: the work tree holds a `.git` file.
    git(
        &root,
        &["init", "-q", "--separate-git-dir", ".repo-git", "app"],
    );
    // A bare repository, found by its contents.
    git(&root, &["init", "-q", "--bare", "mirror.git"]);
    let rules = rules(&root);
    for path in [
        ".repo-git/config",
        ".repo-git/hooks/pre-commit",
        ".repo-git/info/attributes",
        ".repo-git",
        "mirror.git/hooks/post-receive",
        "mirror.git/config",
        "mirror.git",
    ] {
        assert!(rules.protects(&root.join(path)), "{path}");
    }
    for path in [
        ".repo-git/HEAD",
        ".repo-git/objects/ab/cd",
        "mirror.git/refs/heads/main",
        "mirror.git/description",
        "app/src.rs",
    ] {
        assert!(!rules.protects(&root.join(path)), "{path}");
    }
}

#[test]
fn a_worktree_s_git_directory_and_its_common_directory_are_found() {
    let (_dir, root) = setup();
    let main = root.join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "x"]);
    git(&main, &["config", "extensions.worktreeConfig", "true"]);
    git(&main, &["worktree", "add", "-q", "../wt"]);
    git(
        &root.join("wt"),
        &["config", "--worktree", "core.hooksPath", "wt-hooks"],
    );
    // A zone holding only the worktree: its git directory is elsewhere, its hooks here.
    let rules = rules(&root.join("wt"));
    assert!(rules.protects(&root.join("wt/wt-hooks/pre-commit")));
    assert!(rules.protects(&main.join(".git/worktrees/wt/config.worktree")));
    assert!(!rules.protects(&root.join("wt/readme.md")));
}

#[test]
fn included_files_are_configuration_wherever_they_are() {
    let (_dir, root) = setup();
    git(&root, &["init", "-q"]);
    git(&root, &["config", "include.path", "../.gitconfig"]);
    git(
        &root,
        &[
            "config",
            "includeIf.onbranch:release.path",
            "../cfg/release.inc",
        ],
    );
    // What an included file includes, and the hooks directory it sets.
    write(
        &root.join(".gitconfig"),
        "[include]\n\tpath = cfg/more.inc\n",
    );
    write(
        &root.join("cfg/more.inc"),
        "[core]\n\thooksPath = from-include\n",
    );
    let rules = rules(&root);
    for path in [
        ".gitconfig",
        "cfg/release.inc",
        "cfg/more.inc",
        "from-include/pre-commit",
    ] {
        assert!(rules.protects(&root.join(path)), "{path}");
    }
    assert!(!rules.protects(&root.join("cfg/notes.md")));
}

#[test]
fn repositories_inside_the_zone_are_found_by_the_first_check() {
    let (_dir, root) = setup();
    let app = root.join("vendor/app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q"]);
    git(&app, &["config", "core.hooksPath", "../../common-hooks"]);
    let rules = rules(&root);
    // Judged from outside the nested repository: only the walk can know.
    assert!(rules.protects(&root.join("common-hooks/pre-commit")));
    assert!(
        rules
            .shown()
            .iter()
            .any(|line| line == "common-hooks/** (core.hooksPath)"),
        "{:?}",
        rules.shown()
    );
}

#[test]
fn making_a_directory_a_git_directory_is_protected() {
    let (_dir, root) = setup();
    std::fs::create_dir_all(root.join("x/objects")).unwrap();
    std::fs::create_dir_all(root.join("x/refs")).unwrap();
    let rules = rules(&root);
    assert!(rules.protects(&root.join("x/HEAD")));
    assert!(!rules.protects(&root.join("y/HEAD")));
    write(&root.join("z/HEAD"), "ref: refs/heads/main\n");
    std::fs::create_dir_all(root.join("z/objects")).unwrap();
    assert!(rules.protects(&root.join("z/refs")));
    assert!(!rules.protects(&root.join("z/description")));
}

#[test]
fn global_and_environment_scopes_count() {
    let (_dir, root) = setup();
    git(&root, &["init", "-q"]);
    let global = root.join("home/.gitconfig");
    write(
        &global,
        "[core]\n\thooksPath = ~/hooks\n[include]\n\tpath = ~/extra.inc\n",
    );
    let rules = GitRules::with_scopes(
        root.clone(),
        Scopes::given(
            vec![global.clone()],
            vec![("core.hookspath".to_owned(), "env-hooks".to_owned())],
            Some(root.join("home")),
        ),
    );
    for path in [
        "home/.gitconfig",
        "home/hooks/pre-commit",
        "home/extra.inc",
        "env-hooks/pre-commit",
    ] {
        assert!(rules.protects(&root.join(path)), "{path}");
    }
}
