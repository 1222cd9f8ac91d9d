//! The Anthropic Messages API client (`POST /v1/messages`, streamed as server-sent events).
//!
//! The base URL is taken as the official SDKs take it (`https://api.anthropic.com`, the client
//! adding `/v1/messages`); a base URL that already ends in `/v1` is accepted too.

pub mod entry;
mod stream;
mod wire;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

pub use self::stream::AnthropicStreamDecoder;
use crate::error::ModelError;
use crate::http::{self, Endpoint, HttpSettings, ServerAddress};
use crate::message::ModelRequest;
use crate::model::{EventStream, Model};
use crate::spec::ModelSpec;

/// The default API base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The environment variable holding the API key.
pub const API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The environment variable overriding the base URL.
pub const BASE_URL_ENV: &str = "ANTHROPIC_BASE_URL";
/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// Where and how to reach an Anthropic-compatible API.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// The base URL, e.g. `https://api.anthropic.com` (a trailing `/v1` is accepted).
    pub base_url: String,
    /// The API key, sent as `x-api-key`.
    pub api_key: String,
    /// The environment variable the key came from (named in errors).
    pub key_env: String,
    /// Timeouts and retries.
    pub settings: HttpSettings,
    /// More headers sent with every request.
    pub extra_headers: Vec<(String, String)>,
}

impl AnthropicConfig {
    /// Reads `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_BASE_URL` (optional).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let api_key = var(API_KEY_ENV)
            .map(|key| key.trim().to_owned())
            .filter(|key| !key.is_empty())
            .ok_or_else(|| ModelError::MissingApiKey {
                provider: "anthropic".to_owned(),
                env: API_KEY_ENV.to_owned(),
            })?;
        let base_url = var(BASE_URL_ENV)
            .map(|url| url.trim().to_owned())
            .filter(|url| !url.is_empty())
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        Ok(Self {
            base_url,
            api_key,
            key_env: API_KEY_ENV.to_owned(),
            settings: HttpSettings::default(),
            extra_headers: Vec::new(),
        })
    }
}

/// The Messages endpoint for a base URL: `/v1/messages` appended, or only `/messages` when the
/// base already ends in `/v1` (with or without a trailing slash).
pub fn messages_url(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// A model served by the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicModel {
    spec: ModelSpec,
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    endpoint: Endpoint,
    settings: HttpSettings,
    server: Option<ServerAddress>,
}

impl AnthropicModel {
    /// A client for `spec.model`; fails on an unusable base URL, key or header.
    pub fn new(spec: ModelSpec, config: AnthropicConfig) -> Result<Self, ModelError> {
        let url = messages_url(&config.base_url);
        let parsed = reqwest::Url::parse(&url).map_err(|e| {
            ModelError::Config(format!(
                "invalid base URL `{}` for {}: {e}",
                config.base_url, spec.provider
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::Config(format!(
                "invalid base URL `{}` for {}: it must start with http:// or https://",
                config.base_url, spec.provider
            )));
        }
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(&config.api_key).map_err(|_| {
            ModelError::Config(format!(
                "the API key in {} contains characters not allowed in an HTTP header",
                config.key_env
            ))
        })?;
        key.set_sensitive(true);
        headers.insert("x-api-key", key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        for (name, value) in &config.extra_headers {
            let bad = || {
                ModelError::Config(format!(
                    "invalid extra header `{name}` for {}",
                    spec.provider
                ))
            };
            let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
            let value = HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
            headers.insert(name, value);
        }
        let client = config.settings.client()?;
        let endpoint = Endpoint {
            provider: spec.provider.clone(),
            key_env: config.key_env,
        };
        let server = ServerAddress::of_url(&url);
        Ok(Self {
            spec,
            client,
            server,
            url,
            headers,
            endpoint,
            settings: config.settings,
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }
}

#[async_trait]
impl Model for AnthropicModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    fn server(&self) -> Option<ServerAddress> {
        self.server.clone()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let body = serde_json::to_vec(&wire::request_body(&self.spec.model, request))
            .map_err(|e| ModelError::Config(format!("cannot encode the request: {e}")))?;
        let body = bytes::Bytes::from(body);
        let response = http::send_with_retry(&self.endpoint, &self.settings, &cancel, || {
            self.client
                .post(&self.url)
                .headers(self.headers.clone())
                .body(body.clone())
        })
        .await?;
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("application/json"));
        if is_json {
            let text = response.text().await.unwrap_or_default();
            return Err(ModelError::Protocol {
                provider: self.endpoint.provider.clone(),
                message: format!(
                    "expected an event stream, got JSON: {}",
                    http::error_message(&text)
                ),
            });
        }
        let events = http::sse_events(&self.endpoint, response, self.settings.idle_timeout, cancel);
        Ok(stream::decode(
            events,
            AnthropicStreamDecoder::new(self.endpoint.provider.clone()),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn messages_url_adds_v1_once() {
        let expected = "https://api.anthropic.com/v1/messages";
        for base in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/",
            "https://api.anthropic.com/v1",
            "https://api.anthropic.com/v1/",
            " https://api.anthropic.com/v1// ",
        ] {
            assert_eq!(messages_url(base), expected, "{base}");
        }
        assert_eq!(
            messages_url("http://proxy:8080/anthropic"),
            "http://proxy:8080/anthropic/v1/messages"
        );
        assert_eq!(
            messages_url("http://proxy/x/v1"),
            "http://proxy/x/v1/messages"
        );
        assert_eq!(
            messages_url("http://proxy/xv1"),
            "http://proxy/xv1/v1/messages"
        );
    }

    #[test]
    fn config_from_vars() {
        let err = AnthropicConfig::from_vars(|_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no API key for anthropic: set the ANTHROPIC_API_KEY environment variable"
        );
        let err = AnthropicConfig::from_vars(|_| Some("  ".into())).unwrap_err();
        assert!(matches!(err, ModelError::MissingApiKey { .. }));
        let config =
            AnthropicConfig::from_vars(|name| (name == API_KEY_ENV).then(|| "sk-1".into()))
                .unwrap();
        assert_eq!(
            (config.api_key.as_str(), config.base_url.as_str()),
            ("sk-1", DEFAULT_BASE_URL)
        );
        assert_eq!(config.key_env, "ANTHROPIC_API_KEY");
        let config = AnthropicConfig::from_vars(|name| {
            Some(if name == BASE_URL_ENV {
                "http://localhost:9/v1/".into()
            } else {
                "k".into()
            })
        })
        .unwrap();
        assert_eq!(config.base_url, "http://localhost:9/v1/");
    }

    #[test]
    fn bad_config_is_a_config_error() {
        let spec = ModelSpec {
            provider: "anthropic".into(),
            model: "claude-x".into(),
        };
        let config = |base: &str, key: &str| AnthropicConfig {
            base_url: base.into(),
            api_key: key.into(),
            key_env: API_KEY_ENV.into(),
            settings: HttpSettings::default(),
            extra_headers: vec![("anthropic-beta".into(), "x".into())],
        };
        let model = AnthropicModel::new(spec.clone(), config("http://127.0.0.1:1", "k")).unwrap();
        assert_eq!(model.url(), "http://127.0.0.1:1/v1/messages");
        assert!(matches!(
            AnthropicModel::new(spec.clone(), config("not a url", "k")),
            Err(ModelError::Config(_))
        ));
        assert!(matches!(
            AnthropicModel::new(spec.clone(), config("ftp://h", "k")),
            Err(ModelError::Config(_))
        ));
        let err = AnthropicModel::new(spec, config("http://h", "bad\nkey"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ANTHROPIC_API_KEY") && !err.contains("bad"),
            "{err}"
        );
    }
}
