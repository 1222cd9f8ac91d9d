//! Small text helpers shared by approval descriptions and error messages (kept in
//! `golem-protocol`, which the model clients use too).

pub use golem_protocol::text::fold;
