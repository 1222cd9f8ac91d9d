//! The `anthropic` provider's entry in the built-in table: the Messages API with
//! `ANTHROPIC_API_KEY`, and the list prices and context windows of Anthropic's models.

use std::sync::Arc;

use super::{API_KEY_ENV, AnthropicConfig, AnthropicModel, DEFAULT_BASE_URL};
use crate::error::ModelError;
use crate::http::HttpSettings;
use crate::model::Model;
use crate::pricing::Price;
use crate::providers::{ModelRow, ProviderEntry};
use crate::resolve::Wire;
use crate::spec::ModelSpec;

/// Every Claude model has a 200 000-token window.
const WINDOW: u64 = 200_000;

/// `anthropic:MODEL`.
pub const ANTHROPIC: ProviderEntry = ProviderEntry {
    name: "anthropic",
    wire: Some(Wire::Anthropic),
    build,
    api_key_env: Some(API_KEY_ENV),
    base_url: Some(DEFAULT_BASE_URL),
    bare_model: None,
    models_of: None,
    models: &[
        ModelRow::window("claude-", WINDOW),
        ModelRow::new("claude-opus-4-5", Price::new(5.0, 25.0, 0.5, 6.25), WINDOW),
        ModelRow::new("claude-opus-4", Price::new(15.0, 75.0, 1.5, 18.75), WINDOW),
        ModelRow::new("claude-sonnet-4", Price::new(3.0, 15.0, 0.3, 3.75), WINDOW),
        ModelRow::new(
            "claude-3-7-sonnet",
            Price::new(3.0, 15.0, 0.3, 3.75),
            WINDOW,
        ),
        ModelRow::new("claude-haiku-4-5", Price::new(1.0, 5.0, 0.1, 1.25), WINDOW),
        ModelRow::new("claude-3-5-haiku", Price::new(0.8, 4.0, 0.08, 1.0), WINDOW),
    ],
};

fn build(spec: ModelSpec, settings: Option<HttpSettings>) -> Result<Arc<dyn Model>, ModelError> {
    let mut config = AnthropicConfig::from_env()?;
    if let Some(settings) = settings {
        config.settings = settings;
    }
    Ok(Arc::new(AnthropicModel::new(spec, config)?))
}
