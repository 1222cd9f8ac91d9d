//! Secret values kept out of tool output: the values of the API keys and tokens in golem-forge's
//! own environment are replaced by `[redacted]` in every tool result and error before it reaches
//! the model, a front end or a transcript (docs/safety.md, Secrets). The jail already keeps these
//! variables from programs; this catches a secret that reaches output some other way (a key in a
//! file a tool reads, a program that finds one on disk).

use serde_json::Value;

use golem_protocol::{ToolError, ToolResultValue};

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are never treated as secrets (they would match ordinary text).
pub const MIN_SECRET_LEN: usize = 8;

/// Whether an environment variable's name says it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "_API_KEY",
        "_TOKEN",
        "_SECRET",
        "_PASSWORD",
        "_ACCESS_KEY",
        "_SECRET_KEY",
    ]
    .iter()
    .any(|suffix| upper.ends_with(suffix))
        || upper == "API_KEY"
}

/// Replaces known secret values in tool output.
#[derive(Debug, Clone, Default)]
pub struct SecretRedactor {
    /// Longest first, so a secret containing another is replaced whole.
    secrets: Vec<String>,
}

impl SecretRedactor {
    /// A redactor for `values` (short ones are ignored).
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = values
            .into_iter()
            .map(|v| v.trim().to_owned())
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Self { secrets }
    }

    /// A redactor for the secret-named variables of `vars` and for the variables named in
    /// `extra_names` (say, a provider's configured `api_key_env`).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
        extra_names: &[&str],
    ) -> Self {
        Self::new(
            vars.into_iter()
                .filter(|(name, _)| is_secret_name(name) || extra_names.contains(&name.as_str()))
                .map(|(_, value)| value),
        )
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced, or `None` when it holds none.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for secret in &self.secrets {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(secret.as_str()) {
                out = Some(current.replace(secret.as_str(), REDACTED));
            }
        }
        out
    }

    /// Replaces secrets in every string of `value`; returns whether anything changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        match value {
            Value::String(text) => match self.redact_str(text) {
                Some(clean) => {
                    *text = clean;
                    true
                }
                None => false,
            },
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.redact_value(item) | changed),
            Value::Object(map) => map
                .values_mut()
                .fold(false, |changed, item| self.redact_value(item) | changed),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    /// Cleans a tool result (its data and summary).
    pub fn redact_result(&self, result: &mut ToolResultValue) -> bool {
        let mut changed = self.redact_value(&mut result.data);
        if let Some(summary) = &mut result.summary
            && let Some(clean) = self.redact_str(summary)
        {
            *summary = clean;
            changed = true;
        }
        changed
    }

    /// Cleans a tool error (its message and details).
    pub fn redact_error(&self, error: &mut ToolError) -> bool {
        let mut changed = false;
        if let Some(clean) = self.redact_str(&error.message) {
            error.message = clean;
            changed = true;
        }
        if let Some(details) = &mut error.details {
            changed |= self.redact_value(details);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names() {
        for name in [
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "API_KEY",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "TOKENIZER", "KEYBOARD"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn replaces_every_occurrence_in_nested_values_and_ignores_short_values() {
        let redactor = SecretRedactor::from_vars(
            [
                (
                    "ANTHROPIC_API_KEY".to_owned(),
                    "sk-ant-123456789".to_owned(),
                ),
                ("SHORT_TOKEN".to_owned(), "abc".to_owned()),
                ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
                ("MY_KEY_VAR".to_owned(), "configured-secret".to_owned()),
            ],
            &["MY_KEY_VAR"],
        );
        let mut value = json!({
            "stdout": "key=sk-ant-123456789\nagain sk-ant-123456789",
            "lines": ["configured-secret", 3, null, "abc", "/usr/bin:/bin"],
        });
        assert!(redactor.redact_value(&mut value));
        assert_eq!(
            value,
            json!({
                "stdout": "key=[redacted]\nagain [redacted]",
                "lines": ["[redacted]", 3, null, "abc", "/usr/bin:/bin"],
            })
        );
        assert!(!redactor.redact_value(&mut json!({"clean": "nothing here"})));
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let redactor = SecretRedactor::new(["abcdefgh".to_owned(), "abcdefgh-longer".to_owned()]);
        assert_eq!(
            redactor
                .redact_str("x abcdefgh-longer y abcdefgh")
                .as_deref(),
            Some("x [redacted] y [redacted]")
        );
    }
}
