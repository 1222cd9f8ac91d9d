//! The command line's front ends: JSON lines on stdout (`--json`), the one event renderer
//! (`display`: `run`'s trace on stderr, the chat's screen on stdout), the approval prompt shared
//! by `run` and `chat` (`approval`, drawn on a `screen` and answered
//! through `ask`), the question prompt they share for `inputRequired` forms (`input`), and what the chat draws with — result renderers (`render`), the streaming
//! markdown renderer (`markdown`) and their shared syntax data (`syntax`), and the live tree
//! of workers (`workers`: `/workers` and the spinner's summary). Each front end
//! subscribes to the event bus like any UI. Text from outside (a model, a tool, a file, a
//! worker's config) reaches a terminal only through `clean`.

pub mod approval;
pub mod ask;
pub mod clean;
pub mod display;
pub mod input;
pub mod json;
pub mod markdown;
pub mod render;
pub mod screen;
pub mod syntax;
pub mod terminal_keys;
pub mod workers;
