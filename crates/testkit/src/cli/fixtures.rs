//! Worker programs on disk for the binary's tests: worker files ([`worker`],
//! [`fs_front_matter`]), the project `proj/` in a [`TestEnv`] ([`TestEnv::project`]), and a
//! project together with the mock model it talks to ([`Project`]).

use serde_json::Value;

use super::env::{TestEnv, provider_env};
use crate::Wire;
use crate::mock::{MockServer, Reply};

/// The directory of [`TestEnv::project`], relative to the test's temp dir.
pub const PROJECT: &str = "proj";

/// The program config of [`TestEnv::project`].
const PROGRAM_CONFIG: &str = "delegation:\n  max_depth: 5\n";

/// A worker file named `name` described as "the NAME worker", with `front_matter` (YAML
/// lines, each ending in a newline).
pub fn worker(name: &str, front_matter: &str) -> String {
    worker_described(name, &format!("the {name} worker"), front_matter)
}

/// A worker file named `name` with `description` (what a front end shows for it) and
/// `front_matter`.
pub fn worker_described(name: &str, description: &str, front_matter: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n{front_matter}---\nYou are the {name} \
         worker.\n"
    )
}

/// The line under a zone that makes its writes ask (for [`fs_front_matter`]).
pub const WRITES_ASK: &str = "      approval: { write: ask }\n";

/// The front matter of a worker with one read-write zone `out` and the filesystem tools;
/// `zone_approval` goes under the zone (an indented `approval:` line such as
/// `"      approval: { write: ask }\n"`, or nothing for the default).
pub fn fs_front_matter(zone_approval: &str) -> String {
    format!(
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n{zone_approval}toolsets:\n  \
         filesystem: {{}}\n"
    )
}

impl TestEnv {
    /// Writes the project [`PROJECT`]: a program config (delegation up to five deep), the zone
    /// directory `out` and `workers` (file name, text).
    pub fn project<T: AsRef<str>>(&self, workers: &[(&str, T)]) {
        self.write(
            &format!("{PROJECT}/golem-forge.config.yaml"),
            PROGRAM_CONFIG,
        );
        self.mkdir(&format!("{PROJECT}/out"));
        for (file, text) in workers {
            self.write(&format!("{PROJECT}/{file}"), text.as_ref());
        }
    }
}

/// A project under [`PROJECT`] whose model is a mock server with scripted replies.
pub struct Project {
    /// The temporary home and working directory.
    pub env: TestEnv,
    /// The mock model.
    pub model: MockServer,
}

impl Project {
    /// Writes `workers` (file name, text) with [`TestEnv::project`] and starts the mock model
    /// with `replies`.
    pub fn new(workers: &[(&str, String)], replies: Vec<Reply>) -> Self {
        let env = TestEnv::new();
        env.project(workers);
        Self {
            env,
            model: MockServer::start_blocking(replies),
        }
    }

    /// The whole environment of a server the test starts (or has a client start): the clean
    /// one of [`TestEnv::clean_env`] with `wire`'s provider pointed at the mock model, and
    /// `GOLEM_FORGE_LOG` and `GOLEM_FORGE_LOG_FILE` when set for the tests, to see the server's
    /// diagnostics when one fails.
    pub fn server_env(&self, wire: Wire) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = provider_env(wire, &self.model)
            .into_iter()
            .chain(self.env.clean_env())
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        for name in ["GOLEM_FORGE_LOG", "GOLEM_FORGE_LOG_FILE"] {
            if let Ok(value) = std::env::var(name) {
                vars.push((name.into(), value));
            }
        }
        vars
    }

    /// The text of `relative` under [`PROJECT`].
    pub fn read(&self, relative: &str) -> Option<String> {
        self.env.read(&format!("{PROJECT}/{relative}"))
    }

    /// The transcripts of the project's sessions.
    pub fn transcripts(&self) -> Vec<Vec<Value>> {
        self.env.transcripts(PROJECT)
    }
}
