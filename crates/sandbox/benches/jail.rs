//! Jail overhead: the same command spawned bare and run through the full jail (helper stages,
//! namespaces, new root, Landlock, seccomp, rlimits, pids cgroup, output capture), in one run.
//! `cargo bench -p golem-sandbox --bench jail`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::LazyLock;
use std::time::Duration;

use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailPolicy};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

struct Setup {
    _dir: tempfile::TempDir,
    jail: Jail,
    runtime: tokio::runtime::Runtime,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(dir.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_golem-jail"));
    let jail = Jail::new(helper, sandbox, JailPolicy::default());
    jail.preflight().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Setup {
        _dir: dir,
        jail,
        runtime,
    }
});

const CASES: &[(&str, &[&str])] = &[("bash", &["-c", "true"]), ("python3", &["-c", "pass"])];

#[divan::bench(args = ["bash -c true", "python3 -c pass"], sample_count = 40)]
fn bare(case: &str) {
    let (program, args) = CASES.iter().find(|(p, _)| case.starts_with(p)).unwrap();
    // The same binaries the jail finds on its PATH (not, say, a pyenv shim earlier on ours).
    let status = Command::new(format!("/usr/bin/{program}"))
        .args(*args)
        .status()
        .unwrap();
    assert!(status.success());
}

#[divan::bench(args = ["bash -c true", "python3 -c pass"], sample_count = 40)]
fn jailed(case: &str) {
    let (program, args) = CASES.iter().find(|(p, _)| case.starts_with(p)).unwrap();
    let command = JailCommand {
        program: (*program).to_owned(),
        script: None,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: BTreeMap::new(),
        cwd_zone: Some("work".into()),
        timeout: Duration::from_secs(30),
    };
    let setup = &*SETUP;
    let out = setup
        .runtime
        .block_on(setup.jail.run(&command, &CancellationToken::new()))
        .unwrap();
    assert_eq!(out.exit, JailExit::Code(0), "{out:?}");
}
