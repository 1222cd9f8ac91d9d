//! Every example in `examples/` has test cases (docs/testing.md) that pass offline with their
//! scripted replies: `golem-forge test examples/NAME` for each example folder, so an example
//! added without cases, or a change that breaks one, fails here. The cases pin each example's
//! configuration (its zones' approval policies, what is blocked or asked, the answer): a copy of
//! an example with a policy loosened fails its cases.

use std::path::{Path, PathBuf};

use golem_testkit::cli::{TestEnv, repo_root, stdout};

/// The example folders: each directory of `examples/` holding a worker file.
fn example_folders() -> Vec<PathBuf> {
    let dir = repo_root().join("examples");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .filter(|p| {
            std::fs::read_dir(p)
                .unwrap()
                .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "worker"))
        })
        .collect();
    folders.sort();
    folders
}

/// `N` of the closing "N passed, M failed" line of `text`.
fn passed(text: &str) -> Option<(usize, usize)> {
    let last = text.lines().last()?;
    let (p, f) = last.split_once(" passed, ")?;
    Some((p.parse().ok()?, f.strip_suffix(" failed")?.parse().ok()?))
}

fn test(env: &TestEnv, path: &Path) -> std::process::Output {
    env.command().arg("test").arg(path).output().unwrap()
}

#[test]
fn every_example_has_cases_and_they_pass() {
    let folders = example_folders();
    let names: Vec<String> = folders
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for known in [
        "greeter",
        "notes",
        "analyst",
        "team",
        "reviewer",
        "calculator",
    ] {
        assert!(names.iter().any(|n| n == known), "{known} in {names:?}");
    }
    if names.iter().any(|n| n == "mcp-everything") {
        // Its server is the local install; without it the failure says how to install it.
        golem_testkit::mcp_servers::package("server-everything");
    }
    let env = TestEnv::new();
    let mut problems = Vec::new();
    for (folder, name) in folders.iter().zip(&names) {
        let out = test(&env, folder);
        let text = stdout(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        match (out.status.code(), passed(&text)) {
            (Some(0), Some((n, 0))) if n > 0 => {}
            (code, counts) => problems.push(format!(
                "examples/{name}: exit {code:?}, counts {counts:?} (every example needs cases \
                 in tests/*.yaml beside its main.worker, see docs/testing.md)\n{text}{err}"
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// An example folder without cases is what the test above refuses: `golem-forge test` on it
/// exits 2 and says there are none, so no example passes by having nothing to run.
#[test]
fn an_example_without_cases_is_not_a_pass() {
    let env = TestEnv::new();
    env.write("examples/bare/main.worker", "---\nname: bare\n---\nHi\n");
    let out = test(&env, &env.path().join("examples/bare"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(passed(&stdout(&out)), None, "{out:?}");
}

/// Copies `examples/NAME`'s files and cases into `env` (beside the examples' program config),
/// with `from` replaced by `to` in its `main.worker`.
fn copy_with(env: &TestEnv, name: &str, from: &str, to: &str) -> PathBuf {
    let source = repo_root().join("examples").join(name);
    env.write(
        "examples/golem-forge.config.yaml",
        &std::fs::read_to_string(repo_root().join("examples/golem-forge.config.yaml")).unwrap(),
    );
    let worker = std::fs::read_to_string(source.join("main.worker")).unwrap();
    assert!(worker.contains(from), "{name}/main.worker has no `{from}`");
    env.write(
        &format!("examples/{name}/main.worker"),
        &worker.replacen(from, to, 1),
    );
    // Its other files (a tool module) and its cases; zone folders stay empty, as the cases
    // bring their own files.
    for folder in ["", "tests/"] {
        for entry in std::fs::read_dir(source.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_file() && file != "main.worker" {
                env.write(
                    &format!("examples/{name}/{folder}{file}"),
                    &std::fs::read_to_string(&path).unwrap(),
                );
            }
        }
    }
    env.path().join("examples").join(name)
}

/// The cases test the configuration, not only that a session ends: loosen a policy and the
/// case that pins it fails, naming the expectation.
#[test]
fn the_examples_cases_catch_a_loosened_policy() {
    for (name, from, to, case, expectation) in [
        (
            "notes",
            "delete: blocked",
            "delete: preApproved",
            "a delete is blocked and the note stays",
            "expect.blocked",
        ),
        (
            "notes",
            "write: ask",
            "write: preApproved",
            "changing the summary asks first",
            "expect.asked",
        ),
        (
            "analyst",
            "{ pattern: \"rm \", approval: blocked }",
            "{ pattern: \"rm \", approval: preApproved }",
            "rm is blocked and the file stays",
            "expect.blocked",
        ),
        (
            "calculator",
            "word_count: preApproved, ",
            "",
            "word_count reads /work in the jail",
            "expect.asked",
        ),
    ] {
        let env = TestEnv::new();
        let folder = copy_with(&env, name, from, to);
        let out = test(&env, &folder);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{name} with `{to}`: {text}");
        assert!(text.contains(&format!("✗ {name} · {case} (")), "{text}");
        assert!(text.contains(expectation), "{text}");
    }
}
