//! Toolsets: filesystem, shell, code, git, custom and MCP tools (the web toolset is
//! `golem-web-tools`, the workers toolset is the runtime's delegation).
//!
//! Each toolset is a folder with one file per tool; tools implement `golem_core::tool::Tool`
//! and are only ever run through the orchestrator. Built so far: [`filesystem`], [`code`]
//! (`run_code`) and [`shell`] (`shell`), which run processes in the toolset's
//! `golem_sandbox::jail::Jail` and share how a run is started and reported (`process`),
//! and [`git`] (git on the repository of
//! one zone, in the jail, with nothing the repository configures allowed to run),
//! [`custom`] (tools from a user's Python, JavaScript or executable module, in the jail), and
//! [`mcp`] (the tools of MCP servers: a child process outside the jail or in it, or an HTTP
//! endpoint).

mod cache_file;
pub mod code;
pub mod custom;
pub mod filesystem;
pub mod git;
pub mod mcp;
mod process;
pub mod shell;

pub use code::run_code_tool;
pub use custom::custom_tools;
pub use filesystem::filesystem_tools;
pub use git::git_tools;
pub use mcp::mcp_tools;
pub use shell::shell_tool;
