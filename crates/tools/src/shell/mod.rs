//! The `shell` toolset: `shell {command, timeout?}` runs one program with arguments in the
//! toolset's process jail (`golem_sandbox::jail`), *without a shell*, and returns a
//! `code_result`.
//!
//! - `words.rs` splits the command with POSIX shell-word rules and first refuses every piece of
//!   shell syntax a shell would act on (pipes, redirection, `;`, `&`, `&&`, substitution,
//!   `$VAR`, line breaks); quoted metacharacters are literal text and allowed. Its header lists
//!   the exact rules.
//! - `rules.rs` decides approval from the split words: the first rule whose pattern words begin
//!   the command, else the toolset's `default`, else blocked. A blocked command is
//!   `ApprovalRequirement::Blocked` from `Tool::approval`, so it never reaches a prompt, and
//!   `execute` checks the rules again before running anything.
//! - `dangerous/` is the table of programs whose words can make them run other programs, load
//!   other configuration or write files (`git -c`, `find -exec`, `env`, interpreters, …): a
//!   pre-approval that does not name those words becomes `ask`, with the reason in the
//!   approval prompt.
//! - `shell.rs` is the tool: the program is the first word (the jail looks it up in its `PATH`),
//!   the arguments the rest, the working directory the toolset's (`golem_toolset::process`).
//!
//! A command that cannot be split (shell syntax, an unclosed quote, nothing to run) is
//! pre-approved by `approval` and refused by `execute` with `INVALID_ARGUMENTS`: there is no
//! command to decide about, and nothing runs.

mod dangerous;
mod rules;
#[allow(
    clippy::module_inception,
    reason = "one file per tool, named after the tool (`shell`)"
)]
mod shell;
mod toolset;
mod words;

use std::sync::Arc;

use golem_core::tool::Tool;
use golem_toolset::BuiltJail;
use golem_toolset::process::Runner;

pub use golem_toolset::process::{DEFAULT_TIMEOUT, MAX_TIMEOUT};
pub use rules::{ShellRule, ShellRuleError, ShellRules, Verdict};
pub use toolset::{ShellConfig, ShellToolset, ShellToolsetConfig};
pub(crate) use words::is_name;

/// A warning for a rule whose pattern is only the name of a program that can run others (`git `,
/// `find `, `python3 `), saying what it can do and which narrow rules to use instead; `None`
/// for narrow patterns and other programs. The rule pre-approves less than it seems: such
/// commands ask anyway.
pub fn bare_program_warning(pattern: &str) -> Option<String> {
    dangerous::bare_program(pattern)
}

/// The `shell` tool in `jail` (with its working zone and timeouts), decided by `rules`.
pub fn shell_tool(jail: BuiltJail, rules: ShellRules) -> Arc<dyn Tool> {
    let runner = Runner::gated(jail.jail, jail.timeout, jail.max_timeout, jail.cwd_zone);
    Arc::new(shell::Shell::new(runner, rules))
}
