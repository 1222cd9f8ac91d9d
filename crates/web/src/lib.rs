//! Browser front end: an axum server and an embedded page speaking the event protocol.
//!
//! Not built yet: a later issue brings this crate to life.
