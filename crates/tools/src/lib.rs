//! Toolsets: filesystem, shell, code, web, git, workers, custom and MCP tools.
//!
//! Each toolset is a folder with one file per tool; tools implement `golem_core::tool::Tool`
//! and are only ever run through the orchestrator. Built so far: [`filesystem`].

pub mod filesystem;

pub use filesystem::filesystem_tools;
