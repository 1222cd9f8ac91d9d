//! Model providers (anthropic, openai, openai-compatible, test, replay) behind one `Model` trait.
//!
//! Not built yet: the providers issue (#3) brings this crate to life.
