//! The binary's one error type: a kind with a fixed exit code, a message, and hints that name
//! a concrete command or flag.

use std::fmt;
use std::process::ExitCode;

use crate::frontend::clean::clean_text;

/// What went wrong, which fixes the exit code (docs/cli.md, Exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad command-line usage or configuration (exit 2).
    Usage,
    /// The run failed: a model error, max iterations (exit 1).
    Failed,
    /// The user interrupted (exit 130).
    Interrupted,
    /// A budget ran out (exit 3).
    BudgetExceeded,
    /// A call waits for an approval in the inbox (exit 4).
    WaitingApproval,
}

impl ErrorKind {
    /// The process exit code for this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
            ErrorKind::Interrupted => 130,
            ErrorKind::BudgetExceeded => 3,
            ErrorKind::WaitingApproval => 4,
        }
    }

    /// The word the message is printed after: a parked run is an outcome, not an error.
    fn head(self) -> &'static str {
        match self {
            ErrorKind::Usage
            | ErrorKind::Failed
            | ErrorKind::Interrupted
            | ErrorKind::BudgetExceeded => "Error",
            ErrorKind::WaitingApproval => "Waiting",
        }
    }
}

/// An error a command reports to the user.
#[derive(Debug)]
pub struct CommandError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The message, one line, no trailing period.
    pub message: String,
    /// Things to try, each naming a command or flag.
    pub hints: Vec<String>,
    /// Print nothing, only exit with the code.
    pub quiet: bool,
}

impl CommandError {
    /// A usage or configuration error.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            message: message.into(),
            hints: Vec::new(),
            quiet: false,
        }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.head(), self.message)?;
        for hint in &self.hints {
            write!(f, "\nHint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CommandError {}

impl From<anyhow::Error> for CommandError {
    fn from(err: anyhow::Error) -> Self {
        Self {
            kind: ErrorKind::Failed,
            message: format!("{err:#}"),
            hints: Vec::new(),
            quiet: false,
        }
    }
}

/// Prints the error to stderr (its controls drawn visibly: a message may quote a model, a
/// tool or a file) and returns its exit code.
pub fn report(err: &CommandError) -> ExitCode {
    if !err.quiet {
        eprintln!("{}", clean_text(&err.to_string()));
    }
    ExitCode::from(err.kind.exit_code())
}
