//! Approval: what a call requires (pre-approved, ask, blocked), the declarative per-tool
//! configuration, the session memory of approvals, the project rules, and the controller that decides asked calls
//! by mode or by asking the user. Capability checks (zones) are not here: they belong to tools.

mod config;
mod controller;
mod memory;
mod requirement;
mod rules;
mod ui_callback;

pub use config::{ApprovalConfig, wrap_with_default_approval};
pub use controller::{
    ApprovalCallback, ApprovalController, ApprovalInbox, ApprovalMode, ApprovalOutcome,
    CallbackError, ParkError, no_terminal_message,
};
pub use golem_policy::{ApprovalDecisionType, ApprovalRequirement, check_glob, glob_matches};
pub use memory::{ApprovalMemory, canonical_json};
pub use requirement::BlockedError;
pub use rules::{ApprovalRule, ArgMatch, ProjectRules, RuleStore, RuleStoreError};
pub use ui_callback::ui_approval_callback;
