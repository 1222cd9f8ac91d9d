//! What a module's `describe` printed, read and checked: `{"tools": [...]}` with each tool's
//! name, description, input schema, and optionally its own `needsApproval` (a bool, or
//! `"dynamic"`: ask the module with `policy NAME`) and `manualExecution`; the whitelist
//! applied. Every problem is an error naming the module and the tool.

use golem_core::tool::ManualExecution;
use golem_protocol::ExecutionMode;
use serde::Deserialize;
use serde_json::Value;

use super::{CustomError, ToolProblem};

/// A tool's own approval policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnPolicy {
    /// Asks (`true`) or runs without asking (`false`), whatever the arguments.
    Static(bool),
    /// Decided per call by the module (`policy NAME`).
    Dynamic,
}

/// One tool as the module describes it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
    /// Its own policy, if any.
    pub own_policy: Option<OwnPolicy>,
    /// Who may call it.
    pub execution: ManualExecution,
}

/// Everything `describe` printed, as written.
#[derive(Debug, Deserialize)]
pub struct Described {
    tools: Vec<RawEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, alias = "input_schema")]
    input_schema: Option<Value>,
    #[serde(default, alias = "needs_approval")]
    needs_approval: Option<Value>,
    #[serde(default, alias = "manual_execution")]
    manual_execution: Option<RawManual>,
    /// Set by the adapters for a tool they could not describe (no usable schema).
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawManual {
    #[serde(default)]
    mode: ExecutionMode,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    category: Option<String>,
}

/// Reads what `describe` printed as JSON (what the describe cache keeps).
pub fn parse(module: &str, stdout: &str) -> Result<Value, CustomError> {
    serde_json::from_str(stdout.trim()).map_err(|e| did_not_print(module, e, stdout))
}

/// Reads the JSON `describe` printed as its tool list.
pub fn from_value(module: &str, raw: &Value) -> Result<Described, CustomError> {
    Described::deserialize(raw).map_err(|e| did_not_print(module, e, &raw.to_string()))
}

/// The error of a module whose `describe` printed `stdout`, which is not a tool list.
fn did_not_print(module: &str, source: serde_json::Error, stdout: &str) -> CustomError {
    CustomError::DidNotPrint {
        module: module.to_owned(),
        source,
        printed: stdout.trim().chars().take(200).collect(),
    }
}

/// Whether `name` is a tool name every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The exposed tools, in the module's order: those `whitelist` names (each must exist), or
/// all of them. An exposed tool without a usable schema, a bad name or a bad policy is an
/// error; tools left out are not checked.
pub fn select(
    module: &str,
    described: Described,
    whitelist: Option<&[String]>,
) -> Result<Vec<Entry>, CustomError> {
    let tool_error = |name: &str, problem: ToolProblem| CustomError::Tool {
        tool: name.to_owned(),
        module: module.to_owned(),
        problem,
    };
    let names: Vec<&str> = described.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(list) = whitelist {
        for wanted in list {
            if !names.contains(&wanted.as_str()) {
                return Err(CustomError::NoSuchTool {
                    module: module.to_owned(),
                    wanted: wanted.clone(),
                    has: names.iter().map(|name| (*name).to_owned()).collect(),
                });
            }
        }
    }
    let mut entries: Vec<Entry> = Vec::new();
    for raw in described.tools {
        if whitelist.is_some_and(|list| !list.contains(&raw.name)) {
            continue;
        }
        let name = raw.name;
        if !is_valid_name(&name) {
            return Err(tool_error(&name, ToolProblem::BadName));
        }
        if entries.iter().any(|e| e.name == name) {
            return Err(tool_error(&name, ToolProblem::Duplicate));
        }
        if let Some(why) = raw.error {
            return Err(tool_error(&name, ToolProblem::NotDescribed(why)));
        }
        let input_schema = match raw.input_schema {
            Some(schema @ Value::Object(_)) => schema,
            Some(_) | None => {
                return Err(tool_error(&name, ToolProblem::NoSchema));
            }
        };
        if input_schema
            .get("type")
            .is_some_and(|t| t != &Value::String("object".to_owned()))
        {
            return Err(tool_error(&name, ToolProblem::NotAnObject));
        }
        let own_policy = match raw.needs_approval {
            None | Some(Value::Null) => None,
            Some(Value::Bool(ask)) => Some(OwnPolicy::Static(ask)),
            Some(Value::String(s)) if s == "dynamic" => Some(OwnPolicy::Dynamic),
            Some(other) => {
                return Err(tool_error(&name, ToolProblem::BadPolicy(other)));
            }
        };
        let execution = match raw.manual_execution {
            None => ManualExecution::llm(),
            Some(manual) => ManualExecution {
                mode: manual.mode,
                label: manual.label,
                category: manual.category,
            },
        };
        entries.push(Entry {
            description: raw.description.unwrap_or_default(),
            name,
            input_schema,
            own_policy,
            execution,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(text: &str) -> Described {
        from_value("m.py", &parse("m.py", text).unwrap()).unwrap()
    }

    #[test]
    fn the_whitelist_hides_the_rest_and_names_what_is_missing() {
        let d = || {
            described(
                r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}},
                    {"name":"b","error":"parameter `x` has no type hint"}]}"#,
            )
        };
        let only_a = select("m.py", d(), Some(&["a".to_owned()])).unwrap();
        assert_eq!(only_a.len(), 1);
        let err = select("m.py", d(), None).unwrap_err().to_string();
        assert!(
            err.contains("custom tool `b` (module m.py)") && err.contains("type hint"),
            "{err}"
        );
        let err = select("m.py", d(), Some(&["c".to_owned()]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no tool `c`") && err.contains("it has: a, b"),
            "{err}"
        );
    }

    #[test]
    fn bad_output_and_bad_policies_are_errors() {
        let err = parse("m.sh", "not json").unwrap_err();
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(
            err.to_string(),
            format!(
                "custom tool module m.sh: `describe` did not print {{\"tools\": [...]}} as JSON \
                 ({}); it printed: \"not json\"",
                source.unwrap_or_default()
            )
        );
        let err = from_value("m.sh", &serde_json::json!({"tool": []}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not print"), "{err}");
        let d = described(r#"{"tools":[{"name":"a","inputSchema":{},"needsApproval":"maybe"}]}"#);
        assert!(
            select("m", d, None)
                .unwrap_err()
                .to_string()
                .contains("needsApproval")
        );
        let d = described(r#"{"tools":[{"name":"a","inputSchema":{},"needsApproval":3}]}"#);
        assert_eq!(
            select("m", d, None).unwrap_err().to_string(),
            "custom tool `a` (module m): `needsApproval` must be true, false or \"dynamic\", not 3"
        );
        let d = described(r#"{"tools":[{"name":"a","inputSchema":[]}]}"#);
        assert_eq!(
            select("m", d, None).unwrap_err().to_string(),
            "custom tool `a` (module m): no usable input schema: `inputSchema` must be a JSON \
             Schema object"
        );
        let d = described(r#"{"tools":[{"name":"a b","inputSchema":{}}]}"#);
        assert!(
            select("m", d, None)
                .unwrap_err()
                .to_string()
                .contains("tool name")
        );
        let d = described(
            r#"{"tools":[{"name":"a","inputSchema":{},"needsApproval":"dynamic",
                "manualExecution":{"mode":"both","label":"A"}}]}"#,
        );
        let e = &select("m", d, None).unwrap()[0];
        assert_eq!(e.own_policy, Some(OwnPolicy::Dynamic));
        assert_eq!(e.execution.mode, ExecutionMode::Both);
    }
}
