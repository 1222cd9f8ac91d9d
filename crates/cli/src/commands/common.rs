//! Options shared by the commands that run a worker (DESIGN.md §3.4).

use clap::{Args, ValueEnum};
use golem_core::approval::ApprovalMode;

/// How calls that need consent are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ApprovalArg {
    /// Ask at the terminal (denied when no terminal is attached)
    Interactive,
    /// Approve every call that would ask
    ApproveAll,
    /// Deny every call that would ask
    AutoDeny,
}

impl From<ApprovalArg> for ApprovalMode {
    fn from(arg: ApprovalArg) -> Self {
        match arg {
            ApprovalArg::Interactive => ApprovalMode::Interactive,
            ApprovalArg::ApproveAll => ApprovalMode::ApproveAll,
            ApprovalArg::AutoDeny => ApprovalMode::AutoDeny,
        }
    }
}

/// How much progress to show on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceLevel {
    /// Only the answer and errors
    Quiet,
    /// One line per tool call
    Summary,
    /// Tool calls with their results
    Normal,
    /// Everything, including model requests
    Debug,
}

/// Options of every command that runs a worker.
#[derive(Debug, Clone, Args)]
pub struct WorkerOptions {
    /// Model as provider:model, e.g. anthropic:claude-haiku-4-5 or test:default
    ///
    /// Overrides the worker's `model`, which overrides GOLEM_FORGE_MODEL, which overrides the
    /// program config's `model`.
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// How calls that need consent are decided [default: the config's approval.mode, else
    /// interactive]
    #[arg(short, long, value_enum)]
    pub approval: Option<ApprovalArg>,

    /// How much progress to show on stderr
    #[arg(short, long, value_enum, default_value = "normal")]
    pub trace: TraceLevel,

    /// Record the model exchanges to FILE (replay them with --model replay:FILE)
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,
}
