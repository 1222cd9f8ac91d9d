//! The `openai-responses` provider's entry in the built-in table: OpenAI's models over the
//! Responses API, with `OPENAI_API_KEY`, priced and windowed as the `openai` ones.

use std::sync::Arc;

use super::OpenAiResponsesModel;
use crate::providers::ProviderEntry;
use crate::providers::openai_common::{OPENAI_BASE_URL, OpenAiConfig};
use crate::resolve::Wire;

/// `openai-responses:MODEL`.
pub const OPENAI_RESPONSES: ProviderEntry = ProviderEntry {
    name: "openai-responses",
    wire: Some(Wire::Responses),
    build: |spec, settings| {
        let config = OpenAiConfig::openai_from_env()?;
        let config = match settings {
            Some(settings) => config.with_settings(settings),
            None => config,
        };
        Ok(Arc::new(OpenAiResponsesModel::new(spec, config)?))
    },
    api_key_env: Some("OPENAI_API_KEY"),
    base_url: Some(OPENAI_BASE_URL),
    bare_model: None,
    models_of: Some(crate::providers::openai_chat::entry::OPENAI.name),
    models: &[],
};
