//! The repository the git tools work on, and the one way they run git: in the toolset's jail,
//! with the repository's zone as the working tree, an environment and command line that turn
//! off everything in the repository's configuration that would make git run another program
//! (`safety.rs`), and the arguments as separate words (no shell ever sees them).
//!
//! Every run is two runs: first `git config --name-only --list`, which reads the repository's
//! own configuration (and what it includes) and runs nothing, so that driver keys with names of
//! the repository's choosing (`filter.<name>.clean`, …) can be overridden by name; then the
//! command itself. The paths a call names are virtual paths in the repository's zone (or
//! relative to the repository) and are checked like every tool's paths (`Sandbox::resolve`).

use golem_protocol::text::fold;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::Sandbox;
use golem_sandbox::jail::{JailExit, JailOutput};
use golem_toolset::process::Runner;
use tokio_util::sync::CancellationToken;

use super::GitAuthor;
use super::safety;

/// What a run of git needs from the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Reads only: no optional locks (`git status` does not refresh the index on disk).
    Read,
    /// Changes the repository; no network.
    Write,
    /// Talks to a remote: the jail with the network on.
    Network,
}

/// What git printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GitOutput {
    /// The exit code (a signal is reported as an error before this is made).
    pub exit_code: i32,
    /// Standard output, without the jail's marker when it was cut.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether standard output was cut at the jail's output limit.
    pub truncated: bool,
}

impl GitOutput {
    /// Standard output then standard error, trimmed, for results that show what git said.
    pub fn said(&self) -> String {
        let parts: Vec<&str> = [self.stdout.trim_end(), self.stderr.trim_end()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect();
        parts.join("\n")
    }
}

/// The repository in one zone, and the jails git runs in.
#[derive(Debug)]
pub(super) struct Repo {
    zone: String,
    hooks: bool,
    author: Option<GitAuthor>,
    sandbox: Sandbox,
    local: Runner,
    network: Option<Runner>,
}

impl Repo {
    /// The repository at the root of `zone`; `local` runs git without the network, `network`
    /// (when there is one) with it.
    pub fn new(
        zone: String,
        hooks: bool,
        author: Option<GitAuthor>,
        sandbox: Sandbox,
        local: Runner,
        network: Option<Runner>,
    ) -> Repo {
        Repo {
            zone,
            hooks,
            author,
            sandbox,
            local,
            network,
        }
    }

    /// The repository's root as the model sees it: `/<zone>`.
    pub fn root(&self) -> String {
        format!("/{}", self.zone)
    }

    /// The virtual path of `relative`, a path git printed (relative to the repository).
    pub fn virtual_path(&self, relative: &str) -> String {
        if relative.is_empty() || relative == "." {
            self.root()
        } else {
            format!("/{}/{relative}", self.zone)
        }
    }

    /// The path git is given for `path`: a virtual path in the repository's zone
    /// (`/repo/src/a.rs`) or a path relative to the repository (`src/a.rs`), normalized like
    /// every tool's paths; `.` for the repository's root. A path outside the zone, or with
    /// `..` leaving it, is `INVALID_PATH`; a value starting with `-` is `INVALID_ARGUMENTS`.
    pub fn relative(&self, path: &str) -> Result<String, ToolError> {
        super::checks::not_an_option("path", path)?;
        let full = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{}/{path}", self.zone)
        };
        let resolved = self.sandbox.resolve(&full)?;
        if resolved.zone_name() != Some(self.zone.as_str()) {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!(
                    "{path} is not in the repository: give a path in {} or one relative to it",
                    self.root()
                ),
            ));
        }
        let relative = resolved.relative().to_string_lossy().into_owned();
        Ok(if relative.is_empty() {
            ".".to_owned()
        } else {
            relative
        })
    }

    /// The worker's sandbox (for the protected-files policy of the repository's zone).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Whether the repository's hooks run (the toolset's `hooks: true`).
    pub fn hooks(&self) -> bool {
        self.hooks
    }

    /// Whether git can reach remotes (`git_pull` and `git_push` exist only then).
    pub fn has_network(&self) -> bool {
        self.network.is_some()
    }

    /// Runs `git <args>`, whatever its exit code (errors name it as `git <subcommand>
    /// <values>`).
    pub async fn run(
        &self,
        access: Access,
        args: &[String],
        cancel: &CancellationToken,
    ) -> Result<GitOutput, ToolError> {
        let keys = self.repository_keys(cancel).await?;
        let mut words = safety::config_args(self.hooks, self.author.as_ref(), &keys)?;
        words.extend(["--no-pager".to_owned(), "--literal-pathspecs".to_owned()]);
        words.extend(args.iter().cloned());
        let runner = match access {
            Access::Read | Access::Write => &self.local,
            Access::Network => self.network.as_ref().ok_or_else(|| {
                ToolError::new(
                    ToolErrorCode::ExecutionError,
                    "this git toolset has no jail with the network",
                )
            })?,
        };
        let mut command = runner.command("git", words, None);
        command.env = safety::environment(&self.zone, access == Access::Read);
        let shown = shown(args);
        let output = from_jail(&shown, runner.run_captured(&command, &shown, cancel).await?)?;
        if output.exit_code != 0 && output.stderr.contains("not a git repository") {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{} is not a git repository: {}",
                    self.root(),
                    first_lines(&output.stderr)
                ),
            ));
        }
        Ok(output)
    }

    /// Runs `git <args>` and returns its output when it exits with 0; any other exit is
    /// `EXECUTION_ERROR` with what git said.
    pub async fn ok(
        &self,
        access: Access,
        args: &[String],
        cancel: &CancellationToken,
    ) -> Result<GitOutput, ToolError> {
        let output = self.run(access, args, cancel).await?;
        if output.exit_code == 0 {
            Ok(output)
        } else {
            Err(failed(&shown(args), &output))
        }
    }

    /// The names of the keys the repository's configuration sets (its own file and what it
    /// includes; no system or user configuration is read). Nothing runs but `git config`.
    async fn repository_keys(&self, cancel: &CancellationToken) -> Result<Vec<String>, ToolError> {
        let args = ["config", "-z", "--name-only", "--list"].map(str::to_owned);
        let mut command = self.local.command("git", args.to_vec(), None);
        command.env = safety::environment(&self.zone, true);
        let shown = "git config --list";
        let output = from_jail(
            shown,
            self.local.run_captured(&command, shown, cancel).await?,
        )?;
        if output.exit_code != 0 {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{} is not a git repository whose configuration can be read: {}",
                    self.root(),
                    first_lines(&output.stderr)
                ),
            ));
        }
        Ok(output
            .stdout
            .split('\0')
            .filter(|key| !key.is_empty())
            .map(str::to_owned)
            .collect())
    }
}

/// The command as messages name it: `git`, the subcommand and the call's own values, without
/// the options every call of the tool passes (values never start with `-`: `checks.rs`).
fn shown(args: &[String]) -> String {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|word| !word.starts_with('-'))
        .collect();
    fold(&format!("git {}", shell_words::join(words)), 120)
}

/// The output of a process that ended by itself with an exit code.
fn from_jail(shown: &str, output: JailOutput) -> Result<GitOutput, ToolError> {
    let exit_code = match output.exit {
        JailExit::Code(code) => code,
        JailExit::Signal(signal) => {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("`{shown}` was killed by signal {signal}"),
            ));
        }
        // `Runner::run_captured` has made errors of the other ends already.
        other => {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("`{shown}` did not exit normally ({other:?})"),
            ));
        }
    };
    let truncated = output.stdout.truncated;
    let mut stdout = output.stdout.text;
    if truncated && let Some(at) = stdout.rfind("[… output truncated:") {
        stdout.truncate(at);
    }
    Ok(GitOutput {
        exit_code,
        stdout,
        stderr: output.stderr.text,
        truncated,
    })
}

/// `EXECUTION_ERROR` for a git command that exited with a failure: the command, the code and
/// what git said on stderr (or stdout when stderr is empty).
pub(super) fn failed(shown: &str, output: &GitOutput) -> ToolError {
    let said = if output.stderr.trim().is_empty() {
        &output.stdout
    } else {
        &output.stderr
    };
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!(
            "`{shown}` failed (exit {}): {}",
            output.exit_code,
            first_lines(said)
        ),
    )
}

/// The first 20 lines of `text`, trimmed, for error messages.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.trim().lines().take(20).collect();
    let mut joined = lines.join("\n");
    if text.trim().lines().count() > lines.len() {
        joined.push_str("\n…");
    }
    if joined.is_empty() {
        "it printed nothing".to_owned()
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_command_by_its_values() {
        let args = ["show", "--no-color", "--end-of-options", "HEAD~1", "--"].map(str::to_owned);
        assert_eq!(shown(&args), "git show 'HEAD~1'");
        let args = ["commit", "-m", "a message"].map(str::to_owned);
        assert_eq!(shown(&args), "git commit 'a message'");
    }

    #[test]
    fn what_git_said_joins_the_streams() {
        let output = GitOutput {
            exit_code: 0,
            stdout: "one\n".into(),
            stderr: "two\n".into(),
            truncated: false,
        };
        assert_eq!(output.said(), "one\ntwo");
        assert_eq!(
            failed("git x", &output).message,
            "`git x` failed (exit 0): two"
        );
        let quiet = GitOutput {
            stderr: String::new(),
            stdout: String::new(),
            ..output
        };
        assert_eq!(
            failed("git x", &quiet).message,
            "`git x` failed (exit 0): it printed nothing"
        );
    }
}
