//! What a `call` printed, as a result: a JSON object with a valid `kind` is a
//! `ToolResultValue` (normalized; custom kinds allowed), another JSON object is `structured`,
//! anything else is `text`. A JSON object whose `kind` is unusable (not a string, or breaking
//! the naming rule), whose display hints are not display hints, or whose data is not what its
//! well-known kind holds (a `text` without a string `content`, …) is passed on as `structured`,
//! the object as printed (so its `kind` is kept in it), with a warning for the tool's author:
//! the data reaches the model instead of an error. Output that starts with `{` but is not JSON
//! is an error, so that a module's broken JSON never reaches the model as if it were an answer.

use golem_protocol::normalize::normalize_result;
use golem_protocol::result::{
    CodeResultData, DiffData, FileContentData, FileListData, ImageData, TableData, TextData,
};
use golem_protocol::{NormalizeError, ToolError, ToolErrorCode, ToolResultValue};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A call's result, and what its author should be told about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The result.
    pub value: ToolResultValue,
    /// Why the result is not what the tool printed (passed on as `structured`), naming the tool.
    pub warning: Option<String>,
}

/// The result of a call of `what` (naming the tool and the module) that printed `stdout`.
pub fn result(what: &str, stdout: &str) -> Result<Output, ToolError> {
    let plain = |value: ToolResultValue| -> Result<Output, ToolError> {
        Ok(Output {
            value,
            warning: None,
        })
    };
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        return plain(ToolResultValue::text(stdout.trim_end_matches('\n')));
    }
    let value: Value = serde_json::from_str(trimmed).map_err(|e| {
        let shown: String = trimmed.chars().take(200).collect();
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{what} printed malformed JSON ({e}): {shown:?}"),
        )
    })?;
    let Some(kind) = value.get("kind") else {
        return plain(ToolResultValue::structured(value));
    };
    let why = match normalize_result(value.clone()) {
        Ok(result) => match data_mismatch(&result) {
            None => return plain(result),
            Some(why) => why,
        },
        Err(NormalizeError::MissingKind) => format!("its `kind` must be a string, not {kind}"),
        Err(e) => e.to_string(),
    };
    Ok(Output {
        value: ToolResultValue::structured(value),
        warning: Some(format!(
            "{what} returned a result that is not a valid tool result ({why}); it was passed \
             on as `structured`, as printed"
        )),
    })
}

/// Why the data of a result of a well-known kind is not what that kind holds; `None` when it
/// is (and for custom kinds, whose data is the tool's own business).
fn data_mismatch(result: &ToolResultValue) -> Option<String> {
    /// What is missing from the data.
    #[derive(Debug, thiserror::Error)]
    enum Mismatch {
        /// Not of the kind's shape (the parser's words).
        #[error("{0}")]
        Shape(#[from] serde_json::Error),
        /// An image with nothing to show.
        #[error("an image needs a `url`, `base64` or `path`")]
        NoImageSource,
    }
    fn holds<T: DeserializeOwned>(data: &Value) -> Result<(), Mismatch> {
        Ok(T::deserialize(data).map(drop)?)
    }
    let data = &result.data;
    let checked = match result.kind.as_str() {
        "text" => holds::<TextData>(data),
        "diff" => holds::<DiffData>(data),
        "file_content" => holds::<FileContentData>(data),
        "file_list" => holds::<FileListData>(data),
        "table" => holds::<TableData>(data),
        "code_result" => holds::<CodeResultData>(data),
        "image" => holds::<ImageData>(data).and_then(|()| {
            let has = |key| data.get(key).is_some_and(Value::is_string);
            if has("url") || has("base64") || has("path") {
                Ok(())
            } else {
                Err(Mismatch::NoImageSource)
            }
        }),
        _ => Ok(()),
    };
    checked
        .err()
        .map(|e| format!("its data is not what a `{}` result holds: {e}", result.kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(stdout: &str) -> ToolResultValue {
        let output = result("t", stdout).unwrap();
        assert_eq!(output.warning, None, "{stdout}");
        output.value
    }

    #[test]
    fn text_structured_kinds_and_errors() {
        assert_eq!(ok("hi\n"), ToolResultValue::text("hi"));
        assert_eq!(ok("{\"a\":1}").kind, "structured");
        let custom = ok(r#"{"kind":"acme.report","data":{"x":1}}"#);
        assert_eq!(custom.kind, "acme.report");
        assert_eq!(ok(r#"{"kind":"text","data":{"content":"x"}}"#).kind, "text");
        assert_eq!(ok(r#"{"kind":"image","data":{"url":"u"}}"#).kind, "image");
        let err = result("tool `t`", "{\"kind\": ").unwrap_err();
        assert!(err.message.contains("malformed JSON"), "{}", err.message);
    }

    #[test]
    fn a_result_that_is_not_valid_is_passed_on_as_structured_with_a_warning() {
        for (printed, why) in [
            (json!({"kind": "Invalid", "data": {"x": 1}}), "`Invalid`"),
            (json!({"kind": 123, "data": {"x": 1}}), "not 123"),
            (
                json!({"kind": "test-kind", "data": {"x": 1}}),
                "`test-kind`",
            ),
            (json!({"kind": null, "data": 1}), "not null"),
            (
                json!({"kind": "acme.x", "data": 1, "display": 3}),
                "display",
            ),
            (json!({"kind": "text", "data": {"text": "hi"}}), "`content`"),
            (json!({"kind": "table", "data": [1, 2]}), "a `table` result"),
            (json!({"kind": "image", "data": {"alt": "a"}}), "`url`"),
        ] {
            let output = result("tool `t` (module m)", &printed.to_string()).unwrap();
            assert_eq!(output.value, ToolResultValue::structured(printed.clone()));
            let warning = output.warning.expect("a warning");
            assert!(
                warning.contains("tool `t` (module m)")
                    && warning.contains(why)
                    && warning.contains("structured"),
                "{printed}: {warning}"
            );
        }
    }
}
