//! Toolsets: filesystem, shell, code, web, git, workers, custom and MCP tools.
//!
//! Not built yet: the toolset issues (#5, #6) bring this crate to life.
