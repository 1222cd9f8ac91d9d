//! `golem-forge approvals [list | rm N]`: the project's approval rules
//! (`.golem-forge/approvals.yaml` under the program root), listed with their numbers or removed
//! by number. Reading and writing the file is `golem_runtime::approvals_file`'s job.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use golem_core::approval::ApprovalRule;
use golem_runtime::approvals_file::{self, APPROVALS_FILE};

use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// List or remove the project's approval rules
///
/// A rule approves matching calls without asking, in every session of the program: a tool and
/// the arguments it must have (exact values, or `{glob: /zone/**}` for a path). Rules are kept in
/// `.golem-forge/approvals.yaml` in the program's root, which may be edited by hand; the answer
/// `p` at an approval prompt adds one. Rules never approve a blocked call.
#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    pub action: Option<ApprovalsAction>,
}

/// What to do with the rules.
#[derive(Debug, Subcommand)]
pub enum ApprovalsAction {
    /// List the rules with their numbers (the default)
    List,
    /// Remove rule number N (as `list` numbers them)
    Rm {
        /// The rule's number
        n: usize,
    },
}

/// Runs `golem-forge approvals`.
pub fn cmd_approvals(args: ApprovalsArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let root = golem_runtime::config::program_root(&cwd);
    match args.action.unwrap_or(ApprovalsAction::List) {
        ApprovalsAction::List => {
            let rules = load(&root)?;
            print(&render_list(&rules))
        }
        ApprovalsAction::Rm { n } => {
            let path = approvals_file::approvals_path(&root);
            let mut rules = load(&root)?;
            let Some(index) = n.checked_sub(1).filter(|i| *i < rules.len()) else {
                return Err(CommandError::usage(format!(
                    "no approval rule number {n} ({} in {APPROVALS_FILE})",
                    rules.len()
                ))
                .with_hint("`golem-forge approvals list` shows their numbers"));
            };
            let removed = rules.remove(index);
            approvals_file::save(&path, &rules).map_err(|e| CommandError::usage(e.to_string()))?;
            print(&format!(
                "removed rule {n}: {}\n",
                clean_text(&removed.to_string())
            ))
        }
    }
}

fn load(root: &Path) -> Result<Vec<ApprovalRule>, CommandError> {
    approvals_file::load(&approvals_file::approvals_path(root))
        .map_err(|e| CommandError::usage(e.to_string()))
}

/// The numbered list of `rules` (what `list` prints and `check` shows).
pub fn render_list(rules: &[ApprovalRule]) -> String {
    if rules.is_empty() {
        return format!("no approval rules ({APPROVALS_FILE} has none)\n");
    }
    let mut text = String::new();
    for (n, rule) in rules.iter().enumerate() {
        text.push_str(&format!(
            "{:>3}. {}\n",
            n + 1,
            clean_text(&rule.to_string())
        ));
    }
    text
}

fn print(text: &str) -> Result<ExitCode, CommandError> {
    super::write_stdout(text)
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))
}
