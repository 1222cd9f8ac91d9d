//! The command line's front ends: JSON lines on stdout (`--json`), a progress trace on stderr,
//! approval prompts at the terminal for `run`, and what the chat draws with — result renderers
//! (`render`), the streaming markdown renderer (`markdown`) and their shared syntax data
//! (`syntax`). Each front end subscribes to the event bus like any UI. Text from outside
//! (a model, a tool, a file, a worker's config) reaches a terminal only through `clean`.

pub mod clean;
pub mod json;
pub mod markdown;
pub mod prompt;
pub mod render;
pub mod syntax;
pub mod trace;
