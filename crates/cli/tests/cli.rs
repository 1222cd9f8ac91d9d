//! What the user sees from the command line: help, version, usage errors, the commands that
//! later issues bring, and where diagnostics go.

use insta::assert_snapshot;

use crate::common::TestEnv;

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
fn commands_not_built_yet_say_so_and_fail() {
    let env = TestEnv::new();
    assert_snapshot!(env.run(&["run", "greeter", "hello"]), @r"
    [stderr]
    Error: `golem-forge run` is not available yet: it arrives with the worker runtime (issue #4)
    Hint: Run `golem-forge --help` to see what each command will do
    [exit status: 2]
    ");
    for args in [
        &["chat", "greeter"][..],
        &["serve", "greeter"],
        &["init"],
        &["check", "greeter"],
        &["sessions"],
        &["sessions", "show", "abc"],
    ] {
        let out = env.run(args);
        assert!(out.contains("is not available yet"), "{args:?}: {out}");
        assert!(out.ends_with("[exit status: 2]\n"), "{args:?}: {out}");
        assert!(
            out.starts_with("[stderr]\n"),
            "nothing may go to stdout: {out}"
        );
    }
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
    let output = env
        .command()
        .args(["run", "greeter", "--json"])
        .env("GOLEM_FORGE_LOG", "debug")
        .output()
        .unwrap();
    assert!(
        output.stdout.is_empty(),
        "stdout must stay clean for --json"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("run requested"), "{stderr}");
}

#[test]
fn diagnostics_can_go_to_a_log_file() {
    let env = TestEnv::new();
    let log = env.path().join("golem.log");
    let output = env
        .command()
        .args(["check", "greeter"])
        .env("GOLEM_FORGE_LOG", "golem_forge=debug")
        .env("GOLEM_FORGE_LOG_FILE", &log)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("check requested"), "{stderr}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("check requested"), "{logged}");
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
    let out = crate::common::render(&output);
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
    let out = crate::common::render(&output);
    assert!(out.contains("cannot open the log file"), "{out}");
    assert!(out.contains("GOLEM_FORGE_LOG_FILE"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}
