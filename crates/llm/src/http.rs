//! HTTP plumbing shared by the providers: sending with retries (classifying failures into
//! [`ModelError`]s), and reading a response as server-sent events with an idle timeout and
//! cancellation. Provider files only build requests and read events.

use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::retry::{RetryPolicy, parse_retry_after};

/// Timeouts and retries of one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// The limit on establishing a connection.
    pub connect_timeout: Duration,
    /// The longest silence allowed on a stream (and while waiting for response headers).
    pub idle_timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            retry: RetryPolicy::default(),
        }
    }
}

impl HttpSettings {
    /// A reqwest client with these settings.
    pub fn client(&self) -> Result<reqwest::Client, ModelError> {
        reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .user_agent(concat!("golem-forge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))
    }
}

/// Who is being called, for error messages.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The provider's name.
    pub provider: String,
    /// The environment variable the key came from.
    pub key_env: String,
}

/// The provider's error message from a JSON error body (`{"error": {"message": …}}` or
/// `{"error": "…"}` or `{"message": …}`), or the body itself, shortened.
pub fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let text = if text.is_empty() {
        "no details".to_owned()
    } else {
        text
    };
    golem_protocol::text::fold(&text, 500)
}

/// Whether a JSON error body says the provider is overloaded (Anthropic `overloaded_error`).
fn says_overloaded(body: &str) -> bool {
    body.contains("overloaded_error")
}

/// Sends the request built by `build` (called once per attempt), retrying retryable failures
/// per `settings.retry`. Returns the successful response, or the last error.
pub async fn send_with_retry(
    endpoint: &Endpoint,
    settings: &HttpSettings,
    cancel: &CancellationToken,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ModelError> {
    let mut retry = 0;
    loop {
        let result = tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            result = tokio::time::timeout(settings.idle_timeout, build().send()) => result,
        };
        let error = match result {
            Err(_elapsed) => ModelError::Transport {
                provider: endpoint.provider.clone(),
                message: format!("no response within {:?}", settings.idle_timeout),
            },
            Ok(Err(e)) => ModelError::Transport {
                provider: endpoint.provider.clone(),
                message: transport_message(&e),
            },
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => classify(endpoint, response).await,
        };
        if !error.is_retryable() || retry >= settings.retry.max_retries {
            return Err(error);
        }
        let wait = settings.retry.delay(retry, error.retry_after());
        tracing::warn!(provider = %endpoint.provider, %error, ?wait, retry = retry + 1, "retrying model request");
        tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
        retry += 1;
    }
}

fn transport_message(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

async fn classify(endpoint: &Endpoint, response: reqwest::Response) -> ModelError {
    let status = response.status().as_u16();
    let retry_after = parse_retry_after(response.headers());
    let body = response.text().await.unwrap_or_default();
    let message = error_message(&body);
    let provider = endpoint.provider.clone();
    match status {
        401 | 403 => ModelError::Auth {
            provider,
            env: endpoint.key_env.clone(),
            message,
        },
        408 | 409 | 425 | 429 | 500..=599 => ModelError::Unavailable {
            provider,
            status,
            message,
            retry_after,
        },
        _ if says_overloaded(&body) => ModelError::Unavailable {
            provider,
            status: 529,
            message,
            retry_after,
        },
        _ => ModelError::Rejected {
            provider,
            status,
            message,
        },
    }
}

/// The response body as server-sent events. Silence longer than `idle_timeout` ends the stream
/// with [`ModelError::IdleTimeout`]; a broken connection with [`ModelError::StreamCut`];
/// cancellation with [`ModelError::Cancelled`]. The stream simply ends when the body ends.
pub fn sse_events(
    endpoint: &Endpoint,
    response: reqwest::Response,
    idle_timeout: Duration,
    cancel: CancellationToken,
) -> impl Stream<Item = Result<Event, ModelError>> + Send + use<> {
    let provider = endpoint.provider.clone();
    let events = response.bytes_stream().eventsource();
    futures::stream::unfold(Some((events, provider, cancel)), move |state| async move {
        let (mut events, provider, cancel) = state?;
        let next = tokio::select! {
            () = cancel.cancelled() => return Some((Err(ModelError::Cancelled), None)),
            next = tokio::time::timeout(idle_timeout, events.next()) => next,
        };
        match next {
            Err(_elapsed) => Some((
                Err(ModelError::IdleTimeout {
                    provider,
                    timeout: idle_timeout,
                }),
                None,
            )),
            Ok(None) => None,
            Ok(Some(Err(e))) => Some((
                Err(ModelError::StreamCut {
                    provider,
                    message: e.to_string(),
                }),
                None,
            )),
            Ok(Some(Ok(event))) => Some((Ok(event), Some((events, provider, cancel)))),
        }
    })
}

/// Reads an API key from `env`, failing with a message naming the variable.
pub fn api_key(provider: &str, env: &str) -> Result<String, ModelError> {
    match std::env::var(env) {
        Ok(key) if !key.trim().is_empty() => Ok(key.trim().to_owned()),
        Ok(_) | Err(_) => Err(ModelError::MissingApiKey {
            provider: provider.to_owned(),
            env: env.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_from_bodies() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "invalid x-api-key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(""), "no details");
        assert!(says_overloaded(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        ));
    }
}
