//! Toolsets: filesystem, shell, code, git and custom tools (the web toolset is
//! `golem-web-tools`, the MCP toolset `golem-mcp-client`, the workers toolset is the runtime's
//! delegation).
//!
//! Each toolset is a folder with one file per tool; tools implement `golem_core::tool::Tool`
//! and are only ever run through the orchestrator: [`filesystem`], [`code`] (`run_code`) and
//! [`shell`] (`shell`), which run processes in the toolset's `golem_sandbox::jail::Jail` and
//! share how a run is started and reported (`golem_toolset::process`), [`git`] (git on the
//! repository of one zone, in the jail, with nothing the repository configures allowed to
//! run), and [`custom`] (tools from a user's Python, JavaScript or executable module, in the
//! jail).

pub mod code;
pub mod custom;
pub mod filesystem;
pub mod git;
pub mod shell;

pub use code::run_code_tool;
pub use custom::custom_tools;
pub use filesystem::filesystem_tools;
pub use git::git_tools;
pub use shell::shell_tool;

/// Test support for the tools that run programs: a jail that gets as far as starting a
/// process, and a tool's call prepared, decided, described or executed outside the
/// orchestrator.
#[cfg(test)]
mod testing {
    use std::sync::Arc;

    use golem_core::approval::ApprovalRequirement;
    use golem_core::tool::{PreparedCall, Tool, ToolContext};
    use golem_protocol::ToolError;
    use golem_sandbox::Sandbox;
    use golem_sandbox::jail::Jail;
    use serde_json::Value;

    /// A jail over temporary zones whose helper does not exist: enough for everything up to
    /// starting a process.
    pub fn test_jail(
        zones: &[golem_sandbox::ZoneConfig],
        network: bool,
    ) -> (tempfile::TempDir, Jail) {
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

    /// `tool`'s prepared call for a model's `args`, which must prepare.
    pub async fn prepare(tool: &Arc<dyn Tool>, args: Value) -> PreparedCall {
        match tool.prepare(&args, &ToolContext::for_model("t")).await {
            Ok(prepared) => prepared,
            Err(err) => panic!("not prepared: {err:?}"),
        }
    }

    /// The requirement `tool` decides for `args` (a program tool always decides).
    pub async fn approval(tool: &Arc<dyn Tool>, args: Value) -> ApprovalRequirement {
        prepare(tool, args)
            .await
            .requirement
            .unwrap_or_else(|| panic!("{} always decides", tool.name()))
    }

    /// How `tool` describes a call with `args` (a program tool always describes).
    pub async fn describe(tool: &Arc<dyn Tool>, args: Value) -> String {
        prepare(tool, args)
            .await
            .description
            .unwrap_or_else(|| panic!("{} always describes", tool.name()))
    }

    /// Prepares and executes a call (whatever its requirement), which must fail.
    pub async fn execute_err(tool: &Arc<dyn Tool>, args: Value) -> ToolError {
        let ctx = ToolContext::for_model("t");
        let plan = prepare(tool, args).await.plan;
        match tool.execute(plan, &ctx).await {
            Ok(value) => panic!("ran: {value:?}"),
            Err(err) => err,
        }
    }
}
