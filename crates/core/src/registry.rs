//! The tool registry: every tool of a worker, with its compiled argument validator, filtered
//! into the model's set and the user's set, and turned into provider function definitions.
//! Manual-only tools are never in the model's set.
//!
//! A schema from outside (a custom module, an MCP server) is checked against the JSON Schema
//! meta-schema and compiled when it is registered, so a bad one fails the launch. The built-in
//! tools' schemas are derived from their Rust argument types and cannot be wrong
//! ([`ToolRegistry::register_checked`]): each is compiled on its tool's first validation. The
//! first compilation in a process builds the meta-schema's own validator, which costs more than
//! the rest of a session's start, so a session whose model calls no tool never pays for it.

use std::sync::{Arc, OnceLock};

use golem_protocol::{ManualToolInfo, ToolError, ToolErrorCode};
use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::fields::derive_fields_from_schema;
use crate::schema_lean::lean_tool_schema;
use crate::tool::Tool;

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum RegistryError {
    /// Two tools share a name.
    #[error("two tools are named `{0}`")]
    DuplicateName(String),
    /// The name is not usable by providers.
    #[error("invalid tool name `{0}`: use 1 to 64 letters, digits, `_` or `-`")]
    InvalidName(String),
    /// The input schema does not compile.
    #[error("tool `{tool}` has an invalid input schema: {message}")]
    InvalidSchema {
        tool: String,
        /// What is wrong.
        message: String,
    },
}

pub use golem_protocol::ToolDefinition;

struct Registered {
    tool: Arc<dyn Tool>,
    /// Compiled at registration, or on the first validation for a built-in tool; the error
    /// says what is wrong with the schema.
    validator: OnceLock<Result<jsonschema::Validator, RegistryError>>,
    /// What the model is told of the arguments ([`lean_tool_schema`] of the input schema),
    /// made on the first request.
    lean: OnceLock<Value>,
}

impl Registered {
    fn validator(&self) -> Result<&jsonschema::Validator, &RegistryError> {
        self.validator
            .get_or_init(|| compile(self.tool.name(), self.tool.input_schema()))
            .as_ref()
    }

    fn lean_schema(&self) -> &Value {
        self.lean
            .get_or_init(|| lean_tool_schema(self.tool.input_schema()))
    }
}

/// `schema` compiled, or [`RegistryError::InvalidSchema`] of the tool `tool` with
/// jsonschema's words.
fn compile(tool: &str, schema: &Value) -> Result<jsonschema::Validator, RegistryError> {
    jsonschema::validator_for(schema).map_err(|e| RegistryError::InvalidSchema {
        tool: tool.to_owned(),
        message: e.to_string(),
    })
}

/// Checks the input schema of the tool `tool` as [`ToolRegistry::register`] does (against the
/// meta-schema, then compiled), for a toolset that checks a schema once and later registers
/// it with [`ToolRegistry::register_checked`].
pub fn check_schema(tool: &str, schema: &Value) -> Result<(), RegistryError> {
    compile(tool, schema).map(drop)
}

/// The tools of one worker, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    tools: IndexMap<String, Registered>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, checking its input schema against the meta-schema and compiling it now: a
    /// schema from outside that is not valid is refused here.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = self.check_name(tool.as_ref())?;
        let validator = compile(&name, tool.input_schema())?;
        self.tools.insert(
            name,
            Registered {
                tool,
                validator: OnceLock::from(Ok(validator)),
                lean: OnceLock::new(),
            },
        );
        Ok(())
    }

    /// Adds a tool whose schema is known to be valid: a built-in tool's, derived from its
    /// argument type ([`crate::tool::input_schema_for`], perhaps with descriptions or examples
    /// added), or one its toolset checked with [`check_schema`] when it first saw it (a custom
    /// module's, kept in the describe cache). It is compiled on the tool's first validation,
    /// not now: building the meta-schema validator costs milliseconds a process. A schema that
    /// would not compile makes every call of the tool an error (the toolsets' own tests
    /// register their tools with [`ToolRegistry::register`], which checks them).
    pub fn register_checked(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = self.check_name(tool.as_ref())?;
        self.tools.insert(
            name,
            Registered {
                tool,
                validator: OnceLock::new(),
                lean: OnceLock::new(),
            },
        );
        Ok(())
    }

    fn check_name(&self, tool: &dyn Tool) -> Result<String, RegistryError> {
        let name = tool.name().to_owned();
        if !is_valid_tool_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistryError::DuplicateName(name));
        }
        Ok(name)
    }

    /// The tool of that exact name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).map(|r| &r.tool)
    }

    /// Every tool, in registration order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values().map(|r| &r.tool)
    }

    /// Every tool name, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tools the model may see and call (modes `llm` and `both`).
    pub fn llm_tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.all().filter(|t| t.execution().mode.is_llm_visible())
    }

    /// The tools the user may invoke by hand (modes `manual` and `both`).
    pub fn manual_tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.all()
            .filter(|t| t.execution().mode.is_manual_invocable())
    }

    /// Definitions of the model's tools, for providers: each with the lean form of its input
    /// schema ([`crate::schema_lean`]), what the model needs and no more; calls are still
    /// validated against the full one.
    pub fn llm_definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .filter(|r| r.tool.execution().mode.is_llm_visible())
            .map(|r| ToolDefinition {
                name: r.tool.name().to_owned(),
                description: r.tool.description().to_owned(),
                input_schema: r.lean_schema().clone(),
            })
            .collect()
    }

    /// Descriptors of the user's tools, with form fields, for front ends.
    pub fn manual_tool_infos(&self) -> Vec<ManualToolInfo> {
        self.manual_tools()
            .map(|t| {
                let execution = t.execution();
                ManualToolInfo {
                    name: t.name().to_owned(),
                    label: execution.label.unwrap_or_else(|| t.name().to_owned()),
                    description: t.description().to_owned(),
                    category: execution.category,
                    mode: execution.mode,
                    fields: derive_fields_from_schema(t.input_schema()),
                }
            })
            .collect()
    }

    /// Checks arguments against the tool's schema; the error lists every problem with its
    /// location, in words a model can act on. An unknown tool is `NOT_FOUND`.
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), ToolError> {
        let Some(registered) = self.tools.get(name) else {
            return Err(self.not_found(name));
        };
        let validator = registered
            .validator()
            .map_err(|error| ToolError::new(ToolErrorCode::ExecutionError, error.to_string()))?;
        if validator.is_valid(args) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(args)
            .take(8)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("invalid arguments for {name}: {}", problems.join("; ")),
        )
        .with_details(json!({"schema": registered.tool.input_schema()})))
    }

    /// The `NOT_FOUND` error for `name`, listing the tools there are.
    pub fn not_found(&self, name: &str) -> ToolError {
        let known: Vec<&str> = self.llm_tools().map(|t| t.name()).collect();
        let known = if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        };
        ToolError::new(
            ToolErrorCode::NotFound,
            format!(
                "Tool not found: {} (available tools: {known})",
                shown_name(name)
            ),
        )
    }
}

/// A tool name as an error message shows it: as it is when it looks like a name, else quoted
/// with its control characters escaped (an empty or blank name stays visible, and a name from
/// a model never carries terminal escapes into a message).
fn shown_name(name: &str) -> String {
    let plain = !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"');
    if plain {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fn_tool::FnTool;
    use crate::tool::ManualExecution;
    use golem_protocol::ToolResultValue;

    fn tool(name: &str, execution: ManualExecution) -> Arc<dyn Tool> {
        Arc::new(
            FnTool::new(
                name,
                format!("{name} tool"),
                json!({"type": "object", "properties": {"path": {"type": "string"},
                       "n": {"type": "integer", "minimum": 0}},
                       "required": ["path"], "additionalProperties": false}),
                |_, _| async { Ok(ToolResultValue::text("ok")) },
            )
            .with_execution(execution),
        )
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry
            .register(tool("read_file", ManualExecution::llm()))
            .unwrap();
        registry
            .register(tool(
                "deploy",
                ManualExecution::manual("Deploy", Some("Ops")),
            ))
            .unwrap();
        registry
            .register(tool("run_tests", ManualExecution::both("Run Tests", None)))
            .unwrap();
        registry
    }

    #[test]
    fn unknown_names_are_shown_quoted_when_they_do_not_look_like_names() {
        let registry = ToolRegistry::new();
        let message = |name: &str| registry.not_found(name).message;
        assert!(message("frobnicate").starts_with("Tool not found: frobnicate ("));
        assert!(message("").starts_with(r#"Tool not found: "" ("#));
        assert!(message(" \t").starts_with(r#"Tool not found: " \t" ("#));
        let shown = message("ls\u{1b}[2J\u{7}");
        assert!(
            shown.starts_with(r#"Tool not found: "ls\u{1b}[2J\u{7}" ("#),
            "{shown}"
        );
        assert!(!shown.contains('\u{1b}'));
    }

    #[test]
    fn filters_by_execution_mode() {
        let registry = registry();
        let llm: Vec<_> = registry.llm_tools().map(|t| t.name().to_owned()).collect();
        assert_eq!(llm, ["read_file", "run_tests"]);
        let manual: Vec<_> = registry
            .manual_tools()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(manual, ["deploy", "run_tests"]);
        let defs: Vec<_> = registry
            .llm_definitions()
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            defs,
            ["read_file", "run_tests"],
            "manual-only tools never reach the model"
        );
        let infos = registry.manual_tool_infos();
        assert_eq!(infos[0].label, "Deploy");
        assert_eq!(infos[0].category.as_deref(), Some("Ops"));
        assert_eq!(infos[0].fields.len(), 2);
    }

    #[test]
    fn rejects_duplicates_bad_names_and_bad_schemas() {
        let mut registry = registry();
        assert_eq!(
            registry.register(tool("deploy", ManualExecution::llm())),
            Err(RegistryError::DuplicateName("deploy".into()))
        );
        assert!(matches!(
            registry.register(tool("bad name", ManualExecution::llm())),
            Err(RegistryError::InvalidName(_))
        ));
        assert!(matches!(
            registry.register(tool("", ManualExecution::llm())),
            Err(RegistryError::InvalidName(_))
        ));
        let bad = FnTool::new("bad", "", json!({"type": 12}), |_, _| async {
            Ok(ToolResultValue::text(""))
        });
        assert!(matches!(
            registry.register(Arc::new(bad)),
            Err(RegistryError::InvalidSchema { .. })
        ));
    }

    #[test]
    fn builtin_schemas_are_compiled_on_first_validation() {
        let mut registry = ToolRegistry::new();
        registry
            .register_checked(tool("read_file", ManualExecution::llm()))
            .unwrap();
        assert!(registry.tools["read_file"].validator.get().is_none());
        assert_eq!(
            registry.register_checked(tool("read_file", ManualExecution::llm())),
            Err(RegistryError::DuplicateName("read_file".into()))
        );
        assert!(matches!(
            registry.register_checked(tool("bad name", ManualExecution::llm())),
            Err(RegistryError::InvalidName(_))
        ));
        assert!(
            registry
                .validate("read_file", &json!({"path": "/a"}))
                .is_ok()
        );
        assert!(registry.tools["read_file"].validator.get().is_some());
        let err = registry
            .validate("read_file", &json!({"n": -1}))
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidArguments);

        // A schema that does not compile makes each call an error.
        let bad = FnTool::new("bad", "", json!({"type": 12}), |_, _| async {
            Ok(ToolResultValue::text(""))
        });
        registry.register_checked(Arc::new(bad)).unwrap();
        let err = registry.validate("bad", &json!({})).unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(
            err.message
                .starts_with("tool `bad` has an invalid input schema: "),
            "{}",
            err.message
        );
    }

    #[test]
    fn validation_messages_name_each_problem() {
        let registry = registry();
        assert!(
            registry
                .validate("read_file", &json!({"path": "/a"}))
                .is_ok()
        );
        let err = registry
            .validate("read_file", &json!({"n": -1, "extra": true}))
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidArguments);
        assert!(
            err.message.starts_with("invalid arguments for read_file: "),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("\"path\" is a required property"),
            "{}",
            err.message
        );
        assert!(err.message.contains("at /n:"), "{}", err.message);
        assert!(err.message.contains("extra"), "{}", err.message);
        let err = registry
            .validate("read_file", &json!("not an object"))
            .unwrap_err();
        assert!(err.message.contains("not of type"), "{}", err.message);
        let err = registry.validate("nope", &json!({})).unwrap_err();
        assert_eq!(err.code, ToolErrorCode::NotFound);
        assert_eq!(
            err.message,
            "Tool not found: nope (available tools: read_file, run_tests)"
        );
    }

    #[test]
    fn the_model_is_sent_the_lean_schema_and_calls_are_validated_against_the_full_one() {
        // The shape a Python MCP server sends for `search(query: str, limit: int | None = None)`.
        let full = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "searchArguments",
            "type": "object",
            "properties": {
                "query": {"title": "Query", "type": "string"},
                "limit": {"title": "Limit", "anyOf": [{"type": "integer", "format": "int64"},
                          {"type": "null"}], "default": null}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let mut registry = ToolRegistry::new();
        let mcp = FnTool::new("srv__search", "Search.", full.clone(), |_, _| async {
            Ok(ToolResultValue::text(""))
        });
        registry.register(Arc::new(mcp)).unwrap();
        let sent = registry.llm_definitions().remove(0).input_schema;
        assert_eq!(
            sent,
            json!({"type": "object", "properties": {"query": {"type": "string"},
                   "limit": {"type": "integer"}}, "required": ["query"]})
        );
        assert_eq!(
            crate::schema_lean::non_standard_keywords(&sent),
            Vec::<String>::new()
        );
        assert_eq!(registry.get("srv__search").unwrap().input_schema(), &full);
        // What the full schema accepts and refuses, as before: an explicit null, not an extra key.
        for (args, valid) in [
            (json!({"query": "q"}), true),
            (json!({"query": "q", "limit": 3}), true),
            (json!({"query": "q", "limit": null}), true),
            (json!({"query": "q", "limit": "3"}), false),
            (json!({"query": "q", "other": 1}), false),
            (json!({"limit": 3}), false),
        ] {
            assert_eq!(
                registry.validate("srv__search", &args).is_ok(),
                valid,
                "{args}"
            );
        }
        let err = registry
            .validate("srv__search", &json!({"query": "q", "other": 1}))
            .unwrap_err();
        assert_eq!(err.details, Some(json!({"schema": full})));
    }
}
