//! The `code` toolset: `run_code`, which runs a Python or bash program in the toolset's process
//! jail (`golem_sandbox::jail`) and returns a `code_result`. The jail is the boundary: what the
//! program can read, write and reach is decided there, not here. This module decides the
//! approval (one decision for the toolset, pre-approved by default because it is jailed), checks
//! the arguments the jail cannot take, and maps how the run ended (`crate::process`).

mod env;
mod run_code;
mod toolset;

pub use toolset::{CodeToolset, CodeToolsetConfig};

use std::sync::Arc;
use std::time::Duration;

use golem_core::approval::ApprovalDecisionType;
use golem_core::tool::Tool;
use golem_sandbox::jail::Jail;
use golem_toolset::process::Runner;

pub use golem_toolset::process::{DEFAULT_TIMEOUT, MAX_TIMEOUT};

/// The options of the `code` toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeOptions {
    /// The limit of a call that gives no `timeout`.
    pub default_timeout: Duration,
    /// The most a call's `timeout` may be; larger values are capped.
    pub max_timeout: Duration,
    /// The zone programs start in; `None` → the first `rw` zone, or the private `/tmp` when
    /// there is none.
    pub cwd_zone: Option<String>,
    /// The approval every call needs (default pre-approved: the code is jailed).
    pub approval: ApprovalDecisionType,
}

impl Default for CodeOptions {
    fn default() -> Self {
        Self {
            default_timeout: DEFAULT_TIMEOUT,
            max_timeout: MAX_TIMEOUT,
            cwd_zone: None,
            approval: ApprovalDecisionType::PreApproved,
        }
    }
}

/// The `run_code` tool over `jail`.
pub fn run_code_tool(jail: Jail, options: CodeOptions) -> Arc<dyn Tool> {
    let runner = Runner::gated(
        jail,
        options.default_timeout,
        options.max_timeout,
        options.cwd_zone,
    );
    Arc::new(run_code::RunCode::new(runner, options.approval))
}
