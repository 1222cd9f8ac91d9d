//! What `golem-forge mcp` refuses to start with (exit 2, before any client connects): a worker
//! file that does not load (named with its file, line and key), two workers of the same name,
//! a worker that does not exist, a bad `--http` address or token.

use crate::harness::{reader, worker, writer};
use golem_testkit::cli::{TestEnv, render};

fn mcp(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> String {
    render(
        &env.command()
            .arg("mcp")
            .args(args)
            .envs(vars.iter().copied())
            .output()
            .unwrap(),
    )
}

#[test]
fn a_worker_file_that_does_not_load_is_reported_with_its_file_line_and_key() {
    let env = TestEnv::new();
    env.write("proj/main.worker", &writer(""));
    let broken = env.write(
        "proj/broken.worker",
        &worker(
            "broken",
            "Broken",
            "toolsets:\n  filesystem: {}\n  shel: {}\n",
        ),
    );
    let out = mcp(&env, &["proj/main.worker", "proj/broken.worker"], &[]);
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    assert!(
        out.starts_with("[stderr]\nError: worker file "),
        "nothing on stdout: {out}"
    );
    assert!(out.contains(&broken.display().to_string()), "{out}");
    assert!(
        out.contains("line 6: unknown key `shel` in `toolsets`"),
        "{out}"
    );
}

#[test]
fn two_workers_of_one_name_a_missing_worker_and_bad_options_are_refused() {
    let env = TestEnv::new();
    env.write("proj/main.worker", &writer(""));
    env.write("proj/other/main.worker", &writer(""));
    env.write("proj/reader.worker", &reader());
    let out = mcp(&env, &["proj/main.worker", "proj/other/main.worker"], &[]);
    assert!(out.contains("two workers are named `main`"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");

    let out = mcp(&env, &["proj/reader.worker", "proj/nobody.worker"], &[]);
    assert!(out.contains("nobody.worker"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");

    let out = mcp(&env, &["proj/reader.worker", "--http", "somewhere"], &[]);
    assert!(out.contains("is not an address"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");

    let out = mcp(
        &env,
        &["proj/reader.worker", "--http", "0"],
        &[("GOLEM_FORGE_MCP_TOKEN", "short")],
    );
    assert!(
        out.contains("GOLEM_FORGE_MCP_TOKEN must be at least 16"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}
