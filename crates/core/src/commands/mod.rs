//! Slash commands typed in a chat session: parsing (`/tool git_push --branch main`), classifying
//! (built-in, manual tool, unknown with a suggestion) and typing a tool command's options by the
//! tool's JSON Schema.
//!
//! ```
//! use golem_core::commands::{classify_command, is_command, options_to_args, parse_command, CommandKind};
//! use serde_json::json;
//!
//! let line = "/tool git_push --branch main --force";
//! assert!(is_command(line));
//! let parsed = parse_command(line)?;
//! let CommandKind::Tool { tool_name, parsed, .. } = classify_command(&parsed, &["git_push"]) else {
//!     unreachable!()
//! };
//! assert_eq!(tool_name, "git_push");
//! let schema = json!({"type": "object", "properties": {
//!     "branch": {"type": "string"}, "force": {"type": "boolean"}}});
//! let args = options_to_args(&parsed, &schema)?;
//! assert_eq!(json!(args), json!({"branch": "main", "force": true}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod classify;
mod coerce;
mod parser;

pub use classify::{BuiltinCommand, CommandKind, classify_command};
pub use coerce::{CoerceError, missing_required, options_to_args};
pub use parser::{ParseError, ParsedCommand, is_command, parse_command};
