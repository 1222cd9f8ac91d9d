//! The vocabulary of consent that the approval gate and the sandbox share: what a call
//! requires (pre-approved, ask, ask a person, blocked), a decision as configured, and the
//! virtual-path globs rules and protected paths are written in. No I/O and no state; it sits
//! below both so that neither depends on the other.

mod decision;
mod glob;
mod requirement;

pub use decision::ApprovalDecisionType;
pub use glob::{GlobError, check_glob, glob_matches};
pub use requirement::ApprovalRequirement;
