//! The one shape of every git tool: a [`GitCommand`] says what the tool is (its name, menu
//! label, approval policy and description) and how it prepares and runs a call on the
//! repository; [`GitTool`] makes it a tool on one [`Repo`], with the arguments' schema and the
//! category "Git".

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::tool::{
    CallPlan, DescribedTool, ManualExecution, PreparedCall, ToolContext, ToolInfo,
};
use golem_protocol::{ExecutionMode, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::repo::Repo;

/// The category of every git tool in menus.
const CATEGORY: &str = "Git";

/// The approval policy of the tools that only read (and are pre-approved).
pub(super) const READS_ONLY: &str = "pre-approved (reads only)";

/// The approval policy of the tools that change the repository and ask by default.
pub(super) const ASK: &str = "ask";

/// One git tool's own part; [`GitTool`] turns it into a tool.
#[async_trait]
pub(super) trait GitCommand: Send + Sync + 'static {
    /// The decoded arguments (their schema is what the model sees).
    type Args: DeserializeOwned + JsonSchema + Send;
    /// What `prepare` hands to `execute`.
    type Plan: CallPlan;
    /// The tool's name.
    const NAME: &'static str;
    /// What kind of thing the tool does.
    const KIND: golem_protocol::ToolKind;
    /// The tool's label in menus.
    const LABEL: &'static str;
    /// The approval policy in words, for listings.
    const POLICY: &'static str;
    /// Who may call the tool: the model and the user (`/git_status` in a chat) unless a
    /// command says otherwise.
    const MODE: ExecutionMode = ExecutionMode::Both;

    /// What the tool does, for the model, on the repository at `root` (a virtual path).
    fn description(root: &str) -> String;

    /// Checks the arguments and decides the call's approval (see `TypedTool::prepare`).
    async fn prepare(
        &self,
        repo: &Repo,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<Self::Plan>, ToolError>;

    /// Runs git for a plan `prepare` made, once the gate let it through.
    async fn execute(
        &self,
        repo: &Repo,
        plan: Self::Plan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError>;
}

/// A git tool: a command on one repository.
pub(super) struct GitTool<C> {
    command: C,
    repo: Arc<Repo>,
    info: ToolInfo,
}

impl<C: GitCommand> GitTool<C> {
    /// `command` as a tool on `repo`.
    pub(super) fn new(command: C, repo: Arc<Repo>) -> Self {
        let execution = ManualExecution {
            mode: C::MODE,
            ..ManualExecution::manual(C::LABEL, Some(CATEGORY))
        };
        let info = ToolInfo::new::<C::Args>(C::NAME, C::description(&repo.root()))
            .with_execution(execution)
            .with_kind(C::KIND)
            .with_approval_policy(C::POLICY);
        GitTool {
            command,
            repo,
            info,
        }
    }
}

#[async_trait]
impl<C: GitCommand> DescribedTool for GitTool<C> {
    type Args = C::Args;
    type Plan = C::Plan;

    fn info(&self) -> &ToolInfo {
        &self.info
    }

    async fn prepare(
        &self,
        args: C::Args,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<C::Plan>, ToolError> {
        GitCommand::prepare(&self.command, &self.repo, args, ctx).await
    }

    async fn execute(
        &self,
        plan: C::Plan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        GitCommand::execute(&self.command, &self.repo, plan, ctx).await
    }
}
