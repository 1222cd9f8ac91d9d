//! The process jail, run for real through the `golem-jail` helper binary: ordinary behaviour
//! (`behaviour`) and the escape suite (`escapes`), each case asserting the jail held.

mod behaviour;
mod best_effort;
mod changeset;
mod escapes;
mod interactive;
mod unprivileged;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailOutput, JailPolicy, JailScript};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// The content of the sentinel files outside the zones.
pub const SECRET: &str = "OUTSIDE-SECRET-51d2";

/// A worker directory with zones `input` (ro) and `output` (rw), a sentinel file beside them
/// and one in the `input` zone.
pub struct JailEnv {
    pub tmp: TempDir,
    pub sandbox: Sandbox,
}

impl JailEnv {
    pub fn new() -> JailEnv {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        std::fs::create_dir_all(work.join("input")).unwrap();
        std::fs::create_dir_all(work.join("output")).unwrap();
        std::fs::write(work.join("input/data.txt"), "input data\n").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), SECRET).unwrap();
        let sandbox = Sandbox::open(
            &work,
            &[
                ZoneConfig::new("input", ZoneMode::Ro),
                ZoneConfig::new("output", ZoneMode::Rw),
            ],
        )
        .unwrap();
        JailEnv { tmp, sandbox }
    }

    pub fn outside(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    pub fn output(&self, name: &str) -> PathBuf {
        self.tmp.path().join("work/output").join(name)
    }

    pub fn jail(&self, policy: JailPolicy) -> Jail {
        Jail::new(helper(), self.sandbox.clone(), policy)
    }

    /// Runs a bash script in the default jail with the working directory `output`.
    pub async fn bash(&self, script: &str) -> JailOutput {
        self.bash_with(JailPolicy::default(), script, Duration::from_secs(30))
            .await
    }

    pub async fn bash_with(
        &self,
        policy: JailPolicy,
        script: &str,
        timeout: Duration,
    ) -> JailOutput {
        let command = script_command("bash", "main.sh", script, timeout);
        self.jail(policy)
            .run(&command, &CancellationToken::new())
            .await
            .unwrap()
    }

    /// Runs a Python program in the default jail.
    pub async fn python(&self, code: &str) -> JailOutput {
        let command = script_command("python3", "main.py", code, Duration::from_secs(30));
        self.jail(JailPolicy::default())
            .run(&command, &CancellationToken::new())
            .await
            .unwrap()
    }
}

/// The variable naming a copy of the helper (see `unprivileged.rs`), used instead of the one
/// cargo built when set.
pub const HELPER_COPY_VAR: &str = "GOLEM_JAIL_TEST_HELPER";

pub fn helper() -> PathBuf {
    std::env::var_os(HELPER_COPY_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_golem-jail")))
}

pub fn script_command(program: &str, file: &str, code: &str, timeout: Duration) -> JailCommand {
    JailCommand {
        program: program.into(),
        script: Some(JailScript {
            file_name: file.into(),
            contents: code.as_bytes().to_vec(),
        }),
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd_zone: Some("output".into()),
        timeout,
    }
}

/// Asserts the run exited with `code`, showing its output otherwise.
#[track_caller]
pub fn assert_exit(out: &JailOutput, code: i32) {
    assert_eq!(
        out.exit,
        JailExit::Code(code),
        "stdout: {}\nstderr: {}",
        out.stdout.text,
        out.stderr.text
    );
}
