//! What a toolset is, so that each one lives in one folder and the rest of the program knows
//! it only through the [`Toolset`] trait: its configuration type (the value of its key under
//! `toolsets:` in a worker file), how its tools are built for a worker ([`BuildContext`]), what
//! `golem-forge check` shows of it ([`Section`], [`JailUse`]) and what its tools may reach
//! ([`Reach`], for the MCP server's tool annotations). The list of built-in toolsets is in
//! `golem-runtime` (`toolsets.rs`); ARCHITECTURE.md has the recipe for adding one.
//!
//! Also here: the configuration every jailed toolset shares (`network:`, `jail:`, `limits:`,
//! timeouts; [`config`], [`network`], [`jailed`]) and building its jail from it ([`jail`]); and
//! what the toolsets that run programs or cache tool lists share: running a program in the jail
//! and settling what it changed ([`process`]), the diffs shown for changes ([`diff`], [`text`]),
//! writing a cache entry ([`cache_file`]) and timestamps ([`time`]).

pub mod cache_file;
pub mod config;
mod context;
pub mod diff;
pub mod jail;
pub mod jailed;
pub mod network;
pub mod process;
pub mod text;
pub mod time;
mod toolset;

pub use config::{DEFAULT_MAX_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS, JailMode, ProcessLimitsConfig};
pub use context::{BuildContext, Delegation, DelegationError, Notice, ToolsetError};
pub use jail::{BuiltJail, ProcessJail, kernel_support_cache};
pub use jailed::{Jailed, ProgramsConfig};
pub use network::NetworkAccess;
pub use toolset::{
    Configured, ConfiguredToolset, JailUse, Reach, Schemas, Section, Toolset, ToolsetConfig,
    present,
};

/// A toolset's tools, in the order they are offered to the model.
pub type Tools = Vec<std::sync::Arc<dyn golem_core::tool::Tool>>;
