//! What a `call` printed, as a result: a JSON object with a `kind` is a `ToolResultValue`
//! (normalized; custom kinds allowed, an invalid one is an error), another JSON object is
//! `structured`, anything else is `text`. Output that starts with `{` but is not JSON is an
//! error, so that a module's broken JSON never reaches the model as if it were an answer.

use golem_protocol::normalize::normalize_result;
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use serde_json::Value;

/// The result of a call of `what` (naming the tool and the module) that printed `stdout`.
pub fn result(what: &str, stdout: &str) -> Result<ToolResultValue, ToolError> {
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        return Ok(ToolResultValue::text(stdout.trim_end_matches('\n')));
    }
    let value: Value = serde_json::from_str(trimmed).map_err(|e| {
        let shown: String = trimmed.chars().take(200).collect();
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{what} printed malformed JSON ({e}): {shown:?}"),
        )
    })?;
    if value.get("kind").is_none() {
        return Ok(ToolResultValue::structured(value));
    }
    normalize_result(value).map_err(|e| {
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{what} returned a bad result: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_structured_kinds_and_errors() {
        assert_eq!(result("t", "hi\n").unwrap(), ToolResultValue::text("hi"));
        assert_eq!(result("t", "{\"a\":1}").unwrap().kind, "structured");
        let custom = result("t", r#"{"kind":"acme.report","data":{"x":1}}"#).unwrap();
        assert_eq!(custom.kind, "acme.report");
        let err = result("tool `t`", r#"{"kind":"Bad Kind","data":{}}"#).unwrap_err();
        assert!(err.message.contains("tool `t`") && err.message.contains("Bad Kind"));
        let err = result("tool `t`", "{\"kind\": ").unwrap_err();
        assert!(err.message.contains("malformed JSON"), "{}", err.message);
    }
}
