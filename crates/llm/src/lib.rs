//! Model providers behind one [`Model`](model::Model) trait: the canonical conversation types,
//! stream events and their assembly, `provider:model` names, errors, retries, and the HTTP/SSE
//! plumbing the provider clients share.
//!
//! Providers speak their real wire formats; their types stay in their own files and are
//! converted to and from the canonical types there. Nothing here touches a terminal.

pub mod context;
pub mod error;
pub mod event;
pub mod http;
pub mod message;
pub mod model;
pub mod model_table;
pub mod output;
pub mod pricing;
pub mod providers;
pub mod rate;
pub mod record;
pub mod resolve;
pub mod retry;
pub mod schema_args;

pub mod spec;

pub use error::ModelError;
pub use event::{FinishReason, ModelResponse, ResponseAssembler, StreamEvent};
pub use message::{Message, ModelRequest, ModelToolCall, ToolResultMessage};
pub use model::{EventStream, Model};
pub use output::{FINAL_RESULT_TOOL, OutputFormat};
pub use spec::ModelSpec;
