//! A stdio MCP server in the process jail (`jail:` in its configuration): started with
//! [`Jail::spawn`], so it sees only its zones at their virtual paths (`/<zone>`), the network
//! only when configured, and the toolset's limits. Its stdin and stdout become the MCP
//! transport; its environment is the jail's own base (its `PATH` of system directories,
//! `HOME` and `TMPDIR` in the private `/tmp`, our `LANG`) plus the server's own `env`: nothing
//! else of ours, so never our API keys. A working directory below a zone's root is entered by
//! `/bin/sh` before it `exec`s the server (the jail itself starts programs at a zone's root or
//! in `/tmp`). When the server does not start, [`ending`] says how it ended and gives the end
//! of its stderr, for the same error as a server outside the jail (`server.rs`). The
//! [`JailProcess`] lives as long as the connection; dropping it kills everything in the jail.

use std::collections::BTreeMap;
use std::time::Duration;

use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailProcess, ZoneWrites};
use tokio::io::BufReader;
use tokio::process::{ChildStdin, ChildStdout};

use super::server::{Ending, GRACE, StartError, Unanswered};

/// How long a jailed server that was killed gets to be reported ended.
const KILLED: Duration = Duration::from_secs(2);

/// A stdio server's jail and where in it the server starts.
#[derive(Debug, Clone)]
pub struct McpJailOptions {
    /// The jail: its zones (shown at `/<zone>`), network and limits.
    pub jail: Jail,
    /// The working directory in the jail, a normalized virtual path (`/docs`,
    /// `/docs/src`); `None`: the jail's private `/tmp`.
    pub cwd: Option<String>,
}

impl McpJailOptions {
    /// The names of the zones the server sees, in order.
    pub fn zones(&self) -> Vec<String> {
        self.jail
            .sandbox()
            .zones()
            .iter()
            .map(|zone| zone.name().to_owned())
            .collect()
    }

    /// Whether the server may use the network.
    pub fn network(&self) -> bool {
        self.jail.policy().network
    }

    /// `zones docs, src, no network` (`no zones` without any), for the approval prompt.
    pub fn summary(&self) -> String {
        let zones = self.zones();
        let zones = if zones.is_empty() {
            "no zones".to_owned()
        } else {
            format!("zones {}", zones.join(", "))
        };
        let network = if self.network() {
            "with network"
        } else {
            "no network"
        };
        format!("{zones}, {network}")
    }

    /// The zone a server starts in, and the path below its root when it starts deeper.
    fn start_dir(&self) -> (Option<String>, Option<&str>) {
        let Some(cwd) = self.cwd.as_deref() else {
            return (None, None);
        };
        let inside = cwd.trim_start_matches('/');
        match inside.split_once('/') {
            Some((zone, rest)) if !rest.is_empty() => (Some(zone.to_owned()), Some(cwd)),
            Some((zone, _)) => (Some(zone.to_owned()), None),
            None => (Some(inside.to_owned()), None),
        }
    }

    /// The command that starts `program` with `args` and the server's own `env`.
    fn command(
        &self,
        program: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> JailCommand {
        let (cwd_zone, below) = self.start_dir();
        let (program, args) = match below {
            None => (program.to_owned(), args.to_vec()),
            Some(dir) => {
                // `sh -c SCRIPT DIR PROGRAM ARGS…`: `$0` is DIR, `"$@"` the server's words.
                let mut words = vec![
                    "-c".to_owned(),
                    "cd -- \"$0\" && exec \"$@\"".to_owned(),
                    dir.to_owned(),
                    program.to_owned(),
                ];
                words.extend(args.iter().cloned());
                ("/bin/sh".to_owned(), words)
            }
        };
        JailCommand {
            program,
            script: None,
            args,
            env: env.clone(),
            cwd_zone,
            // Not used by `spawn`: the caller bounds the handshake and each call.
            timeout: Duration::ZERO,
        }
    }
}

/// The transport of a jailed server: what it prints, and where we write.
pub(super) type JailedIo = (BufReader<ChildStdout>, ChildStdin);

/// Starts the server `name` (`program` with `args` and its own `env`) in its jail.
pub(super) async fn spawn(
    name: &str,
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    jail: &McpJailOptions,
) -> Result<(JailProcess, JailedIo), StartError> {
    let command = jail.command(program, args, env);
    let failed = |why: String| StartError::Spawn {
        server: name.to_owned(),
        why,
    };
    // What the server changes in its zones waits in copy-on-write layers for the gate
    // (`Server::call` hands it over, `process::changes` settles it).
    let mut process = jail
        .jail
        .clone()
        .with_zone_writes(ZoneWrites::Changeset)
        .spawn(&command)
        .await
        .map_err(|e| failed(format!("`{program}` in the jail ({}): {e}", jail.summary())))?;
    let stdout = process.take_stdout();
    let stdin = process.take_stdin();
    match (stdout, stdin) {
        (Some(stdout), Some(stdin)) => Ok((process, (stdout, stdin))),
        _ => Err(failed(
            "it was started in the jail without its stdin and stdout".to_owned(),
        )),
    }
}

/// How the jailed server `process` ended after its handshake `failure`, and its stderr as far
/// as the jail kept it: given [`GRACE`] to end by itself when the connection failed, killed
/// when it still runs.
pub(super) async fn ending(mut process: JailProcess, failure: Unanswered) -> (Ending, String) {
    let why = match failure {
        Unanswered::TimedOut(limit) => {
            process.kill();
            let _ended = tokio::time::timeout(KILLED, process.wait()).await;
            return (Ending::TimedOut(limit), process.stderr().text);
        }
        Unanswered::Failed(why) => why,
    };
    let (ended, killed) = match tokio::time::timeout(GRACE, process.wait()).await {
        Ok(ended) => (ended, false),
        Err(_) => {
            process.kill();
            match tokio::time::timeout(KILLED, process.wait()).await {
                Ok(ended) => (ended, true),
                Err(_) => (Ok(JailExit::Interrupted), true),
            }
        }
    };
    let ending = match ended {
        _ if killed => Ending::Failed(why),
        Ok(JailExit::Code(code)) => Ending::Exited(code),
        Ok(JailExit::Signal(signal)) => Ending::Signal(signal),
        Ok(JailExit::LimitExceeded(limit)) => Ending::Stopped(limit),
        Ok(JailExit::TimedOut | JailExit::Interrupted) => Ending::Failed(why),
        Err(e) => Ending::Unknown(why, format!("its end is not known: {e}")),
    };
    (ending, process.stderr().text)
}

#[cfg(test)]
mod tests {
    use golem_sandbox::Sandbox;
    use golem_sandbox::jail::JailPolicy;

    use super::*;

    fn options(cwd: Option<&str>) -> McpJailOptions {
        McpJailOptions {
            jail: Jail::new(
                "golem-forge".into(),
                Sandbox::empty(),
                JailPolicy::default(),
            ),
            cwd: cwd.map(str::to_owned),
        }
    }

    #[test]
    fn the_working_directory_is_a_zone_or_entered_by_the_shell() {
        let env = BTreeMap::from([("TOKEN".to_owned(), "t".to_owned())]);
        let args = vec!["server.js".to_owned()];
        let at_root = options(Some("/docs")).command("node", &args, &env);
        assert_eq!(at_root.program, "node");
        assert_eq!(at_root.args, args);
        assert_eq!(at_root.cwd_zone.as_deref(), Some("docs"));
        assert_eq!(at_root.env, env, "the server's own variables, nothing else");
        let below = options(Some("/docs/src/app")).command("node", &args, &env);
        assert_eq!(below.program, "/bin/sh");
        assert_eq!(
            below.args,
            [
                "-c",
                "cd -- \"$0\" && exec \"$@\"",
                "/docs/src/app",
                "node",
                "server.js"
            ]
        );
        assert_eq!(below.cwd_zone.as_deref(), Some("docs"));
        let tmp = options(None).command("node", &args, &env);
        assert_eq!(tmp.cwd_zone, None);
        assert_eq!(options(None).summary(), "no zones, no network");
    }
}
