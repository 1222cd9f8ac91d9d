//! Worker runtime: worker files, program config, the agent loop, delegation, and the session
//! host every front end attaches to (transcripts are `golem_session`'s).

pub mod approvals_file;
pub mod budget;
pub mod config;
pub mod context_settings;
pub mod delegation;
pub mod host;
pub mod inbox;
pub mod launch;
pub mod model_calls;
pub mod output;
pub mod protected;
pub mod registry;
pub mod runner;
mod session_env;
pub mod toolsets;
pub mod tree;
pub mod worker;
pub mod workers_toolset;
