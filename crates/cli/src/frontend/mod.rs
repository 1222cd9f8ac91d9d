//! The command line's front ends for a run: JSON lines on stdout (`--json`), a progress trace on
//! stderr, and approval prompts at the terminal. Each subscribes to the event bus like any UI.

pub mod json;
pub mod markdown;
pub mod prompt;
pub mod render;
pub mod trace;
