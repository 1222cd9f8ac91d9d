//! Worker runtime: worker files, program config, the agent loop, delegation, session
//! transcripts, and the session host every front end attaches to.

pub mod approvals_file;
pub mod budget;
pub mod config;
pub mod context;
pub mod delegation;
pub mod host;
pub mod inbox;
pub mod launch;
pub mod model_calls;
pub mod output;
pub mod protected;
pub mod registry;
pub mod replace;
pub mod runner;
pub mod session;
pub mod toolsets;
pub mod tree;
pub mod worker;
