//! `golem-forge init` scaffolds a project that runs offline at once, and `golem-forge check`
//! describes it without running anything.

use insta::assert_snapshot;

use golem_testkit::cli::TestEnv;

fn normalized(env: &TestEnv, text: &str) -> String {
    let root = env.path().display().to_string();
    let text = text.replace(&root, "[ROOT]");
    // Table columns widen with the temp dir's name; squeeze runs of padding for a stable view.
    text.lines()
        .map(|line| {
            let mut out = String::new();
            let mut last_space = false;
            for c in line.chars() {
                let space = c == ' ' || c == '─' || c == '═';
                if !(space && last_space) {
                    out.push(c);
                }
                last_space = space;
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn init_then_run_and_check_offline() {
    let env = TestEnv::new();
    let out = env.run(&["init", "proj"]);
    assert!(out.contains("Created a worker project in proj"), "{out}");
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    for file in [
        "proj/golem-forge.config.yaml",
        "proj/main.worker",
        "proj/workspace/README.md",
    ] {
        assert!(env.path().join(file).is_file(), "{file} missing");
    }

    let out = env.run(&["run", "proj", "hello"]);
    assert!(out.starts_with("Test model: you said \"hello\"."), "{out}");
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    let sessions = env.path().join("proj/.golem-forge/sessions");
    assert_eq!(
        std::fs::read_dir(&sessions).unwrap().count(),
        1,
        "one transcript"
    );

    assert_snapshot!(normalized(&env, &env.run(&["check", "proj"])));
}

/// What golem-forge keeps for itself stays out of the project's repository; the project's
/// approval rules can be committed.
#[test]
fn init_keeps_the_state_folder_out_of_git_but_not_the_rules() {
    let env = TestEnv::new();
    let out = env.run(&["init", "proj"]);
    assert!(out.contains("  .golem-forge/.gitignore\n"), "{out}");
    let proj = env.path().join("proj");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&proj)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    let out = env.run(&["run", "proj", "hello"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    let state = proj.join(".golem-forge");
    for (file, text) in [
        ("approvals.yaml", "rules: []\n"),
        ("inbox/1.json", "{}"),
        ("batches/b1/batch.json", "{}"),
        ("undo/s1/journal.jsonl", ""),
        ("chat-history", "hello\n"),
        ("a-folder-of-a-later-version/x", ""),
    ] {
        let path = state.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    assert!(
        std::fs::read_dir(state.join("sessions")).unwrap().count() > 0,
        "the run kept a transcript"
    );
    let mut listed: Vec<String> = git(&["status", "--porcelain", "--untracked-files=all"])
        .lines()
        .map(|line| line.trim_start_matches("?? ").to_owned())
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ".golem-forge/.gitignore",
            ".golem-forge/approvals.yaml",
            "golem-forge.config.yaml",
            "main.worker",
            "tests/assistant.yaml",
            "workspace/README.md",
            // What the worker wrote in its zone is the project's own.
            "workspace/notes.md",
        ]
    );
}

/// The project `init` makes comes with test cases that pass as written and that pin the
/// worker's zone policy: a new file is created without asking, a change asks first. The real
/// zone folder is not touched by them.
#[test]
fn init_writes_test_cases_that_pass_and_check_the_zone_policy() {
    let env = TestEnv::new();
    let out = env.run(&["init", "proj"]);
    assert!(out.contains("  tests/assistant.yaml\n"), "{out}");
    assert!(out.contains("golem-forge test proj"), "{out}");
    let out = env.run(&["test", "proj"]);
    assert!(
        out.contains("✓ assistant · creates a new note without asking ("),
        "{out}"
    );
    assert!(
        out.contains("✓ assistant · asks before changing a file, and a no leaves it as it was ("),
        "{out}"
    );
    assert!(out.contains("2 passed, 0 failed\n"), "{out}");
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    // From inside the project, the default PATH is its root.
    let inside = env
        .command()
        .current_dir(env.path().join("proj"))
        .arg("test")
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(0), "{inside:?}");
    let mut zone: Vec<String> = std::fs::read_dir(env.path().join("proj/workspace"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    zone.sort();
    assert_eq!(zone, ["README.md"], "the cases ran in a scratch zone");

    // A changed policy is what the cases catch: creating a file now asks.
    let worker = env.path().join("proj/main.worker");
    let text = std::fs::read_to_string(&worker).unwrap();
    assert!(text.contains("create: preApproved"), "{text}");
    std::fs::write(&worker, text.replace("create: preApproved", "create: ask")).unwrap();
    let out = env.run(&["test", "proj"]);
    assert!(
        out.contains("✗ assistant · creates a new note without asking ("),
        "{out}"
    );
    assert!(out.contains("expect.asked"), "{out}");
    assert!(out.ends_with("[exit status: 1]\n"), "{out}");
}

/// A second `init` leaves the project's own test cases as they are, as it does every file.
#[test]
fn a_second_init_keeps_the_project_s_test_cases() {
    let env = TestEnv::new();
    let first = env.run(&["init"]);
    assert!(first.ends_with("[exit status: 0]\n"), "{first}");
    let mine = "cases:\n  - name: mine\n    model: [{ text: hi }]\n";
    env.write("tests/assistant.yaml", mine);
    let again = env.run(&["init"]);
    assert!(again.contains("./tests/assistant.yaml"), "{again}");
    assert!(again.ends_with("[exit status: 2]\n"), "{again}");
    assert_eq!(
        std::fs::read_to_string(env.path().join("tests/assistant.yaml")).unwrap(),
        mine
    );
    // Only the test file in the way is enough to stop it.
    let other = TestEnv::new();
    other.write("tests/assistant.yaml", mine);
    let out = other.run(&["init"]);
    assert!(
        out.contains("./tests/assistant.yaml already exists"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    assert!(
        !other.path().join("main.worker").exists(),
        "nothing half-created"
    );
}

#[test]
fn init_never_overwrites() {
    let env = TestEnv::new();
    std::fs::write(env.path().join("main.worker"), "mine").unwrap();
    let out = env.run(&["init"]);
    assert!(out.contains("main.worker already exists"), "{out}");
    assert!(
        out.contains("Hint: Run `golem-forge init NEW_DIR`"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    assert_eq!(
        std::fs::read_to_string(env.path().join("main.worker")).unwrap(),
        "mine"
    );
    assert!(
        !env.path().join("golem-forge.config.yaml").exists(),
        "nothing half-created"
    );
}

#[test]
fn a_second_init_names_every_file_it_would_overwrite_in_one_sentence() {
    let env = TestEnv::new();
    let first = env.run(&["init"]);
    assert!(first.ends_with("[exit status: 0]\n"), "{first}");
    let again = env.run(&["init"]);
    assert!(
        again.contains(
            "./golem-forge.config.yaml, ./main.worker, ./tests/assistant.yaml, \
             ./workspace/README.md and ./.golem-forge/.gitignore already exist"
        ),
        "{again}"
    );
    assert!(again.ends_with("[exit status: 2]\n"), "{again}");
}

#[test]
fn check_of_the_current_directory_shows_the_worker_s_path_without_dots() {
    let env = TestEnv::new();
    let made = env.run(&["init"]);
    assert!(made.ends_with("[exit status: 0]\n"), "{made}");
    let checked = env.run(&["check", "."]);
    let root = env.path().display().to_string();
    assert!(
        checked.contains(&format!("Worker assistant ({root}/main.worker)")),
        "{checked}"
    );
    assert!(!checked.contains("/./"), "{checked}");
}

#[test]
fn check_reports_a_bad_worker_with_file_line_and_key() {
    let env = TestEnv::new();
    std::fs::write(
        env.path().join("bad.worker"),
        "---\nname: bad\ntoolset:\n  filesystem: {}\n---\nHi\n",
    )
    .unwrap();
    let out = env.run(&["check", "bad.worker"]);
    assert!(out.contains("line 3"), "{out}");
    assert!(out.contains("`toolset`"), "{out}");
    assert!(out.contains("did you mean `toolsets`"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

/// YAML 1.2: a bare `n` in a schema is the string, and a boolean key written `yes` is refused
/// at its line with what to write.
#[test]
fn check_reads_worker_files_by_yaml_1_2_rules() {
    let env = TestEnv::new();
    env.write(
        "w.worker",
        "---\nname: w\noutput:\n  schema: { type: object, properties: { n: { enum: [y, n, yes, no, on, off] } }, required: [n] }\n---\nHi\n",
    );
    let out = env.run(&["check", "w.worker", "--model", "test:default"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    env.write("repo/README.md", "");
    env.write(
        "g.worker",
        "---\nname: g\nsandbox:\n  zones:\n    - { name: repo }\ntoolsets:\n  git:\n    zone: repo\n    hooks: no\n---\nHi\n",
    );
    let out = env.run(&["check", "g.worker", "--model", "test:default"]);
    assert!(
        out.contains("line 9: `toolsets.git.hooks` must be true or false, found \"no\" (YAML 1.2 reads `yes`, `no`, `on` and `off` as text)"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn check_without_a_model_reports_everything_else_and_the_missing_model() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path().join("notes")).unwrap();
    std::fs::write(
        env.path().join("w.worker"),
        "---\nname: w\nsandbox:\n  zones:\n    - { name: notes, mode: rw, approval: { write: ask } }\n\
         budget: { tokens: 5000 }\ntoolsets:\n  filesystem: {}\n---\nHi\n",
    )
    .unwrap();
    let out = env.run(&["check", "w.worker"]);
    assert!(out.contains("model: none"), "{out}");
    assert!(out.contains("/notes"), "the zones: {out}");
    assert!(out.contains("write_file"), "the tools: {out}");
    assert!(out.contains("budget per run"), "the budget: {out}");
    let problems = out.split_once("\nProblems\n").map(|(_, p)| p).unwrap_or("");
    assert!(
        problems.contains("no model for worker w"),
        "the missing model as a problem: {out}"
    );
    assert!(!out.contains("\nOK\n"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn a_missing_api_key_is_a_configuration_error_with_a_hint() {
    let env = TestEnv::new();
    std::fs::write(
        env.path().join("w.worker"),
        "---\nname: w\nmodel: anthropic:claude-haiku-4-5\n---\nHi\n",
    )
    .unwrap();
    let out = env.run(&["run", "w.worker", "hello"]);
    assert!(
        out.contains("no API key for anthropic: set the ANTHROPIC_API_KEY environment variable"),
        "{out}"
    );
    assert!(
        out.contains("Hint: Set ANTHROPIC_API_KEY, or run offline with `--model test:default`"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

/// A rule that pre-approves a bare program that can run others (`git `, `find `) is a
/// warning with narrow rules to use instead; narrow rules and harmless programs are not.
#[test]
fn check_warns_about_rules_that_pre_approve_a_program_that_runs_others() {
    let env = TestEnv::new();
    env.mkdir("work");
    env.write(
        "w.worker",
        "---\nname: w\nmodel: test:default\nsandbox:\n  zones:\n    - { name: work, mode: rw }\n\
         toolsets:\n  shell:\n    rules:\n\
         \x20     - { pattern: \"git status\", approval: preApproved }\n\
         \x20     - { pattern: \"git \", approval: preApproved }\n\
         \x20     - { pattern: \"find\", approval: preApproved }\n\
         \x20     - { pattern: \"python3 \", approval: ask }\n\
         \x20     - { pattern: \"wc \", approval: preApproved }\n\
         \x20     - { pattern: \"rm \", approval: blocked }\n\
         ---\nHi\n",
    );
    let out = env.run(&["check", "w.worker"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    let warnings: Vec<&str> = out
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    assert!(
        out.contains("warning: shell rule 2 (`git`) pre-approves every `git` command"),
        "{out}"
    );
    assert_snapshot!(warnings.join("\n"));
}
