//! What the user sees from the command line: help, version, usage errors, the commands that
//! later issues bring, and where diagnostics go.

use insta::assert_snapshot;

use golem_testkit::cli::TestEnv;

#[test]
fn help_lists_every_subcommand() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["--help"]));
}

#[test]
fn run_help_lists_the_common_options() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["run", "--help"]));
}

#[test]
fn version() {
    let env = TestEnv::new();
    let out = env.run(&["--version"]);
    assert_eq!(
        out,
        format!(
            "golem-forge {}\n[exit status: 0]\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn chat_without_a_terminal_and_serve_without_a_worker_say_why_they_cannot_run() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["chat", "greeter"]), @r"
    [stderr]
    Error: chat needs a terminal on stdin
    Hint: Use `golem-forge run WORKER INPUT` (or --json) from scripts
    [exit status: 2]
    ");
    let out = env.run(&["serve", "greeter"]);
    assert!(out.contains("no worker named `greeter`"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    assert!(
        out.starts_with("[stderr]\n"),
        "nothing may go to stdout: {out}"
    );
    // A worker, or --inbox (the inbox page), never both.
    let out = env.run(&["serve"]);
    assert!(out.contains("<WORKER>"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    let out = env.run(&["serve", "greeter", "--inbox"]);
    assert!(out.contains("cannot be used with"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    let out = env.run(&["serve", "--inbox", "--model", "test:x"]);
    assert!(out.contains("only --trace applies"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    let out = env.run(&["run", "greeter", "--approval", "sometimes"]);
    assert!(out.contains("invalid value 'sometimes'"), "{out}");
    assert!(out.contains("approve_all"), "the choices are listed: {out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    let out = env.run(&["frobnicate"]);
    assert!(
        out.contains("unrecognized subcommand 'frobnicate'"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn diagnostics_go_to_stderr_never_stdout() {
    let env = TestEnv::new();
    std::fs::write(
        env.path().join("w.worker"),
        "---\nname: w\nmodel: test:default\n---\nHi\n",
    )
    .unwrap();
    let output = env
        .command()
        .args(["run", "w.worker", "hello", "--json"])
        .env("GOLEM_FORGE_LOG", "debug")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.is_empty());
    for line in stdout.lines() {
        let event: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(event["type"].is_string(), "{line}");
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("DEBUG"), "{stderr}");
}

#[test]
fn diagnostics_can_go_to_a_log_file() {
    let env = TestEnv::new();
    let log = env.path().join("golem.log");
    let output = env
        .command()
        .args(["chat", "greeter"])
        .env("GOLEM_FORGE_LOG", "golem_forge=debug")
        .env("GOLEM_FORGE_LOG_FILE", &log)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("chat requested"), "{stderr}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("chat requested"), "{logged}");
}

#[test]
fn a_bad_log_filter_is_a_clear_error() {
    let env = TestEnv::new();
    let output = env
        .command()
        .args(["sessions"])
        .env("GOLEM_FORGE_LOG", "golem=[")
        .output()
        .unwrap();
    let out = golem_testkit::cli::render(&output);
    assert!(
        out.contains("GOLEM_FORGE_LOG=`golem=[` is not a valid log filter"),
        "{out}"
    );
    assert!(out.contains("Hint:"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn an_unwritable_log_file_is_a_clear_error() {
    let env = TestEnv::new();
    let output = env
        .command()
        .args(["sessions"])
        .env("GOLEM_FORGE_LOG_FILE", env.path().join("missing-dir/x.log"))
        .output()
        .unwrap();
    let out = golem_testkit::cli::render(&output);
    assert!(out.contains("cannot open the log file"), "{out}");
    assert!(out.contains("GOLEM_FORGE_LOG_FILE"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn a_bare_test_model_means_test_default_from_the_flag_and_the_environment() {
    let env = TestEnv::new();
    std::fs::write(env.path().join("w.worker"), "---\nname: w\n---\nHi\n").unwrap();
    for (args, variable) in [
        (&["run", "w.worker", "hello", "--model", "test"][..], None),
        (&["run", "w.worker", "hello"][..], Some("test")),
    ] {
        let mut command = env.command();
        command.args(args).env_remove("GOLEM_FORGE_MODEL");
        if let Some(value) = variable {
            command.env("GOLEM_FORGE_MODEL", value);
        }
        let output = command.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(text.contains("Test model: you said \"hello\""), "{text}");
    }
    let output = env
        .command()
        .args(["run", "w.worker", "hello", "--model", "anthropic"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("model `anthropic` names only a provider: write anthropic:MODEL"),
        "{stderr}"
    );
}

#[test]
fn schema_worker_prints_the_committed_schema() {
    let env = TestEnv::new();
    let output = env
        .std_command()
        .args(["schema", "worker"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schema/worker.schema.json"),
    )
    .unwrap();
    assert!(output.stderr.is_empty(), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), committed);
}
