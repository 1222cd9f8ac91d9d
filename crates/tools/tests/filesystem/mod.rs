//! The filesystem toolset through the orchestrator: each tool's success and failure paths, the
//! zone approval table, previews in approval requests, atomic writes.

mod approval;
mod delete_move;
mod edit;
mod env;
mod info;
mod list;
mod protected;
mod read;
mod write;
