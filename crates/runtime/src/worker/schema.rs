//! The JSON Schema of a worker file's front matter, generated from the types that read it (doc
//! comments as descriptions), for editors' YAML language servers. `golem-forge schema worker`
//! prints it; the committed copy (`docs/schema/worker.schema.json`) is checked by a test to be
//! current.
//!
//! The schema describes what a worker file may say; deserialization stays the judge (it also
//! checks what a schema cannot, such as zone names given twice), and its errors name the line.
//! It is strict JSON Schema (draft 2020-12): the `format`s schemars writes for Rust number
//! types (`uint32`, `uint64`, `double`, …) are left out, since strict validators refuse
//! formats the specification does not define; an unsigned field's `minimum: 0` says the same.

use golem_core::schema_lean::STANDARD_FORMATS;
use schemars::generate::SchemaSettings;
use schemars::transform::transform_subschemas;

use super::parse::FrontMatter;

/// The JSON Schema of a `.worker` file's front matter, as pretty JSON with a trailing newline.
pub fn worker_schema_json() -> String {
    strict_schema_json::<FrontMatter>()
}

/// The strict JSON Schema (draft 2020-12, standard formats only) of a file golem-forge reads
/// as `T`, as pretty JSON with a trailing newline (test files' schema is one too).
pub fn strict_schema_json<T: schemars::JsonSchema>() -> String {
    let schema = SchemaSettings::draft2020_12()
        .with_transform(drop_non_standard_formats)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Removes, from `schema` and every schema in it, a `format` JSON Schema does not define.
fn drop_non_standard_formats(schema: &mut schemars::Schema) {
    if let Some(object) = schema.as_object_mut()
        && object
            .get("format")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
    {
        object.shift_remove("format");
    }
    transform_subschemas(&mut drop_non_standard_formats, schema);
}
