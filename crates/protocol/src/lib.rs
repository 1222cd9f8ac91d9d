//! Golem Forge wire types: the event protocol between the runtime and every front end, semantic
//! tool results, approval requests and responses, tool errors, manual-tool descriptors, and
//! the tool definitions that model clients send.
//!
//! This crate is data only: serde types, their JSON Schema, and pure helpers. It does no I/O,
//! uses no async runtime, and depends on no other crate of ours. Wire types live here and
//! nowhere else.

pub mod approval;
pub mod batch;
pub mod error;
pub mod events;
pub mod form;
pub mod inbox;
pub mod jsonl;
pub mod kind;
pub mod normalize;
pub mod result;
pub mod schema;
pub mod session;
pub mod text;
pub mod tool_definition;
pub mod tool_kind;
pub mod worker_test;
pub mod workers;

pub use approval::{
    ApprovalMode, ApprovalRequest, ApprovalResolved, ApprovalResponse, DecidedBy, InvokedBy,
    RememberScope, Risk,
};
pub use batch::{BatchEvent, ItemResult, ItemStatus};
pub use error::{ToolError, ToolErrorCode};
pub use events::{
    ActionEvent, ChatMessage, DisplayEvent, InputAction, PROTOCOL_VERSION, ProtocolEvent, Role,
    SessionEndReason, StatusLevel, ToolStatus,
};
pub use form::{ExecutionMode, FieldOption, FieldType, FormField, ManualToolInfo};
pub use inbox::{BatchItemRef, InboxAnswer, InboxEntry};
pub use jsonl::{escape_line_breaks, to_jsonl_line};
pub use kind::{WELL_KNOWN_KINDS, is_valid_kind, is_well_known_kind};
pub use normalize::{NormalizeError, normalize_result};
pub use result::{DisplayHints, PreferredView, ToolResultValue};
pub use session::{
    ActionResult, ApprovalScope, RememberedApproval, SessionAction, SessionStatus, TurnStatus,
    ZoneSummary,
};
pub use tool_definition::ToolDefinition;
pub use tool_kind::ToolKind;
pub use worker_test::TestEvent;
pub use workers::{
    BudgetAmounts, BudgetStatus, CompactionReason, ContextFill, ModelCall, ModelCallPurpose,
    TokenUsage, WorkerOrigin, WorkerProgress,
};

#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod roundtrip_tests;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod workers_tests;
