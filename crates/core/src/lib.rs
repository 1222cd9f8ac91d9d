//! Golem Forge core: the `Tool` trait, prepared calls and the registry, approval
//! (requirements, configuration, session memory, the controller), the one tool-call
//! orchestrator, the UI event bus with its `RuntimeUI` wrapper, the interrupt signal and the
//! questions a running tool asks the user (`input`), form fields derived from JSON Schema and
//! the typing of text values by a schema (`coerce`, for forms and the chat's slash commands),
//! the lean form of a schema that a model is sent (`schema_lean`), and the redaction of secret
//! values from tool output.
//!
//! It talks to no terminal, socket or model: front ends and providers live in other crates and
//! meet this one through the event protocol and the traits here.

pub mod approval;
pub mod bus;
pub mod calendar;
pub mod coerce;
pub mod decorated;
pub mod effects;
pub mod fields;
pub mod fn_tool;
pub mod input;
pub mod interrupt;
pub mod orchestrator;
pub mod plan;
pub mod redact;
pub mod registry;
pub mod schema_lean;
pub mod text;
pub mod tool;
pub mod ui;
