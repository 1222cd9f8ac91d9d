//! A model's tool call as the orchestrator takes it. The two sides do not know each other
//! (`golem-llm` does not depend on `golem-core`), so the runtime, which uses both, converts.

use golem_core::orchestrator::ToolCall;
use golem_llm::ModelToolCall;

/// The call as the orchestrator takes it; malformed argument JSON becomes a call that the
/// orchestrator answers with an `INVALID_ARGUMENTS` result instead of running it.
pub fn tool_call(call: &ModelToolCall) -> ToolCall {
    match call.parsed_arguments() {
        Ok(args) => ToolCall::from_model(&call.id, &call.name, args),
        Err(error) => ToolCall::malformed(&call.id, &call.name, &call.arguments, error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn converts_to_orchestrator_calls() {
        let call = ModelToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: r#"{"a": 1}"#.into(),
        };
        let converted = tool_call(&call);
        assert_eq!(converted.args, json!({"a": 1}));
        assert_eq!(converted.malformed_args, None);
        let bad = ModelToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: r#"{"a": "#.into(),
        };
        let converted = tool_call(&bad);
        assert!(converted.malformed_args.is_some());
        assert_eq!(converted.args, json!(r#"{"a": "#));
    }
}
