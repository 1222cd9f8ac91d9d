//! Worker runtime: worker files, program config, the agent loop, delegation and sessions.
//!
//! Not built yet: the runtime issue (#4) brings this crate to life.
