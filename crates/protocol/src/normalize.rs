//! The compatibility shim for older result shapes (docs/tools.md, Result kinds): turns flat results
//! (`{kind: "diff", path, original, modified, ...}`) into the normalized
//! `{kind, data: {...}, summary?, mimeType?, display?}` form.

use serde_json::{Map, Value};

use crate::kind::is_valid_kind;
use crate::result::{DisplayHints, ToolResultValue};

/// Why a JSON value could not be read as a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NormalizeError {
    /// The value is not a JSON object.
    NotAnObject,
    /// The object has no string `kind`.
    MissingKind,
    /// `kind` breaks the naming rule.
    InvalidKind(String),
    /// `display` is present but not valid display hints.
    InvalidDisplay(String),
}

impl std::fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NormalizeError::NotAnObject => write!(f, "a tool result must be a JSON object"),
            NormalizeError::MissingKind => write!(f, "a tool result needs a string `kind`"),
            NormalizeError::InvalidKind(kind) => write!(
                f,
                "invalid result kind `{kind}`: use lowercase words of letters, digits and \
                 underscores joined by dots, such as `git.status`"
            ),
            NormalizeError::InvalidDisplay(msg) => write!(f, "invalid display hints: {msg}"),
        }
    }
}

impl std::error::Error for NormalizeError {}

const ENVELOPE_KEYS: [&str; 5] = ["kind", "data", "summary", "mimeType", "display"];

/// Reads a tool result in either the normalized or the legacy flat form.
///
/// A value with a `data` key and no other non-envelope keys is taken as normalized. Otherwise
/// every key other than `kind`, `summary`, `mimeType` and `display` moves into `data`; for the
/// legacy `file_list` shape, `files` becomes `entries` and the derived `count` is dropped; a
/// legacy `json` result keeps its `data` as is.
pub fn normalize_result(value: Value) -> Result<ToolResultValue, NormalizeError> {
    let Value::Object(mut obj) = value else {
        return Err(NormalizeError::NotAnObject);
    };
    let kind = match obj.remove("kind") {
        Some(Value::String(kind)) => kind,
        _ => return Err(NormalizeError::MissingKind),
    };
    if !is_valid_kind(&kind) {
        return Err(NormalizeError::InvalidKind(kind));
    }
    let summary = match obj.remove("summary") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let mime_type = match obj.remove("mimeType") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let display = match obj.remove("display") {
        None | Some(Value::Null) => None,
        Some(d) => Some(
            serde_json::from_value::<DisplayHints>(d)
                .map_err(|e| NormalizeError::InvalidDisplay(e.to_string()))?,
        ),
    };
    let has_extra = obj.keys().any(|k| !ENVELOPE_KEYS.contains(&k.as_str()));
    let data = match obj.remove("data") {
        Some(data) if !has_extra => data,
        data => legacy_data(&kind, obj, data),
    };
    Ok(ToolResultValue {
        kind,
        data,
        summary,
        mime_type,
        display,
    })
}

fn legacy_data(kind: &str, mut fields: Map<String, Value>, data: Option<Value>) -> Value {
    if let Some(data) = data {
        // A flat result that also had a `data` field keeps it under its own name.
        fields.insert("data".into(), data);
    }
    if kind == "file_list" {
        if let Some(files) = fields.remove("files") {
            fields.entry("entries").or_insert(files);
        }
        if let Some(Value::Array(entries)) = fields.get_mut("entries") {
            for entry in entries {
                if let Value::String(name) = entry {
                    *entry = bare_entry(name);
                }
            }
        }
        fields.remove("count");
    }
    Value::Object(fields)
}

/// A legacy listing's bare name as a `file_list` entry: a trailing `/` marks a directory,
/// anything else is a file.
fn bare_entry(name: &str) -> Value {
    let (name, entry_type) = match name.strip_suffix('/') {
        Some(dir) if !dir.is_empty() => (dir, "directory"),
        _ => (name, "file"),
    };
    serde_json::json!({"name": name, "type": entry_type})
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn legacy_diff_moves_fields_into_data() {
        let legacy = json!({
            "kind": "diff", "path": "/out/a.txt", "original": "a\n", "modified": "b\n",
            "isNew": false, "bytesWritten": 2, "summary": "+1 -1 lines"
        });
        let value = normalize_result(legacy).unwrap();
        assert_eq!(value.kind, "diff");
        assert_eq!(
            value.data,
            json!({"path": "/out/a.txt", "original": "a\n", "modified": "b\n", "isNew": false,
                   "bytesWritten": 2})
        );
        assert_eq!(value.summary.as_deref(), Some("+1 -1 lines"));
        assert!(value.data_as::<crate::result::DiffData>().is_some());
    }

    #[test]
    fn legacy_file_list_renames_files_to_entries() {
        let legacy = json!({"kind": "file_list", "path": "/in", "count": 1,
                            "files": [{"name": "a", "type": "file"}]});
        let value = normalize_result(legacy).unwrap();
        assert_eq!(
            value.data,
            json!({"path": "/in", "entries": [{"name": "a", "type": "file"}]})
        );
        assert!(value.data_as::<crate::result::FileListData>().is_some());
    }

    #[test]
    fn legacy_file_list_of_bare_names_becomes_entries() {
        let legacy = json!({"kind": "file_list", "path": "/in", "count": 3,
                            "files": ["a.txt", "b.txt", "sub/"]});
        let value = normalize_result(legacy).unwrap();
        assert_eq!(
            value.data,
            json!({"path": "/in", "entries": [
                {"name": "a.txt", "type": "file"},
                {"name": "b.txt", "type": "file"},
                {"name": "sub", "type": "directory"},
            ]})
        );
        let data = value.data_as::<crate::result::FileListData>().unwrap();
        assert_eq!(data.entries.len(), 3);
    }

    #[test]
    fn legacy_text_and_json() {
        let text = normalize_result(json!({"kind": "text", "content": "hi"})).unwrap();
        assert_eq!(text, ToolResultValue::text("hi"));
        let json_result = normalize_result(json!({"kind": "json", "data": [1, 2]})).unwrap();
        assert_eq!(json_result, ToolResultValue::json(json!([1, 2])));
    }

    #[test]
    fn normalized_value_passes_through() {
        let original = ToolResultValue::text("x").with_summary("s");
        let value = normalize_result(serde_json::to_value(&original).unwrap()).unwrap();
        assert_eq!(value, original);
    }

    #[test]
    fn custom_kind_with_display_hints() {
        let value = normalize_result(json!({
            "kind": "git.status", "data": {"branch": "main"},
            "display": {"preferredView": "tree", "collapsed": true}
        }))
        .unwrap();
        let display = value.display.unwrap();
        assert_eq!(
            display.preferred_view,
            Some(crate::result::PreferredView::Tree)
        );
        assert_eq!(display.collapsed, Some(true));
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            normalize_result(json!("text")),
            Err(NormalizeError::NotAnObject)
        );
        assert_eq!(
            normalize_result(json!({"data": 1})),
            Err(NormalizeError::MissingKind)
        );
        assert_eq!(
            normalize_result(json!({"kind": 3})),
            Err(NormalizeError::MissingKind)
        );
        assert_eq!(
            normalize_result(json!({"kind": "Bad-Kind", "data": 1})),
            Err(NormalizeError::InvalidKind("Bad-Kind".into()))
        );
        assert!(matches!(
            normalize_result(json!({"kind": "x", "data": 1, "display": {"preferredView": "3d"}})),
            Err(NormalizeError::InvalidDisplay(_))
        ));
    }
}
