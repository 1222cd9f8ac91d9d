//! Protected files inside the sandbox itself: every changing operation refuses them with
//! `BLOCKED`, even when a caller skipped the tools' check; the judgements the tools ask for
//! before approval; `protect`, `unprotect` and narrowing.

use std::path::Path;

use golem_policy::ApprovalRequirement;
use golem_protocol::ToolErrorCode;
use golem_sandbox::{ProtectedPaths, Protection, Sandbox, ZoneConfig, ZoneMode};

use crate::common::snapshot;

fn put(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A worker directory with a zone `w` holding a repository, and the sandbox over it.
fn repo(zone: ZoneConfig) -> (tempfile::TempDir, Sandbox) {
    let tmp = tempfile::tempdir().unwrap();
    let w = tmp.path().join("w");
    put(&w.join(".git/config"), "[core]\n");
    put(&w.join(".git/HEAD"), "ref: refs/heads/main\n");
    put(&w.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
    put(&w.join("sub/.git/config"), "[core]\n");
    put(&w.join(".envrc"), "export A=1\n");
    put(&w.join("src/a.rs"), "fn a() {}\n");
    std::os::unix::fs::symlink(".git", w.join("link")).unwrap();
    let sandbox = Sandbox::open(tmp.path(), &[zone]).unwrap();
    (tmp, sandbox)
}

fn rw() -> ZoneConfig {
    ZoneConfig::new("w", ZoneMode::Rw)
}

fn blocked<T: std::fmt::Debug>(result: Result<T, golem_protocol::ToolError>, path: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.code, ToolErrorCode::Blocked, "{}", err.message);
    assert_eq!(
        err.message,
        format!("protected: {path} is read outside the sandbox")
    );
}

#[test]
fn every_changing_operation_refuses_protected_paths() {
    let (tmp, sandbox) = repo(rw());
    let before = snapshot(tmp.path());
    let p = |path: &str| sandbox.resolve(path).unwrap();
    blocked(
        sandbox.write_atomic(&p("/w/.git/config"), b"evil", false),
        "/w/.git/config",
    );
    blocked(
        sandbox.write_new(&p("/w/.git/hooks/post-checkout"), b"evil", false),
        "/w/.git/hooks/post-checkout",
    );
    blocked(
        sandbox.write_atomic(&p("/w/sub/.git/config"), b"evil", false),
        "/w/sub/.git/config",
    );
    blocked(
        sandbox.write_atomic(&p("/w/link/config"), b"evil", false),
        "/w/.git/config",
    );
    blocked(
        sandbox.write_atomic(&p("/w/new/.git/HEAD"), b"x", true),
        "/w/new/.git",
    );
    blocked(
        sandbox.create_dir_all(&p("/w/.git/hooks/sub")),
        "/w/.git/hooks/sub",
    );
    blocked(sandbox.remove_file(&p("/w/.envrc")), "/w/.envrc");
    blocked(
        sandbox.remove_file(&p("/w/link/hooks/pre-commit.sample")),
        "/w/.git/hooks/pre-commit.sample",
    );
    blocked(sandbox.remove_dir_all(&p("/w/sub")), "/w/sub/.git");
    blocked(sandbox.remove_dir_all(&p("/w/.git")), "/w/.git");
    blocked(
        sandbox.rename(&p("/w/src/a.rs"), &p("/w/.envrc"), true),
        "/w/.envrc",
    );
    blocked(
        sandbox.rename(&p("/w/sub"), &p("/w/moved"), false),
        "/w/sub/.git",
    );
    blocked(
        sandbox.rename(&p("/w/src"), &p("/w/.vscode"), false),
        "/w/.vscode",
    );
    assert_eq!(snapshot(tmp.path()), before, "nothing changed");
    // What git itself writes stays writable, and the link itself is an ordinary entry.
    sandbox
        .write_atomic(&p("/w/.git/refs/heads/x"), b"0123\n", true)
        .unwrap();
    sandbox
        .write_atomic(&p("/w/link/HEAD"), b"x\n", false)
        .unwrap();
    sandbox.remove_file(&p("/w/link")).unwrap();
    assert!(tmp.path().join("w/.git/config").exists());
}

#[test]
fn the_tools_ask_before_approval() {
    let (_tmp, sandbox) = repo(rw());
    let p = |path: &str| sandbox.resolve(path).unwrap();
    assert_eq!(
        sandbox.protection(&p("/w/link/config")),
        Protection::Protected {
            path: "/w/.git/config".into()
        }
    );
    assert_eq!(sandbox.protection(&p("/w/src/b.rs")), Protection::Open);
    assert_eq!(
        sandbox.removal_protection(&p("/w/sub")),
        Protection::Protected {
            path: "/w/sub/.git".into()
        }
    );
    assert_eq!(sandbox.removal_protection(&p("/w/src")), Protection::Open);
    assert_eq!(
        sandbox.move_protection(&p("/w/src"), &p("/w/x/.idea")),
        Protection::Protected {
            path: "/w/x/.idea".into()
        }
    );
}

#[test]
fn unprotect_turns_built_in_entries_into_a_question_for_a_person() {
    let (tmp, sandbox) = repo(rw().with_unprotect([".git/**"]));
    let p = |path: &str| sandbox.resolve(path).unwrap();
    let judged = sandbox.protection(&p("/w/.git/config"));
    assert_eq!(
        judged,
        Protection::Unprotected {
            paths: vec!["/w/.git/config".into()]
        }
    );
    let warning = judged.warning().unwrap();
    assert!(
        warning.starts_with("\u{26a0} unprotected: /w/.git/config is read outside the sandbox"),
        "{warning}"
    );
    assert_eq!(
        judged.requirement(ApprovalRequirement::PreApproved),
        ApprovalRequirement::ask_user(warning)
    );
    // The sandbox lets the change through (the gate asked), elsewhere nothing changes.
    sandbox
        .write_atomic(&p("/w/.git/config"), b"[user]\n", false)
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("w/.git/config")).unwrap(),
        "[user]\n"
    );
    blocked(
        sandbox.write_atomic(&p("/w/sub/.git/config"), b"x", false),
        "/w/sub/.git/config",
    );
    blocked(
        sandbox.write_atomic(&p("/w/.envrc"), b"x", false),
        "/w/.envrc",
    );
    // A sub-worker that does not unprotect it too gets it protected again.
    let child = sandbox.narrow(&[rw()]).unwrap();
    let cp = child.resolve("/w/.git/config").unwrap();
    blocked(child.write_atomic(&cp, b"x", false), "/w/.git/config");
    let same = sandbox.narrow(&[rw().with_unprotect([".git"])]).unwrap();
    let sp = same.resolve("/w/.git/config").unwrap();
    assert!(matches!(
        same.protection(&sp),
        Protection::Unprotected { .. }
    ));
}

#[test]
fn protect_adds_patterns_and_host_paths_that_unprotect_cannot_lift() {
    let (tmp, sandbox) = repo(rw().with_unprotect(["**"]));
    let w = std::fs::canonicalize(tmp.path().join("w")).unwrap();
    put(&w.join("tools/mod.py"), "def f(): pass\n");
    let sandbox = sandbox.protect(
        &ProtectedPaths::new()
            .with_pattern("secrets/**")
            .unwrap()
            .with_pattern("*.pem")
            .unwrap()
            .with_host_path(w.join("tools/mod.py"))
            .with_host_files(w.join("tools"), "*.py"),
    );
    let p = |path: &str| sandbox.resolve(path).unwrap();
    blocked(
        sandbox.write_atomic(&p("/w/secrets/key"), b"x", true),
        "/w/secrets/key",
    );
    blocked(
        sandbox.write_atomic(&p("/w/deep/er/cert.PEM"), b"x", true),
        "/w/deep/er/cert.PEM",
    );
    blocked(
        sandbox.write_atomic(&p("/w/tools/mod.py"), b"x", false),
        "/w/tools/mod.py",
    );
    blocked(
        sandbox.write_new(&p("/w/tools/json.py"), b"x", false),
        "/w/tools/json.py",
    );
    sandbox
        .write_atomic(&p("/w/tools/notes.md"), b"x", false)
        .unwrap();
    let (extra, unprotect) = sandbox.protected_patterns("w").unwrap();
    assert_eq!(extra, ["secrets/**", "*.pem", "tools/mod.py", "tools/*.py"]);
    assert_eq!(unprotect, ["**"]);
    // Narrowing keeps what was added.
    let child = sandbox.narrow(&[rw()]).unwrap();
    let cp = child.resolve("/w/secrets/key").unwrap();
    assert!(child.protection(&cp).is_protected());
}

#[test]
fn a_zone_inside_a_git_directory_is_protected_whole() {
    let tmp = tempfile::tempdir().unwrap();
    put(&tmp.path().join("repo/.git/hooks/x"), "#!/bin/sh\n");
    let sandbox = Sandbox::open(
        tmp.path(),
        &[ZoneConfig::new("hooks", ZoneMode::Rw).with_path("repo/.git/hooks")],
    )
    .unwrap();
    let p = sandbox.resolve("/hooks/pre-commit").unwrap();
    blocked(
        sandbox.write_atomic(&p, b"evil", false),
        "/hooks/pre-commit",
    );
}

/// Every file a host program runs or obeys on its own (issue 45), as a worker would plant it.
const RUN_ON_THEIR_OWN: &[&str] = &[
    "/w/rust-toolchain",
    "/w/rust-toolchain.toml",
    "/w/crates/x/rust-toolchain.toml",
    "/w/.zed/settings.json",
    "/w/.zed/tasks.json",
    "/w/.pre-commit-config.yaml",
    "/w/lefthook.yml",
    "/w/lefthook.yaml",
    "/w/.lefthook.yml",
    "/w/.lefthook.yaml",
    "/w/lefthook-local.yml",
    "/w/lefthook-local.yaml",
    "/w/.overcommit.yml",
    "/w/.husky/pre-commit",
    "/w/.husky/_/pre-commit",
];

#[test]
fn files_host_programs_run_on_their_own_cannot_be_planted() {
    let (tmp, sandbox) = repo(rw());
    let before = snapshot(tmp.path());
    let p = |path: &str| sandbox.resolve(path).unwrap();
    for path in RUN_ON_THEIR_OWN {
        assert!(sandbox.protection(&p(path)).is_protected(), "{path}");
        // Inside the sandbox too, whatever the caller checked.
        blocked(sandbox.write_new(&p(path), b"path = \"tc\"\n", true), path);
        blocked(
            sandbox.write_atomic(&p(path), b"path = \"tc\"\n", true),
            path,
        );
    }
    blocked(sandbox.create_dir_all(&p("/w/.husky")), "/w/.husky");
    blocked(sandbox.create_dir_all(&p("/w/.zed")), "/w/.zed");
    // What is simply the project's code stays writable.
    for path in ["/w/build.rs", "/w/Makefile", "/w/package.json"] {
        assert_eq!(sandbox.protection(&p(path)), Protection::Open, "{path}");
    }
    assert_eq!(snapshot(tmp.path()), before);
    sandbox
        .write_new(&p("/w/build.rs"), b"fn main() {}\n", false)
        .unwrap();
}

#[test]
fn names_a_case_insensitive_file_system_folds_together_are_refused() {
    let (tmp, sandbox) = repo(rw());
    let sandbox = sandbox.protect(&ProtectedPaths::new().with_pattern("secrets/**").unwrap());
    let before = snapshot(tmp.path());
    let p = |path: &str| sandbox.resolve(path).unwrap();
    for path in [
        // KELVIN SIGN folds to `k`, LONG S to `s`, the `fi` ligature to `fi`.
        "/w/.git/hoo\u{212a}s/pre-commit",
        "/w/.v\u{17f}code/settings.json",
        "/w/.git/con\u{fb01}g",
        "/w/GOLEM-FORGE.CONFIG.YAML",
        "/w/RUST-TOOLCHAIN.TOML",
        "/w/.hu\u{17f}ky/pre-commit",
        // A pattern of the program config.
        "/w/\u{17f}ecrets/key",
    ] {
        blocked(sandbox.write_atomic(&p(path), b"evil", true), path);
    }
    assert_eq!(snapshot(tmp.path()), before);
    // Names that merely hold non-ASCII letters are ordinary files.
    for path in [
        "/w/caf\u{e9}/notes.md",
        "/w/.git/h\u{f6}oks",
        "/w/.v\u{15b}code/settings.json",
        "/w/\u{65e5}\u{672c}.md",
    ] {
        sandbox.write_atomic(&p(path), b"ok", true).unwrap();
    }
}
