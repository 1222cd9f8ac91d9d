//! Model names: `provider:model`, split at the first colon (`openrouter:openai/gpt-4o:free`
//! keeps the rest as the model); a bare provider name is its entry's bare model (`test` is
//! `test:default`). The built-in names come from [`crate::providers::BUILTIN`].

use std::fmt;

use crate::error::ModelError;
use crate::providers;

/// A parsed `provider:model`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSpec {
    /// The provider (`anthropic`, `openai`, a configured name, …).
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
}

impl ModelSpec {
    /// Parses `provider:model`. `extra_providers` are the names defined in program config.
    pub fn parse(text: &str, extra_providers: &[&str]) -> Result<Self, ModelError> {
        let text = text.trim();
        let Some((provider, model)) = text.split_once(':') else {
            let builtin = providers::builtin(text);
            if let Some((entry, model)) = builtin.and_then(|e| Some((e, e.bare_model?))) {
                return Ok(Self {
                    provider: entry.name.to_owned(),
                    model: model.to_owned(),
                });
            }
            let message = if builtin.is_some() || extra_providers.contains(&text) {
                format!("model `{text}` names only a provider: write {text}:MODEL")
            } else {
                format!(
                    "model `{text}` needs a provider: write it as provider:model, e.g. \
                     anthropic:claude-haiku-4-5 or test:default"
                )
            };
            return Err(ModelError::Config(message));
        };
        if provider.is_empty() {
            return Err(ModelError::Config(format!(
                "model `{text}` has an empty provider"
            )));
        }
        if model.trim().is_empty() {
            return Err(ModelError::Config(format!(
                "model `{text}` names no model after `{provider}:`"
            )));
        }
        if providers::builtin(provider).is_none() && !extra_providers.contains(&provider) {
            let mut known: Vec<&str> = providers::builtin_names().collect();
            known.extend_from_slice(extra_providers);
            return Err(ModelError::Config(format!(
                "unknown provider `{provider}` in model `{text}`; known providers: {}",
                known.join(", ")
            )));
        }
        Ok(Self {
            provider: provider.to_owned(),
            model: model.to_owned(),
        })
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_first_colon() {
        let spec = ModelSpec::parse("openrouter:openai/gpt-4o:free", &[]).unwrap();
        assert_eq!(spec.provider, "openrouter");
        assert_eq!(spec.model, "openai/gpt-4o:free");
        assert_eq!(spec.to_string(), "openrouter:openai/gpt-4o:free");
        let spec = ModelSpec::parse("anthropic:claude-haiku-4-5", &[]).unwrap();
        assert_eq!(
            (spec.provider.as_str(), spec.model.as_str()),
            ("anthropic", "claude-haiku-4-5")
        );
    }

    #[test]
    fn a_bare_test_means_the_default_test_model() {
        let spec = ModelSpec::parse(" test ", &[]).unwrap();
        assert_eq!(spec.to_string(), "test:default");
        let err = ModelSpec::parse("anthropic", &[]).unwrap_err().to_string();
        assert_eq!(
            err,
            "model `anthropic` names only a provider: write anthropic:MODEL"
        );
    }

    #[test]
    fn clear_errors() {
        let err = ModelSpec::parse("anthropic:", &[]).unwrap_err().to_string();
        assert_eq!(err, "model `anthropic:` names no model after `anthropic:`");
        let err = ModelSpec::parse("claude", &[]).unwrap_err().to_string();
        assert!(err.contains("provider:model"), "{err}");
        let err = ModelSpec::parse(":x", &[]).unwrap_err().to_string();
        assert!(err.contains("empty provider"), "{err}");
        let err = ModelSpec::parse("antropic:claude", &["local"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown provider `antropic`"), "{err}");
        assert!(
            err.contains("anthropic, openai") && err.contains("local"),
            "{err}"
        );
        assert!(ModelSpec::parse("local:llama3", &["local"]).is_ok());
        // The built-in table's order, then the program's names.
        let err = ModelSpec::parse("x:y", &["local"]).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "known providers: anthropic, openai, openai-responses, ollama, openrouter, \
                 test, replay, local"
            ),
            "{err}"
        );
        // Only `test` has a bare model; a configured name never does.
        assert!(ModelSpec::parse("replay", &[]).is_err());
        assert!(ModelSpec::parse("local", &["local"]).is_err());
    }
}
