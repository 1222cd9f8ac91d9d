//! What the tools that run one program per call (`run_code`, `shell`) share beyond the
//! [`Runner`]: the toolset's runner, with what the program changes in the zones waiting for the
//! gate; the tool's metadata, with the time limits in the schema; a call that cannot run,
//! which is never put to anyone; and the prepared call, as risky as the jail is open.

use std::time::Duration;

use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{ManualExecution, PreparedCall, ToolInfo};
use golem_sandbox::jail::{Jail, ZoneWrites};
use schemars::JsonSchema;

use super::{Runner, Timeouts};

impl Runner {
    /// The runner of a program toolset with these limits and working directory: what its
    /// programs change in the `rw` zones goes through copy-on-write layers and waits for the
    /// gate (see [`super::changes`]).
    pub fn gated(
        jail: Jail,
        default_timeout: Duration,
        max_timeout: Duration,
        cwd_zone: Option<String>,
    ) -> Runner {
        let timeouts = Timeouts::new(default_timeout, max_timeout);
        Runner::new(
            jail.with_zone_writes(ZoneWrites::Changeset),
            timeouts,
            cwd_zone,
        )
    }

    /// The metadata of a program tool whose arguments are an `A` (an `execute` tool): its
    /// schema says what the `timeout` argument defaults to and may be at most.
    pub fn tool_info<A: JsonSchema>(
        &self,
        name: &str,
        description: String,
        execution: ManualExecution,
        approval_policy: String,
    ) -> ToolInfo {
        let mut info = ToolInfo::new::<A>(name, description)
            .with_execution(execution)
            .with_kind(golem_protocol::ToolKind::Execute)
            .with_approval_policy(approval_policy);
        self.timeouts().describe_in(&mut info.schema);
        info
    }

    /// A prepared call of a program tool, as risky as the jail is open ([`Runner::risk`]). A
    /// call that cannot run (`runnable` false; its plan carries why, for `execute` to say) is
    /// pre-approved rather than put to anyone, unless `requirement` blocks the tool anyway.
    pub fn prepared<P>(
        &self,
        plan: P,
        requirement: ApprovalRequirement,
        runnable: bool,
        description: String,
    ) -> PreparedCall<P> {
        let requirement = match requirement {
            blocked @ ApprovalRequirement::Blocked { .. } => blocked,
            _ if !runnable => ApprovalRequirement::PreApproved,
            requirement => requirement,
        };
        PreparedCall::new(plan)
            .with_requirement(requirement)
            .with_description(description)
            .with_risk(self.risk())
    }
}
