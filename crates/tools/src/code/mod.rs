//! The `code` toolset: `run_code`, which runs a Python or bash program in the toolset's process
//! jail (`golem_sandbox::jail`) and returns a `code_result`. The jail is the boundary: what the
//! program can read, write and reach is decided there, not here. This module decides the
//! approval (one decision for the toolset, pre-approved by default because it is jailed), checks
//! the arguments the jail cannot take, and maps how the run ended (`golem_toolset::process`).

mod env;
mod run_code;
mod toolset;

pub use toolset::{CodeConfig, CodeToolset, CodeToolsetConfig};

use std::sync::Arc;

use golem_core::approval::ApprovalDecisionType;
use golem_core::tool::Tool;
use golem_toolset::BuiltJail;
use golem_toolset::process::Runner;

pub use golem_toolset::process::{DEFAULT_TIMEOUT, MAX_TIMEOUT};

/// The `run_code` tool in `jail` (with its working zone and timeouts), every call needing
/// `approval` (`toolsets.code.approval`, pre-approved by default: the code is jailed).
pub fn run_code_tool(jail: BuiltJail, approval: ApprovalDecisionType) -> Arc<dyn Tool> {
    let runner = Runner::gated(jail.jail, jail.timeout, jail.max_timeout, jail.cwd_zone);
    Arc::new(run_code::RunCode::new(runner, approval))
}
