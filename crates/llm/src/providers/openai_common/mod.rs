//! What the OpenAI Chat Completions and Responses clients share: the configuration of an
//! OpenAI-compatible endpoint (openai, openrouter, ollama, providers from program config), its
//! URLs and headers, and sending a streaming request whose reply a decoder turns into an
//! [`EventStream`] (see `decode.rs`); and how both write a tool call's arguments and a tool
//! result's text into the history they send.

mod decode;

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::http::{Endpoint, HttpSettings, error_message, send_with_retry, sse_events};
use crate::message::{ModelToolCall, ToolResultMessage};
use crate::model::EventStream;

use decode::decode_events;
pub(crate) use decode::{SseDecoder, stream_error, temperature_value, unreadable, value_text};

/// The default OpenAI base URL (`OPENAI_BASE_URL` overrides it).
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The OpenRouter base URL (`OPENROUTER_BASE_URL` overrides it).
pub const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
/// The default local Ollama base URL (`OLLAMA_BASE_URL` or `OLLAMA_HOST` override it).
pub const OLLAMA_BASE_URL: &str = "http://localhost:11434/v1";

/// A call's arguments as the history sends them back: the model's own text when it is a JSON
/// object, else `{}`.
///
/// Both APIs carry arguments as a string of JSON, and strict servers parse it: LiteLLM answers
/// a request whose history holds `{"path": ` with HTTP 400 ("Failed to parse tool call
/// arguments"), so one malformed call would end the run. `{}` rather than the raw text under a
/// made-up key: it is what the Anthropic client sends (one behaviour on every wire), it is valid
/// for any server that turns the arguments into an object (a proxy translating to another
/// provider), and it invents no parameter that the tool does not have and that the model might
/// copy. The model still learns what went wrong: the call's result (kept as it is) says its
/// arguments were not valid JSON and asks for an object.
pub(crate) fn history_arguments(call: &ModelToolCall) -> &str {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(_)) => &call.arguments,
        Ok(_) | Err(_) => "{}",
    }
}

/// A tool result's text as the history sends it. Neither API has an error flag, so a failed
/// call's text must say so; the runtime's own texts already do (`Error [CODE]: …`), and
/// those are sent unchanged, so that the model reads one prefix; any other failed text gets
/// `Error: ` in front.
pub(crate) fn tool_output(result: &ToolResultMessage) -> Cow<'_, str> {
    let says_error = result
        .content
        .get(..5)
        .is_some_and(|start| start.eq_ignore_ascii_case("error"));
    if result.is_error && !says_error {
        Cow::Owned(format!("Error: {}", result.content))
    } else {
        Cow::Borrowed(&result.content)
    }
}

/// An OpenAI-compatible endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The provider's name, for messages (`openai`, `openrouter`, `ollama`, a configured name).
    pub provider: String,
    /// The base URL including `/v1`, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer KEY` when set (ollama needs none).
    pub api_key: Option<String>,
    /// The environment variable the key comes from, for messages.
    pub key_env: String,
    /// Timeouts and retries.
    pub settings: HttpSettings,
    /// More headers sent with every request.
    pub extra_headers: Vec<(String, String)>,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self
            .extra_headers
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        f.debug_struct("OpenAiConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("key_env", &self.key_env)
            .field("settings", &self.settings)
            .field("extra_headers", &headers)
            .finish()
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

fn required_key(
    vars: &impl Fn(&str) -> Option<String>,
    provider: &str,
    env: &str,
) -> Result<String, ModelError> {
    non_empty(vars(env)).ok_or_else(|| ModelError::MissingApiKey {
        provider: provider.to_owned(),
        env: env.to_owned(),
    })
}

/// `url` ending in `/v1` (added when missing).
fn with_v1(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.ends_with("/v1") {
        url.to_owned()
    } else {
        format!("{url}/v1")
    }
}

/// The Ollama base URL from `OLLAMA_BASE_URL` or `OLLAMA_HOST` (read as Ollama reads it:
/// `host[:port]` with `http` and port 11434 by default), with `/v1` added when missing.
fn ollama_base_url(base_url: Option<String>, host: Option<String>) -> String {
    if let Some(base) = base_url {
        return with_v1(&base);
    }
    let Some(host) = host else {
        return OLLAMA_BASE_URL.to_owned();
    };
    let host = host.trim_end_matches('/');
    if host.contains("://") {
        return with_v1(host);
    }
    let (authority, path) = match host.split_once('/') {
        Some((authority, path)) => (authority, format!("/{path}")),
        None => (host, String::new()),
    };
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.ends_with(']'));
    let port = if has_port { "" } else { ":11434" };
    with_v1(&format!("http://{authority}{port}{path}"))
}

impl OpenAiConfig {
    /// An endpoint with default settings and no extra headers.
    pub fn new(
        provider: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
        key_env: impl Into<String>,
    ) -> Self {
        Self {
            provider: provider.into(),
            base_url: base_url.into(),
            api_key,
            key_env: key_env.into(),
            settings: HttpSettings::default(),
            extra_headers: Vec::new(),
        }
    }

    /// OpenAI: `OPENAI_API_KEY` (required), `OPENAI_BASE_URL` (default [`OPENAI_BASE_URL`]).
    pub fn openai_from_env() -> Result<Self, ModelError> {
        Self::openai_from(env_var)
    }

    /// [`openai_from_env`](Self::openai_from_env) reading variables through `vars`.
    pub fn openai_from(vars: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let key = required_key(&vars, "openai", "OPENAI_API_KEY")?;
        let base = non_empty(vars("OPENAI_BASE_URL")).unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
        Ok(Self::new("openai", base, Some(key), "OPENAI_API_KEY"))
    }

    /// OpenRouter: `OPENROUTER_API_KEY` (required), `OPENROUTER_BASE_URL` (default
    /// [`OPENROUTER_BASE_URL`]).
    pub fn openrouter_from_env() -> Result<Self, ModelError> {
        Self::openrouter_from(env_var)
    }

    /// [`openrouter_from_env`](Self::openrouter_from_env) reading variables through `vars`.
    pub fn openrouter_from(vars: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let key = required_key(&vars, "openrouter", "OPENROUTER_API_KEY")?;
        let base = non_empty(vars("OPENROUTER_BASE_URL"))
            .unwrap_or_else(|| OPENROUTER_BASE_URL.to_owned());
        Ok(Self::new(
            "openrouter",
            base,
            Some(key),
            "OPENROUTER_API_KEY",
        ))
    }

    /// Ollama: no key needed (`OLLAMA_API_KEY` is sent when set, for a proxy in front);
    /// `OLLAMA_BASE_URL` or `OLLAMA_HOST`, default [`OLLAMA_BASE_URL`].
    pub fn ollama_from_env() -> Self {
        Self::ollama_from(env_var)
    }

    /// [`ollama_from_env`](Self::ollama_from_env) reading variables through `vars`.
    pub fn ollama_from(vars: impl Fn(&str) -> Option<String>) -> Self {
        let base = ollama_base_url(
            non_empty(vars("OLLAMA_BASE_URL")),
            non_empty(vars("OLLAMA_HOST")),
        );
        Self::new(
            "ollama",
            base,
            non_empty(vars("OLLAMA_API_KEY")),
            "OLLAMA_API_KEY",
        )
    }

    /// A provider defined in program config: `base_url`, and the key from `api_key_env` when
    /// one is named (then it must be set).
    pub fn configured_from_env(
        provider: &str,
        base_url: &str,
        api_key_env: Option<&str>,
        extra_headers: Vec<(String, String)>,
    ) -> Result<Self, ModelError> {
        let (key, env) = match api_key_env.map(str::trim).filter(|e| !e.is_empty()) {
            Some(env) => (Some(required_key(&env_var, provider, env)?), env.to_owned()),
            None => (None, String::new()),
        };
        Ok(Self {
            extra_headers,
            ..Self::new(provider, base_url, key, env)
        })
    }

    /// The same endpoint with other timeouts and retries.
    pub fn with_settings(mut self, settings: HttpSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same endpoint sending one more header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }

    /// The URL of `path` (`/chat/completions`, `/responses`) under the base URL.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim().trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// The host and port requests go to.
    pub fn server(&self) -> Option<crate::http::ServerAddress> {
        crate::http::ServerAddress::of_url(&self.url("x"))
    }

    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint {
            provider: self.provider.clone(),
            key_env: self.key_env.clone(),
        }
    }

    /// Checks the URL and headers, so a typo fails at once rather than on every retry.
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        let config_error = |what: String| ModelError::Config(format!("{}: {what}", self.provider));
        let url = self.url("x");
        match reqwest::Url::parse(&url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
            Ok(_) | Err(_) => {
                return Err(config_error(format!(
                    "invalid base URL `{}`",
                    self.base_url
                )));
            }
        }
        if let Some(key) = &self.api_key
            && HeaderValue::from_str(&format!("Bearer {key}")).is_err()
        {
            return Err(config_error(format!(
                "the key in {} is not a valid header value",
                self.key_env
            )));
        }
        for (name, value) in &self.extra_headers {
            if HeaderName::from_bytes(name.as_bytes()).is_err()
                || HeaderValue::from_str(value).is_err()
            {
                return Err(config_error(format!("invalid header `{name}`")));
            }
        }
        Ok(())
    }

    fn post(&self, client: &reqwest::Client, url: &str, body: Bytes) -> reqwest::RequestBuilder {
        let mut builder = client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        let custom_auth = self
            .extra_headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(AUTHORIZATION.as_str()));
        if let Some(key) = &self.api_key
            && !custom_auth
        {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &self.extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    }

    /// Sends `body` to `path` (with retries) and decodes the reply with `decoder`.
    pub(crate) async fn open_stream<D: SseDecoder>(
        &self,
        client: &reqwest::Client,
        path: &str,
        body: &Value,
        cancel: CancellationToken,
        decoder: D,
    ) -> Result<EventStream, ModelError> {
        let endpoint = self.endpoint();
        let url = self.url(path);
        let body = serde_json::to_vec(body)
            .map_err(|e| ModelError::Config(format!("cannot encode the request: {e}")))?;
        let body = Bytes::from(body);
        let response = send_with_retry(&endpoint, &self.settings, &cancel, || {
            self.post(client, &url, body.clone())
        })
        .await?;
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("application/json"));
        if is_json {
            return Err(self.json_instead_of_events(response, &cancel).await);
        }
        let events = sse_events(&endpoint, response, self.settings.idle_timeout, cancel);
        Ok(decode_events(events, decoder))
    }

    /// A 200 reply with a JSON body instead of an event stream: an error some proxies send.
    async fn json_instead_of_events(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> ModelError {
        let text = tokio::select! {
            () = cancel.cancelled() => return ModelError::Cancelled,
            text = tokio::time::timeout(self.settings.idle_timeout, response.text()) => text,
        };
        let text = match text {
            Ok(Ok(text)) => text,
            Ok(Err(_)) | Err(_) => String::new(),
        };
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        match parsed
            .as_ref()
            .and_then(|v| v.get("error"))
            .filter(|e| !e.is_null())
        {
            Some(error) => stream_error(&self.provider, error),
            None => ModelError::Protocol {
                provider: self.provider.clone(),
                message: format!(
                    "expected an event stream, got JSON: {}",
                    error_message(&text)
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(arguments: &str) -> ModelToolCall {
        ModelToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: arguments.into(),
        }
    }

    fn result(content: &str, is_error: bool) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read_file".into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn history_arguments_are_always_a_json_object() {
        assert_eq!(
            history_arguments(&call(r#"{"path": "/a"}"#)),
            r#"{"path": "/a"}"#
        );
        for bad in [r#"{"path": "#, "", "  ", "[1]", "\"x\"", "null", "{bad"] {
            assert_eq!(history_arguments(&call(bad)), "{}", "{bad:?}");
        }
    }

    #[test]
    fn a_failed_result_says_error_once() {
        let runtime = "Error [FILE_NOT_FOUND]: no such file: /a";
        assert_eq!(tool_output(&result(runtime, true)), runtime);
        assert_eq!(tool_output(&result("ERROR: x", true)), "ERROR: x");
        assert_eq!(
            tool_output(&result("[DENIED] no", true)),
            "Error: [DENIED] no"
        );
        assert_eq!(tool_output(&result("é", true)), "Error: é");
        assert_eq!(tool_output(&result("fine", false)), "fine");
        assert_eq!(
            tool_output(&result("Error in the log", false)),
            "Error in the log"
        );
    }

    #[test]
    fn ollama_urls() {
        let url = |base: Option<&str>, host: Option<&str>| {
            ollama_base_url(base.map(str::to_owned), host.map(str::to_owned))
        };
        assert_eq!(url(None, None), "http://localhost:11434/v1");
        assert_eq!(url(Some("http://gpu:11434/"), None), "http://gpu:11434/v1");
        assert_eq!(
            url(Some("http://gpu:11434/v1"), Some("x")),
            "http://gpu:11434/v1"
        );
        assert_eq!(url(None, Some("0.0.0.0")), "http://0.0.0.0:11434/v1");
        assert_eq!(url(None, Some("gpu:8080")), "http://gpu:8080/v1");
        assert_eq!(
            url(None, Some("https://ollama.example.com")),
            "https://ollama.example.com/v1"
        );
    }
}
