//! Questions a tool asks the user while it runs (an MCP server's elicitation), as forms.
//!
//! A tool finds an [`InputRequester`] in its [`ToolContext`](crate::tool::ToolContext) only
//! when some attached front end can answer (a terminal or a browser tab; see
//! [`UiEventBus::register_input_answerer`](crate::bus::UiEventBus::register_input_answerer));
//! a headless run gives it none, and the tool declines on the user's behalf. The requester
//! asks through [`RuntimeUI::get_form_input`] with fields derived from the schema asked for,
//! then types the answer by that schema (text typed as numbers, yes/no, lists, the way slash
//! commands type options), fills in the defaults of fields left out, and checks the result
//! against the schema; an answer that does not fit is asked again with the reason, a few times
//! at most. An interrupt cancels the question. The answer ([`FormAnswer`]) is the UI
//! exchange's, defined in `ui.rs` beside [`RuntimeUI::get_form_input`].

use golem_protocol::FormField;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::coerce::{CoerceError, options_to_args};
use crate::fields::derive_fields_from_schema;
use crate::ui::RuntimeUI;
pub use crate::ui::{FormAnswer, answer_from_text};

/// How many times one question is asked when the answers do not fit its schema.
const MAX_ASKS: usize = 3;

/// Asks the user to fill a form on behalf of a running tool. Cheap to clone.
#[derive(Debug, Clone)]
pub struct InputRequester {
    ui: RuntimeUI,
}

impl InputRequester {
    /// A requester asking through `ui`.
    pub fn new(ui: RuntimeUI) -> Self {
        Self { ui }
    }

    /// Asks `prompt` on behalf of `source` (who asks, e.g. "MCP server `everything`") with a
    /// form derived from the object `schema`, and returns the typed, checked values, or the
    /// refusal. Answers that do not fit are asked again with the reason; after
    /// [`MAX_ASKS`] misfits, or when the front end fails, the question ends as cancelled.
    pub async fn ask(
        &self,
        prompt: &str,
        source: &str,
        schema: &Value,
        cancel: &CancellationToken,
    ) -> FormAnswer {
        let fields = derive_fields_from_schema(schema);
        let mut shown = prompt.to_owned();
        for _ in 0..MAX_ASKS {
            let answer = self
                .ui
                .get_form_input(&shown, Some(source), fields.clone(), cancel)
                .await;
            match answer {
                Ok(FormAnswer::Accepted(values)) => match check_values(schema, &fields, values) {
                    Ok(values) => return FormAnswer::Accepted(values),
                    Err(reason) => {
                        shown = format!(
                            "{prompt}\n\nThe last answer was not accepted: {reason}. Please \
                             answer again."
                        );
                    }
                },
                Ok(refused @ (FormAnswer::Declined | FormAnswer::Cancelled)) => return refused,
                Err(e) => {
                    tracing::warn!(error = %e, source, "a form question ended without an answer");
                    return FormAnswer::Cancelled;
                }
            }
        }
        FormAnswer::Cancelled
    }
}

/// Why a form's answers were not accepted; the question is asked again with this message.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// An answer cannot be typed by its property's schema (or names no property).
    #[error(transparent)]
    Untyped(#[from] CoerceError),
    /// The typed answers break the schema: each problem with the field it is about, at most
    /// eight.
    #[error("{}", problems.join("; "))]
    DoesNotFit {
        /// Each problem, `field: what is wrong` (no field for the whole form).
        problems: Vec<String>,
    },
}

/// Types `values` by `schema` (text into the property's type), leaves out empty text and
/// nulls (not given), fills in the defaults of the fields not given, and checks the result
/// against the schema. The error says what does not fit.
pub fn check_values(
    schema: &Value,
    fields: &[FormField],
    values: Map<String, Value>,
) -> Result<Map<String, Value>, AnswerError> {
    let given: Map<String, Value> = values
        .into_iter()
        .filter(|(_, value)| match value {
            Value::Null => false,
            Value::String(text) => !text.trim().is_empty(),
            _ => true,
        })
        .collect();
    let mut typed = options_to_args(&[], &given, schema)?;
    for field in fields {
        if let Some(default) = &field.default
            && !typed.contains_key(&field.name)
        {
            typed.insert(field.name.clone(), default.clone());
        }
    }
    let instance = Value::Object(typed);
    match jsonschema::validator_for(schema) {
        Ok(validator) => {
            let problems: Vec<String> = validator
                .iter_errors(&instance)
                .take(8)
                .map(|e| {
                    let at = e.instance_path().to_string();
                    if at.is_empty() {
                        e.to_string()
                    } else {
                        format!("{}: {e}", at.trim_start_matches('/'))
                    }
                })
                .collect();
            if !problems.is_empty() {
                return Err(AnswerError::DoesNotFit { problems });
            }
        }
        // The schema came from outside; typing the values is all that can be done.
        Err(e) => tracing::debug!(error = %e, "a form's schema does not compile; not checked"),
    }
    match instance {
        Value::Object(values) => Ok(values),
        _ => Ok(Map::new()),
    }
}

#[cfg(test)]
mod tests;
