//! The JSON Schema of test files, generated from the types that read them (doc comments as
//! descriptions), for editors' YAML language servers. `golem-forge schema test` prints it; the
//! committed copy (`docs/schema/worker-test.schema.json`) is checked by a test to be current.
//! Reading the file stays the judge: it also compiles the regular expressions and checks the
//! virtual paths against the worker's zones.

use crate::file::TestFile;

/// The JSON Schema of a test file, as pretty JSON with a trailing newline.
pub fn test_file_schema_json() -> String {
    golem_runtime::worker::strict_schema_json::<TestFile>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn committed_path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/worker-test.schema.json")
    }

    #[test]
    fn committed_schema_is_current() {
        let path = committed_path();
        let generated = test_file_schema_json();
        if std::env::var_os("GOLEM_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is out of date with the test file's types; run \
             `GOLEM_UPDATE_SCHEMA=1 cargo test -p golem-worker-tests --lib schema` and commit it",
            path.display()
        );
    }

    #[test]
    fn the_documented_example_is_valid_and_mistakes_are_not() {
        let schema: serde_json::Value = serde_json::from_str(&test_file_schema_json()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let docs = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/testing.md"),
        )
        .unwrap();
        let example = docs
            .split("```yaml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap();
        let value: serde_json::Value = serde_saphyr::from_str(example).unwrap();
        let problems: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(problems.is_empty(), "{problems:?}");
        for bad in [
            serde_json::json!({"cases": [{"name": "a", "expect": {"answr": {}}}]}),
            serde_json::json!({"cases": [{"name": "a", "approve": {"x": "maybe"}}]}),
            serde_json::json!({"cases": [{"name": "a", "expect": {"answer": {"like": "x"}}}]}),
            serde_json::json!({"cases": [{"input": "no name"}]}),
        ] {
            assert!(!validator.is_valid(&bad), "accepted {bad}");
        }
    }
}
