//! Protected files end to end (issue 26): with a zone over the project root, pre-approved
//! writes and `--approval approve_all`, the model still cannot change the repository's
//! configuration, the project's approval rules, the program config or its own worker file;
//! each call comes back as `protected: … is read outside the sandbox` and the files are
//! unchanged. `check` lists the protected set of the zone.

use super::*;

/// A worker whose zone `work` is the project root, every change pre-approved.
fn root_worker() -> String {
    worker(
        "main",
        "sandbox:\n  zones:\n    - name: work\n      path: .\n      mode: rw\n      \
         approval: { create: preApproved, write: preApproved, delete: preApproved }\n      \
         unprotect: [/.idea]\ntoolsets:\n  filesystem: {}\n",
    )
}

#[test]
fn approve_all_cannot_write_protected_files_in_a_zone_over_the_project_root() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", root_worker())]);
        env.write(
            "proj/golem-forge.config.yaml",
            "delegation:\n  max_depth: 5\nprotected: [secrets/**]\n",
        );
        env.write("proj/.git/config", "[core]\n\tbare = false\n");
        env.write("proj/.golem-forge/approvals.yaml", "rules: []\n");
        let originals: Vec<(&str, Option<String>)> = [
            "proj/.git/config",
            "proj/.golem-forge/approvals.yaml",
            "proj/golem-forge.config.yaml",
            "proj/main.worker",
        ]
        .into_iter()
        .map(|path| (path, env.read(path)))
        .collect();
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[
                (
                    "call_1",
                    "write_file",
                    json!({"path": "/work/.git/config",
                           "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}),
                ),
                (
                    "call_2",
                    "write_file",
                    json!({"path": "/work/.golem-forge/approvals.yaml",
                           "content": "rules:\n  - { tool: shell, match: {} }\n"}),
                ),
                (
                    "call_3",
                    "edit_file",
                    json!({"path": "/work/golem-forge.config.yaml",
                           "old_string": "max_depth: 5", "new_string": "max_depth: 9"}),
                ),
                (
                    "call_4",
                    "write_file",
                    json!({"path": "/work/main.worker", "content": "---\nname: evil\n---\n"}),
                ),
                (
                    "call_5",
                    "write_file",
                    json!({"path": "/work/secrets/key", "content": "x", "createDirs": true}),
                ),
                (
                    "call_6",
                    "write_file",
                    json!({"path": "/work/.idea/workspace.xml", "content": "x",
                           "createDirs": true}),
                ),
                (
                    "call_7",
                    "write_file",
                    json!({"path": "/work/notes.md", "content": "fine\n"}),
                ),
            ]),
            wire.text("Done."),
        ]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "go", "--approval", "approve_all"],
        );
        assert_exit(&output, 0);
        for (path, original) in &originals {
            assert_eq!(&env.read(path), original, "{wire:?}: {path} changed");
        }
        assert!(!env.path().join("proj/secrets").exists(), "{wire:?}");
        assert!(!env.path().join("proj/.idea").exists(), "{wire:?}");
        assert_eq!(
            env.read("proj/notes.md").as_deref(),
            Some("fine\n"),
            "{wire:?}"
        );
        let results = results_sent(wire, &server, 1);
        for (result, path) in results.iter().zip([
            "/work/.git/config",
            "/work/.golem-forge/approvals.yaml",
            "/work/golem-forge.config.yaml",
            "/work/main.worker",
            "/work/secrets/key",
        ]) {
            assert!(
                result
                    .content
                    .contains(&format!("protected: {path} is read outside the sandbox")),
                "{wire:?}: {result:?}"
            );
            assert!(wire.is_error(result), "{wire:?}: {result:?}");
        }
        // The unprotected path needs a person; approve_all with no terminal does not approve it.
        assert!(wire.is_error(&results[5]), "{wire:?}: {:?}", results[5]);
        assert!(
            results[5].content.contains("no terminal"),
            "{wire:?}: {:?}",
            results[5]
        );
        assert!(!wire.is_error(&results[6]), "{wire:?}: {:?}", results[6]);
    }
}

#[test]
fn check_lists_the_protected_set_of_each_zone() {
    let env = TestEnv::new();
    project(&env, &[("main.worker", root_worker())]);
    env.write(
        "proj/golem-forge.config.yaml",
        "protected: [secrets/**, \"*.pem\"]\n",
    );
    let out = check_offline(&env);
    assert!(out.contains("Protected files"), "{out}");
    assert!(out.contains(".git (config, hooks"), "{out}");
    assert!(
        out.contains(
            "/work: also secrets/**, *.pem; unprotected (a person is asked every time): /.idea"
        ),
        "{out}"
    );
}

#[test]
fn files_host_programs_run_on_their_own_and_folded_spellings_cannot_be_planted() {
    let planted = [
        "/work/rust-toolchain.toml",
        "/work/rust-toolchain",
        "/work/.zed/tasks.json",
        "/work/.pre-commit-config.yaml",
        "/work/lefthook.yml",
        "/work/.overcommit.yml",
        "/work/.husky/pre-commit",
        // Spellings a case-insensitive file system takes for protected names.
        "/work/.git/hoo\u{212a}s/pre-commit",
        "/work/.v\u{17f}code/settings.json",
        "/work/GOLEM-FORGE.CONFIG.YAML",
    ];
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", root_worker())]);
        env.write("proj/.git/config", "[core]\n\tbare = false\n");
        let mut calls: Vec<(String, &str, Value)> = planted
            .iter()
            .enumerate()
            .map(|(at, path)| {
                (
                    format!("call_{at}"),
                    "write_file",
                    json!({"path": path, "content": "[toolchain]\npath = \"tc\"\n",
                           "createDirs": true}),
                )
            })
            .collect();
        calls.push((
            "call_ok".to_owned(),
            "write_file",
            json!({"path": "/work/caf\u{e9}.md", "content": "fine\n"}),
        ));
        let calls: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(id, tool, args)| (id.as_str(), *tool, args.clone()))
            .collect();
        let server = MockServer::start_blocking(vec![wire.tool_calls(&calls), wire.text("Done.")]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "go", "--approval", "approve_all"],
        );
        assert_exit(&output, 0);
        let results = results_sent(wire, &server, 1);
        assert_eq!(results.len(), planted.len() + 1, "{wire:?}: {results:?}");
        for (result, path) in results.iter().zip(planted) {
            assert!(
                result
                    .content
                    .contains(&format!("protected: {path} is read outside the sandbox")),
                "{wire:?}: {path}: {result:?}"
            );
            assert!(wire.is_error(result), "{wire:?}: {result:?}");
        }
        for path in [
            "proj/rust-toolchain.toml",
            "proj/rust-toolchain",
            "proj/.zed",
            "proj/.pre-commit-config.yaml",
            "proj/lefthook.yml",
            "proj/.overcommit.yml",
            "proj/.husky",
            "proj/.git/hoo\u{212a}s",
            "proj/.v\u{17f}code",
            "proj/GOLEM-FORGE.CONFIG.YAML",
        ] {
            assert!(!env.path().join(path).exists(), "{wire:?}: {path} planted");
        }
        assert!(!wire.is_error(&results[planted.len()]), "{wire:?}");
        assert_eq!(
            env.read("proj/caf\u{e9}.md").as_deref(),
            Some("fine\n"),
            "{wire:?}"
        );
    }
}
