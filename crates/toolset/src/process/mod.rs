//! What `run_code`, `shell` and the git tools share: running one command in the toolset's
//! [`Jail`] with the working directory and time limit of the toolset, and turning how it ended
//! into a `code_result` or a `ToolError` (`outcome.rs`), or, for a tool that reads the output,
//! the output as captured (`Runner::run_captured`). `run_code` and `shell` run with the zones
//! behind copy-on-write layers, and what their programs changed passes the zones' approval
//! before it lands (`changes.rs`). Nothing else here decides approval or parses a call's
//! arguments; each tool does that for itself.

pub mod changes;
mod outcome;
mod program;
mod timeout;

use std::collections::BTreeMap;

use golem_protocol::result::CodeResultData;
use golem_protocol::{Risk, ToolError};
use golem_sandbox::jail::{Jail, JailCommand, JailOutput};
use golem_sandbox::{Sandbox, ZoneMode};
use tokio_util::sync::CancellationToken;

pub use timeout::{DEFAULT_TIMEOUT, MAX_TIMEOUT, Timeouts};

/// One toolset's jail, limits and working directory.
#[derive(Debug)]
pub struct Runner {
    jail: Jail,
    timeouts: Timeouts,
    cwd_zone: Option<String>,
}

impl Runner {
    /// A runner whose commands start in `cwd_zone`, or when that is `None` in the first `rw`
    /// zone of the jail's sandbox, or when there is none in the private `/tmp`.
    pub fn new(jail: Jail, timeouts: Timeouts, cwd_zone: Option<String>) -> Runner {
        let cwd_zone = cwd_zone.or_else(|| default_cwd_zone(jail.sandbox()));
        Runner {
            jail,
            timeouts,
            cwd_zone,
        }
    }

    /// The time limits.
    pub fn timeouts(&self) -> &Timeouts {
        &self.timeouts
    }

    /// The working directory as the process sees it: `/<zone>`, or `/tmp`.
    pub fn workdir(&self) -> String {
        match &self.cwd_zone {
            Some(zone) => format!("/{zone}"),
            None => "/tmp".to_owned(),
        }
    }

    /// How risky a run is: outward-facing when the network is on.
    pub fn risk(&self) -> Risk {
        if self.jail.policy().network {
            Risk::High
        } else {
            Risk::Medium
        }
    }

    /// What a process can see, for tool descriptions.
    pub fn surroundings(&self) -> String {
        let zones: Vec<String> = self
            .jail
            .sandbox()
            .zones()
            .iter()
            .map(|zone| {
                let access = match zone.mode() {
                    ZoneMode::Rw => "read-write",
                    ZoneMode::Ro => "read-only",
                };
                format!("/{} ({access})", zone.name())
            })
            .collect();
        let zones = if zones.is_empty() {
            "no zones".to_owned()
        } else {
            format!("the zones {}", zones.join(", "))
        };
        let network = if self.jail.policy().network {
            "network access"
        } else {
            "no network"
        };
        format!(
            "It runs in a jail with {zones}, a private /tmp and {network}; the working \
             directory is {}",
            self.workdir()
        )
    }

    /// A command for `program` with `args`, in the working directory, with the limit for a
    /// call that asked for `timeout` seconds.
    pub fn command(&self, program: &str, args: Vec<String>, timeout: Option<u64>) -> JailCommand {
        JailCommand {
            program: program.to_owned(),
            script: None,
            args,
            env: BTreeMap::new(),
            cwd_zone: self.cwd_zone.clone(),
            timeout: self.timeouts.effective(timeout),
        }
    }

    /// Runs `command` until it ends, times out or `cancel` fires (`shown` is what ran, in the
    /// result and in errors), with the `rw` zones seen through copy-on-write layers: what it
    /// changed there reaches the zones only through the gate of [`changes::settle`] (as
    /// `tool`, asking through `ctx`), and the result lists what was applied. A run that did
    /// not end by itself (timeout, interrupt, a limit) changes nothing: its changes are
    /// discarded and its error says so. The jail checks the command itself (a working
    /// directory zone the worker lacks is its `Invalid` error, reported as `EXECUTION_ERROR`).
    pub async fn run_gated(
        &self,
        command: &JailCommand,
        shown: &str,
        ctx: &golem_core::tool::ToolContext,
        tool: &str,
    ) -> Result<CodeResultData, ToolError> {
        let run = self
            .jail
            .run_changeset(command, &ctx.cancel)
            .await
            .map_err(|err| outcome::jail_error(&err))?;
        let mut data =
            match outcome::outcome(shown, command.timeout, self.jail.policy(), run.output) {
                Ok(data) => data,
                Err(error) => return Err(changes::discarded(run.changeset, error).await),
            };
        let settled = changes::settle(run.changeset, self.jail.sandbox(), ctx, tool).await?;
        data.changes = settled.map(|settled| Box::new(settled.diff));
        Ok(data)
    }

    /// Runs `command` like [`Runner::run_captured`], but with the `rw` zones behind
    /// copy-on-write layers: gives back the output and what the program changed there, not
    /// applied (`None`: nothing), for the caller to settle ([`changes::settle`]) or discard. A
    /// process that did not end by itself changes nothing: its error says so.
    pub async fn run_captured_changes(
        &self,
        command: &JailCommand,
        shown: &str,
        cancel: &CancellationToken,
    ) -> Result<(JailOutput, Option<changes::Pending>), ToolError> {
        let run = self
            .jail
            .run_changeset(command, cancel)
            .await
            .map_err(|err| outcome::jail_error(&err))?;
        if let Err(error) = outcome::ended(shown, command.timeout, &run.output) {
            return Err(changes::discarded(run.changeset, error).await);
        }
        Ok((run.output, changes::pending(run.changeset).await))
    }

    /// The zones the jail shows its programs.
    pub fn sandbox(&self) -> &Sandbox {
        self.jail.sandbox()
    }

    /// Runs `command` with direct writes to the zones and gives back the output as the jail
    /// captured it (each stream with whether it was cut), for a tool that reads what the
    /// program printed. A process that did not end by itself is the same error as for
    /// [`Runner::run_gated`].
    pub async fn run_captured(
        &self,
        command: &JailCommand,
        shown: &str,
        cancel: &CancellationToken,
    ) -> Result<JailOutput, ToolError> {
        let output = self
            .jail
            .run(command, cancel)
            .await
            .map_err(|err| outcome::jail_error(&err))?;
        outcome::ended(shown, command.timeout, &output)?;
        Ok(output)
    }
}

/// The first `rw` zone, where a program can write its results.
fn default_cwd_zone(sandbox: &Sandbox) -> Option<String> {
    sandbox
        .zones()
        .iter()
        .find(|zone| zone.mode() == ZoneMode::Rw)
        .map(|zone| zone.name().to_owned())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use golem_sandbox::ZoneConfig;

    use super::*;

    /// A jail over temporary zones whose helper does not exist: enough for everything up to
    /// starting a process.
    fn test_jail(zones: &[ZoneConfig], network: bool) -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for zone in zones {
            std::fs::create_dir_all(dir.path().join(&zone.name)).unwrap_or_else(|e| panic!("{e}"));
        }
        let sandbox = Sandbox::open(dir.path(), zones).unwrap_or_else(|e| panic!("{e}"));
        let policy = golem_sandbox::jail::JailPolicy {
            network,
            ..Default::default()
        };
        let helper = std::path::PathBuf::from("/nonexistent/golem-forge");
        (dir, Jail::new(helper, sandbox, policy))
    }

    fn runner(
        zones: &[ZoneConfig],
        cwd: Option<&str>,
        network: bool,
    ) -> (tempfile::TempDir, Runner) {
        let (dir, jail) = test_jail(zones, network);
        let timeouts = Timeouts::new(Duration::from_secs(60), Duration::from_secs(300));
        (dir, Runner::new(jail, timeouts, cwd.map(str::to_owned)))
    }

    #[test]
    fn the_working_directory_is_the_configured_zone_else_the_first_rw_zone_else_tmp() {
        let zones = [
            ZoneConfig::new("docs", ZoneMode::Ro),
            ZoneConfig::new("work", ZoneMode::Rw),
            ZoneConfig::new("out", ZoneMode::Rw),
        ];
        assert_eq!(runner(&zones, None, false).1.workdir(), "/work");
        assert_eq!(runner(&zones, Some("docs"), false).1.workdir(), "/docs");
        let ro = [ZoneConfig::new("docs", ZoneMode::Ro)];
        assert_eq!(runner(&ro, None, false).1.workdir(), "/tmp");
        assert_eq!(runner(&[], None, false).1.workdir(), "/tmp");
    }

    #[test]
    fn commands_carry_the_working_directory_and_the_limit() {
        let zones = [ZoneConfig::new("work", ZoneMode::Rw)];
        let (_dir, r) = runner(&zones, None, false);
        let command = r.command("git", vec!["status".into()], Some(1_000));
        assert_eq!(command.program, "git");
        assert_eq!(command.args, ["status"]);
        assert_eq!(command.cwd_zone.as_deref(), Some("work"));
        assert_eq!(command.timeout, Duration::from_secs(300));
        assert!(command.env.is_empty() && command.script.is_none());
        assert_eq!(
            r.command("ls", vec![], None).timeout,
            Duration::from_secs(60)
        );
    }

    #[test]
    fn descriptions_name_the_zones_and_the_network() {
        let zones = [
            ZoneConfig::new("docs", ZoneMode::Ro),
            ZoneConfig::new("work", ZoneMode::Rw),
        ];
        let (_dir, r) = runner(&zones, None, false);
        assert_eq!(
            r.surroundings(),
            "It runs in a jail with the zones /docs (read-only), /work (read-write), a private \
             /tmp and no network; the working directory is /work"
        );
        assert_eq!(r.risk(), Risk::Medium);
        let (_dir, r) = runner(&[], None, true);
        assert_eq!(
            r.surroundings(),
            "It runs in a jail with no zones, a private /tmp and network access; the working \
             directory is /tmp"
        );
        assert_eq!(r.risk(), Risk::High);
    }
}
