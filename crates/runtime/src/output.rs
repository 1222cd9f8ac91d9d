//! Structured final answers: a worker with `output: {schema}` answers with a JSON value valid
//! against that schema. [`OutputSchema`] is the schema compiled once per worker; it checks a
//! candidate answer (the answer's text, or the input of the Anthropic wire's `final_result`
//! call) and says what is wrong with it, path by path, for the repair request and for the
//! error that fails the turn.

use std::fmt;

use golem_llm::OutputFormat;
use serde_json::Value;

/// The most violations one message lists (the rest are counted).
const MAX_LISTED: usize = 5;

/// A worker's output schema, compiled.
pub struct OutputSchema {
    format: OutputFormat,
    validator: jsonschema::Validator,
}

impl fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputSchema")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

/// A schema the `jsonschema` crate refuses (worker files are checked when read, so this is
/// for schemas given by code).
#[derive(Debug, thiserror::Error)]
#[error("invalid output schema of worker {worker}: {message}")]
pub struct OutputSchemaError {
    /// The worker's name.
    pub worker: String,
    /// What the `jsonschema` crate said.
    pub message: String,
}

/// One way an answer misses the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the answer, as a JSON pointer (empty: the whole answer).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// Why an answer is not the structured value the worker promised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerProblem {
    /// The answer is not JSON at all; the parser's message.
    NotJson(String),
    /// The answer is JSON but not valid against the schema; at least one violation.
    Invalid(Vec<Violation>),
}

impl fmt::Display for AnswerProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerProblem::NotJson(error) => write!(f, "the answer is not valid JSON ({error})"),
            AnswerProblem::Invalid(violations) => {
                for (index, violation) in violations.iter().take(MAX_LISTED).enumerate() {
                    if index > 0 {
                        f.write_str("; ")?;
                    }
                    let path = if violation.path.is_empty() {
                        "/"
                    } else {
                        &violation.path
                    };
                    write!(f, "at `{path}`: {}", violation.message)?;
                }
                if violations.len() > MAX_LISTED {
                    write!(f, "; and {} more", violations.len() - MAX_LISTED)?;
                }
                Ok(())
            }
        }
    }
}

impl OutputSchema {
    /// Compiles `schema`, the output schema of worker `worker`.
    pub fn new(worker: &str, schema: Value) -> Result<Self, OutputSchemaError> {
        let validator = jsonschema::validator_for(&schema).map_err(|e| OutputSchemaError {
            worker: worker.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Self {
            format: OutputFormat::new(worker, golem_core::schema_lean::lean_schema(&schema)),
            validator,
        })
    }

    /// What each model request carries: the schema's lean form
    /// ([`golem_core::schema_lean::lean_schema`]); answers are checked against the full one.
    pub fn format(&self) -> &OutputFormat {
        &self.format
    }

    /// The JSON Schema the model is sent (its lean form).
    pub fn schema(&self) -> &Value {
        &self.format.schema
    }

    /// The value of an answer given as text: parsed as JSON (a fenced ```json block is
    /// accepted, as some models wrap their answer in one) and checked.
    pub fn check_text(&self, text: &str) -> Result<Value, AnswerProblem> {
        let value: Value = serde_json::from_str(unfenced(text))
            .map_err(|e| AnswerProblem::NotJson(e.to_string()))?;
        self.check_value(value)
    }

    /// `value` when it is valid against the schema.
    pub fn check_value(&self, value: Value) -> Result<Value, AnswerProblem> {
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(&value)
            .map(|error| Violation {
                path: error.instance_path().to_string(),
                message: error.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(value)
        } else {
            Err(AnswerProblem::Invalid(violations))
        }
    }

    /// The user message asking for the answer again after `problem`.
    pub fn repair_message(&self, problem: &AnswerProblem) -> String {
        format!(
            "Your final answer does not match the required output schema: {problem}. Answer \
             again with only a JSON value valid against the schema."
        )
    }
}

/// `text` without a surrounding ```json … ``` (or ``` … ```) fence and outer whitespace.
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(inner) = rest.strip_suffix("```") else {
        return trimmed;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::new(
            "judge",
            json!({"type": "object", "properties": {"verdict": {"enum": ["ok", "bad"]}},
                   "required": ["verdict"]}),
        )
        .unwrap()
    }

    #[test]
    fn a_valid_answer_is_its_value() {
        assert_eq!(
            schema().check_text(" {\"verdict\": \"ok\"}\n"),
            Ok(json!({"verdict": "ok"}))
        );
        assert_eq!(
            schema().check_text("```json\n{\"verdict\": \"bad\"}\n```"),
            Ok(json!({"verdict": "bad"}))
        );
    }

    #[test]
    fn problems_name_the_path_and_what_is_wrong() {
        let problem = schema().check_text("{\"verdict\": \"maybe\"}").unwrap_err();
        assert_eq!(
            problem.to_string(),
            "at `/verdict`: \"maybe\" is not one of \"ok\" or \"bad\""
        );
        let problem = schema().check_text("{}").unwrap_err();
        assert_eq!(
            problem.to_string(),
            "at `/`: \"verdict\" is a required property"
        );
        let problem = schema().check_text("yes").unwrap_err();
        assert!(
            problem
                .to_string()
                .starts_with("the answer is not valid JSON"),
            "{problem}"
        );
    }
}
