//! The built-in providers served by the Chat Completions client: `openai` (with the list prices
//! and context windows of OpenAI's models, which `openai-responses` shares), `ollama` and
//! `openrouter`.

use std::sync::Arc;

use super::OpenAiChatModel;
use crate::error::ModelError;
use crate::http::HttpSettings;
use crate::model::Model;
use crate::pricing::Price;
use crate::providers::openai_common::{
    OLLAMA_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL, OpenAiConfig,
};
use crate::providers::{ModelRow, ProviderEntry};
use crate::resolve::Wire;
use crate::spec::ModelSpec;

/// OpenAI's models, by family (`openai-responses` looks its models up here too).
pub const OPENAI_MODELS: &[ModelRow] = &[
    ModelRow::new("gpt-5-nano", Price::new(0.05, 0.4, 0.005, 0.05), 400_000),
    ModelRow::new("gpt-5-mini", Price::new(0.25, 2.0, 0.025, 0.25), 400_000),
    ModelRow::new("gpt-5", Price::new(1.25, 10.0, 0.125, 1.25), 400_000),
    ModelRow::new("gpt-4.1-nano", Price::new(0.1, 0.4, 0.025, 0.1), 1_047_576),
    ModelRow::new("gpt-4.1-mini", Price::new(0.4, 1.6, 0.1, 0.4), 1_047_576),
    ModelRow::new("gpt-4.1", Price::new(2.0, 8.0, 0.5, 2.0), 1_047_576),
    ModelRow::new("gpt-4o-mini", Price::new(0.15, 0.6, 0.075, 0.15), 128_000),
    ModelRow::new("gpt-4o", Price::new(2.5, 10.0, 1.25, 2.5), 128_000),
    ModelRow::new("o4-mini", Price::new(1.1, 4.4, 0.275, 1.1), 200_000),
    ModelRow::new("o3", Price::new(2.0, 8.0, 0.5, 2.0), 200_000),
];

/// `openai:MODEL`: Chat Completions with `OPENAI_API_KEY`.
pub const OPENAI: ProviderEntry = ProviderEntry {
    name: "openai",
    wire: Some(Wire::Chat),
    build: |spec, settings| chat(spec, settings, OpenAiConfig::openai_from_env()?),
    api_key_env: Some("OPENAI_API_KEY"),
    base_url: Some(OPENAI_BASE_URL),
    bare_model: None,
    models_of: None,
    models: OPENAI_MODELS,
};

/// `ollama:MODEL`: a local Ollama server, no key needed.
pub const OLLAMA: ProviderEntry = ProviderEntry {
    name: "ollama",
    wire: Some(Wire::Chat),
    build: |spec, settings| chat(spec, settings, OpenAiConfig::ollama_from_env()),
    api_key_env: Some("OLLAMA_API_KEY"),
    base_url: Some(OLLAMA_BASE_URL),
    bare_model: None,
    models_of: None,
    models: &[],
};

/// `openrouter:VENDOR/MODEL`: OpenRouter with `OPENROUTER_API_KEY`; windows of the vendors'
/// models it serves, no prices (OpenRouter's differ from the vendors').
pub const OPENROUTER: ProviderEntry = ProviderEntry {
    name: "openrouter",
    wire: Some(Wire::Chat),
    build: |spec, settings| chat(spec, settings, OpenAiConfig::openrouter_from_env()?),
    api_key_env: Some("OPENROUTER_API_KEY"),
    base_url: Some(OPENROUTER_BASE_URL),
    bare_model: None,
    models_of: None,
    models: &[
        ModelRow::window("anthropic/claude-", 200_000),
        ModelRow::window("openai/gpt-4o", 128_000),
        ModelRow::window("openai/gpt-5", 400_000),
    ],
};

/// A Chat Completions model at `config`, with `settings` when given.
fn chat(
    spec: ModelSpec,
    settings: Option<HttpSettings>,
    config: OpenAiConfig,
) -> Result<Arc<dyn Model>, ModelError> {
    let config = match settings {
        Some(settings) => config.with_settings(settings),
        None => config,
    };
    Ok(Arc::new(OpenAiChatModel::new(spec, config)?))
}
