//! The JSON Schema of a worker file's front matter, generated from the types that read it (doc
//! comments as descriptions), for editors' YAML language servers. `golem-forge schema worker`
//! prints it; the committed copy (`docs/schema/worker.schema.json`) is checked by a test to be
//! current.
//!
//! The schema describes what a worker file may say; deserialization stays the judge (it also
//! checks what a schema cannot, such as zone names given twice), and its errors name the line.

use super::parse::FrontMatter;

/// The JSON Schema of a `.worker` file's front matter, as pretty JSON with a trailing newline.
pub fn worker_schema_json() -> String {
    let schema = schemars::schema_for!(FrontMatter);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
