//! Worker runtime: worker files, program config, the agent loop, delegation and sessions.

pub mod config;
pub mod delegation;
pub mod launch;
pub mod model_calls;
pub mod registry;
pub mod runner;
pub mod session;
pub mod toolsets;
pub mod worker;
