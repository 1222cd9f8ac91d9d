//! From a model name to a model: a provider defined in program config first (on the client for
//! its wire format), else the built-in provider of that name (its entry in
//! [`crate::providers::BUILTIN`] builds the model).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::context::ContextWindows;
use crate::error::ModelError;
use crate::http::HttpSettings;
use crate::model::Model;
use crate::model_table::Described;
use crate::pricing::PriceTable;
use crate::providers;
use crate::providers::anthropic::{AnthropicConfig, AnthropicModel};
use crate::providers::openai_chat::OpenAiChatModel;
use crate::providers::openai_common::OpenAiConfig;
use crate::providers::openai_responses::OpenAiResponsesModel;
use crate::spec::ModelSpec;

/// The wire format a configured provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI Chat Completions (most OpenAI-compatible servers).
    #[default]
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

/// A provider declared in program config (`providers:` in `golem-forge.config.yaml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderDefinition {
    /// The API's base URL (with `/v1` for OpenAI-style APIs).
    pub base_url: String,
    /// The environment variable holding the API key, if the API needs one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The wire format; `chat` when absent.
    #[serde(default)]
    pub wire: Wire,
    /// Extra headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// Turns model names into models.
#[derive(Debug, Clone, Default)]
pub struct ModelResolver {
    providers: BTreeMap<String, ProviderDefinition>,
    settings: Option<HttpSettings>,
    prices: PriceTable,
    windows: ContextWindows,
}

impl ModelResolver {
    /// A resolver with the built-in providers and those defined in config (a definition with a
    /// built-in's name replaces the built-in, e.g. to send `openai` through a proxy).
    pub fn new(providers: BTreeMap<String, ProviderDefinition>) -> Self {
        Self {
            providers,
            settings: None,
            prices: PriceTable::defaults(),
            windows: ContextWindows::defaults(),
        }
    }

    /// Uses these timeouts and retries for every HTTP provider.
    pub fn with_settings(mut self, settings: HttpSettings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Prices models by `prices` (the defaults apply without it).
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.prices = prices;
        self
    }

    /// Gives models the context windows of `windows` (the defaults apply without it).
    pub fn with_context_windows(mut self, windows: ContextWindows) -> Self {
        self.windows = windows;
        self
    }

    /// Parses `text` and builds the model, with its price and context window when the tables
    /// know them.
    pub fn resolve(&self, text: &str) -> Result<Arc<dyn Model>, ModelError> {
        self.build(text).map(|model| {
            let name = model.spec().to_string();
            let price = self.prices.lookup(&name);
            let window = self.windows.lookup(&name);
            Described::wrap(model, price, window)
        })
    }

    /// Parses `text` and builds the model. Keys are read from the environment now, so a
    /// missing key fails here, naming the variable to set.
    fn build(&self, text: &str) -> Result<Arc<dyn Model>, ModelError> {
        let extra: Vec<&str> = self.providers.keys().map(String::as_str).collect();
        let spec = ModelSpec::parse(text, &extra)?;
        if let Some(definition) = self.providers.get(&spec.provider) {
            return self.configured(spec, definition);
        }
        match providers::builtin(&spec.provider) {
            Some(entry) => (entry.build)(spec, self.settings),
            None => Err(ModelError::Config(format!(
                "provider `{}` has no client",
                spec.provider
            ))),
        }
    }

    fn apply(&self, config: OpenAiConfig) -> OpenAiConfig {
        match self.settings {
            Some(settings) => config.with_settings(settings),
            None => config,
        }
    }

    fn configured(
        &self,
        spec: ModelSpec,
        definition: &ProviderDefinition,
    ) -> Result<Arc<dyn Model>, ModelError> {
        let headers: Vec<(String, String)> = definition
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let key_env = definition.api_key_env.as_deref();
        match definition.wire {
            Wire::Chat | Wire::Responses => {
                let config = self.apply(OpenAiConfig::configured_from_env(
                    &spec.provider,
                    &definition.base_url,
                    key_env,
                    headers,
                )?);
                Ok(match definition.wire {
                    Wire::Responses => Arc::new(OpenAiResponsesModel::new(spec, config)?),
                    Wire::Chat | Wire::Anthropic => Arc::new(OpenAiChatModel::new(spec, config)?),
                })
            }
            Wire::Anthropic => {
                let Some(env) = key_env else {
                    return Err(ModelError::Config(format!(
                        "provider `{}` speaks the anthropic wire format and needs `api_key_env`",
                        spec.provider
                    )));
                };
                let api_key = crate::http::api_key(&spec.provider, env)?;
                let config = AnthropicConfig {
                    base_url: definition.base_url.clone(),
                    api_key,
                    key_env: env.to_owned(),
                    settings: self.settings.unwrap_or_default(),
                    extra_headers: headers,
                };
                Ok(Arc::new(AnthropicModel::new(spec, config)?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(wire: Wire, key: Option<&str>) -> ProviderDefinition {
        ProviderDefinition {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: key.map(str::to_owned),
            wire,
            headers: BTreeMap::new(),
        }
    }

    #[test]
    fn resolves_builtin_offline_models() {
        let resolver = ModelResolver::default();
        assert_eq!(
            resolver.resolve("test:default").unwrap().spec().to_string(),
            "test:default"
        );
        let err = resolver
            .resolve("replay:/nonexistent/x.jsonl")
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("cannot read the recording"),
            "{err}"
        );
        let err = resolver.resolve("nope:x").err().unwrap().to_string();
        assert!(err.contains("unknown provider `nope`"), "{err}");
    }

    #[test]
    fn configured_providers() {
        let providers = BTreeMap::from([
            ("local".to_owned(), definition(Wire::Chat, None)),
            ("proxy".to_owned(), definition(Wire::Responses, None)),
            (
                "keyed".to_owned(),
                definition(Wire::Chat, Some("GOLEM_TEST_SURELY_UNSET_KEY")),
            ),
            ("claude".to_owned(), definition(Wire::Anthropic, None)),
        ]);
        let resolver = ModelResolver::new(providers);
        assert_eq!(
            resolver.resolve("local:llama3").unwrap().spec().provider,
            "local"
        );
        assert_eq!(resolver.resolve("proxy:gpt").unwrap().spec().model, "gpt");
        let err = resolver.resolve("keyed:x").err().unwrap().to_string();
        assert_eq!(
            err,
            "no API key for keyed: set the GOLEM_TEST_SURELY_UNSET_KEY environment variable"
        );
        let err = resolver.resolve("claude:x").err().unwrap().to_string();
        assert!(err.contains("needs `api_key_env`"), "{err}");
    }

    #[test]
    fn definitions_reject_unknown_keys() {
        let err =
            serde_json::from_str::<ProviderDefinition>(r#"{"base_url": "x", "wires": "chat"}"#)
                .unwrap_err()
                .to_string();
        assert!(err.contains("wires"), "{err}");
        let def: ProviderDefinition =
            serde_json::from_str(r#"{"base_url": "x", "wire": "anthropic", "api_key_env": "K"}"#)
                .unwrap();
        assert_eq!(def.wire, Wire::Anthropic);
    }
}
