//! The provider clients, one module each.

pub mod anthropic;
pub mod openai_chat;
pub mod openai_common;
pub mod openai_responses;
pub mod replay;
pub mod test_model;
