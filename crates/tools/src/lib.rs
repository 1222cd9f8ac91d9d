//! Toolsets: filesystem, shell, code, web, git, workers, custom and MCP tools.
//!
//! Each toolset is a folder with one file per tool; tools implement `golem_core::tool::Tool`
//! and are only ever run through the orchestrator. Built so far: [`filesystem`], and [`code`]
//! (`run_code`) and [`shell`] (`shell`), which run processes in the toolset's
//! `golem_sandbox::jail::Jail` and share how a run is started and reported (`process`).

pub mod code;
pub mod filesystem;
mod process;
pub mod shell;

pub use code::run_code_tool;
pub use filesystem::filesystem_tools;
pub use shell::shell_tool;
