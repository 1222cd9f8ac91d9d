//! Tests of reading prompts.
