//! HTTP plumbing shared by the providers: sending with retries from the turn's
//! [`RetryBudget`] (classifying failures into [`ModelError`]s), and reading a response as
//! server-sent events with an idle limit on content and cancellation. Provider files only
//! build requests and read events.

use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::retry::{RetryBudget, RetryPolicy, parse_retry_after};

/// Timeouts and retries of one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// The limit on establishing a connection.
    pub connect_timeout: Duration,
    /// The limit on waiting for response headers once the request is sent.
    pub headers_timeout: Duration,
    /// The longest a stream may go without content (pings and keep-alive comments do not
    /// count); also the limit on reading a non-stream body.
    pub idle_timeout: Duration,
    /// Retries: the limits of a turn's retry budget.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            headers_timeout: Duration::from_secs(30),
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

/// Where a provider's requests go: the host and port of its endpoint URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddress {
    /// The host, a name or an address (an IPv6 one without brackets).
    pub host: String,
    /// The port, the scheme's default when the URL names none.
    pub port: Option<u16>,
}

impl ServerAddress {
    /// The host and port of `url`; `None` when it is no URL with a host.
    pub fn of_url(url: &str) -> Option<ServerAddress> {
        let parsed = reqwest::Url::parse(url.trim()).ok()?;
        let host = parsed.host_str().filter(|host| !host.is_empty())?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        Some(ServerAddress {
            host: host.to_owned(),
            port: parsed.port_or_known_default(),
        })
    }
}

/// The provider's error message from a JSON error body (`{"error": {"message": …}}` or
/// `{"error": "…"}` or `{"message": …}`), or a one-line [`excerpt`] of any other body; always
/// one line, shortened.
pub fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| excerpt(body));
    let text = one_line(&text);
    let text = if text.is_empty() {
        "no details".to_owned()
    } else {
        text
    };
    golem_protocol::text::fold(&text, 300)
}

/// One line that says what a non-JSON body is: an HTML page's `<title>` (else its first
/// `<h1>`), otherwise the first line with text in it, tags removed.
pub fn excerpt(body: &str) -> String {
    let trimmed = body.trim_start();
    if trimmed.starts_with('<') {
        for tag in ["title", "h1"] {
            if let Some(text) = element_text(trimmed, tag)
                && !text.is_empty()
            {
                return text;
            }
        }
    }
    body.lines()
        .map(|line| one_line(&strip_tags(line)))
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

/// The text inside the first `<tag …>…</tag>` of `html` (ASCII case-insensitive), tags removed.
fn element_text(html: &str, tag: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find(&format!("<{tag}"))?;
    let start = open + lower.get(open..)?.find('>')? + 1;
    let end = start + lower.get(start..)?.find(&format!("</{tag}"))?;
    Some(one_line(&strip_tags(html.get(start..end)?)))
}

/// `text` without `<…>` tags.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// `text` with every run of whitespace (newlines included) as one space, trimmed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a JSON error body says the provider is overloaded (Anthropic `overloaded_error`).
fn says_overloaded(body: &str) -> bool {
    body.contains("overloaded_error")
}

/// Sends the request built by `build` (called once per attempt), retrying retryable failures
/// while the turn's [`RetryBudget`] (the current one, else a fresh one with `settings.retry`)
/// allows. Each attempt waits at most `settings.headers_timeout` for the response headers,
/// and no longer than the budget's wall time left. Returns the successful response, or the
/// last error.
pub async fn send_with_retry(
    endpoint: &Endpoint,
    settings: &HttpSettings,
    cancel: &CancellationToken,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ModelError> {
    let budget = RetryBudget::current().unwrap_or_default();
    let gate = crate::rate::installed();
    loop {
        budget.start_request(settings.retry);
        if let Some(gate) = &gate {
            let wait = gate.wait().min(budget.remaining());
            if !wait.is_zero() {
                budget.gate_waited(wait);
                tokio::select! {
                    () = cancel.cancelled() => return Err(ModelError::Cancelled),
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
        // Whole milliseconds, so that a wait cut short by the wall limit reads well.
        let remaining = budget.remaining();
        let remaining = Duration::from_millis(u64::try_from(remaining.as_millis()).unwrap_or(0));
        let limit = settings.headers_timeout.min(remaining);
        let result = tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            result = tokio::time::timeout(limit, build().send()) => result,
        };
        let error = match result {
            Err(_elapsed) => ModelError::Transport {
                provider: endpoint.provider.clone(),
                message: format!("no response headers within {limit:?}"),
            },
            Ok(Err(e)) => ModelError::Transport {
                provider: endpoint.provider.clone(),
                message: transport_message(&e),
            },
            Ok(Ok(response)) if response.status().is_success() => {
                if let Some(gate) = &gate {
                    gate.succeeded();
                }
                return Ok(response);
            }
            Ok(Ok(response)) => classify(endpoint, response).await,
        };
        if !error.is_retryable() {
            return Err(error);
        }
        // Under a shared gate, a rate-limit answer pauses the pool and is tried again without
        // spending the turn's retries, for as long as its wall time lasts.
        if let Some(gate) = &gate
            && crate::rate::is_rate_limit(&error)
            && !budget.remaining().is_zero()
        {
            gate.rate_limited(error.retry_after());
            budget.gate_retry();
            continue;
        }
        let Some(wait) = budget.next_retry(&error) else {
            return Err(error);
        };
        tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
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
        400 | 413 | 422 if ModelError::says_context_overflow(&body) => {
            ModelError::ContextOverflow { provider, message }
        }
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

/// The response body as server-sent events. A body that is not an event stream
/// (`content-type` other than `text/event-stream`, `text/plain` or
/// `application/octet-stream`, such as a proxy's HTML page sent with status 200) is one
/// [`ModelError::Protocol`] naming its type and first line. Pings (`event: ping`, a `ping`
/// type) and events without data are dropped and, like keep-alive comments, do not count as
/// progress: a stream with no content for `idle_timeout` ends with
/// [`ModelError::IdleTimeout`]. A broken connection is [`ModelError::StreamCut`];
/// cancellation [`ModelError::Cancelled`]. The stream simply ends when the body ends.
pub fn sse_events(
    endpoint: &Endpoint,
    response: reqwest::Response,
    idle_timeout: Duration,
    cancel: CancellationToken,
) -> impl Stream<Item = Result<Event, ModelError>> + Send + use<> {
    let provider = endpoint.provider.clone();
    let mime = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|mime| {
            !mime.is_empty()
                && !matches!(
                    mime.as_str(),
                    "text/event-stream" | "text/plain" | "application/octet-stream"
                )
        });
    if let Some(mime) = mime {
        let error = not_an_event_stream(provider, mime, response, idle_timeout, cancel);
        return futures::stream::once(async move { Err(error.await) }).left_stream();
    }
    let events = response.bytes_stream().eventsource();
    let state = Some((events, provider, cancel));
    futures::stream::unfold(state, move |state| async move {
        let (mut events, provider, cancel) = state?;
        // Content is due within the idle limit of being asked for; keep-alives do not move it.
        let deadline = tokio::time::Instant::now() + idle_timeout;
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Some((Err(ModelError::Cancelled), None)),
                next = tokio::time::timeout_at(deadline, events.next()) => next,
            };
            let error = match next {
                Err(_elapsed) => ModelError::IdleTimeout {
                    provider,
                    timeout: idle_timeout,
                },
                Ok(None) => return None,
                Ok(Some(Err(e))) => ModelError::StreamCut {
                    provider,
                    message: e.to_string(),
                },
                Ok(Some(Ok(event))) if is_keep_alive(&event) => continue,
                Ok(Some(Ok(event))) => {
                    return Some((Ok(event), Some((events, provider, cancel))));
                }
            };
            return Some((Err(error), None));
        }
    })
    .right_stream()
}

/// Whether `event` carries no content: a ping or an event without data.
fn is_keep_alive(event: &Event) -> bool {
    let data = event.data.trim();
    if event.event == "ping" || data.is_empty() {
        return true;
    }
    (event.event.is_empty() || event.event == "message")
        && data.len() < 64
        && serde_json::from_str::<serde_json::Value>(data)
            .ok()
            .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("ping"))
}

/// The error for a body of type `mime` where an event stream was expected: its first line.
async fn not_an_event_stream(
    provider: String,
    mime: String,
    response: reqwest::Response,
    timeout: Duration,
    cancel: CancellationToken,
) -> ModelError {
    let body = tokio::select! {
        () = cancel.cancelled() => return ModelError::Cancelled,
        body = tokio::time::timeout(timeout, response.text()) => body,
    };
    let body = match body {
        Ok(Ok(body)) => body,
        Ok(Err(_)) | Err(_) => String::new(),
    };
    let first = body
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("an empty body");
    ModelError::Protocol {
        provider,
        message: format!(
            "expected an event stream, got {mime}: {}",
            golem_protocol::text::fold(first, 200)
        ),
    }
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
    fn pings_and_empty_events_are_keep_alives() {
        let event = |name: &str, data: &str| Event {
            event: name.into(),
            data: data.into(),
            id: String::new(),
            retry: None,
        };
        assert!(is_keep_alive(&event("ping", r#"{"type": "ping"}"#)));
        assert!(is_keep_alive(&event("message", r#"{"type":"ping"}"#)));
        assert!(is_keep_alive(&event("message", "  ")));
        assert!(!is_keep_alive(&event(
            "content_block_delta",
            r#"{"type":"content_block_delta"}"#
        )));
        assert!(!is_keep_alive(&event("message", r#"{"choices":[]}"#)));
        assert!(!is_keep_alive(&event("message", "[DONE]")));
    }

    #[test]
    fn server_addresses_of_endpoint_urls() {
        let of = |url: &str| ServerAddress::of_url(url).map(|a| (a.host, a.port));
        assert_eq!(
            of("https://api.openai.com/v1"),
            Some(("api.openai.com".into(), Some(443)))
        );
        assert_eq!(
            of("http://127.0.0.1:8123/v1/messages"),
            Some(("127.0.0.1".into(), Some(8123)))
        );
        assert_eq!(of("http://[::1]:9/v1"), Some(("::1".into(), Some(9))));
        assert_eq!(of("not a url"), None);
    }

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
        let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
                    <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n\
                    </body>\r\n</html>\r\n";
        assert_eq!(error_message(page), "502 Bad Gateway");
        assert_eq!(
            error_message("<p>\n  down for\n maintenance</p>"),
            "down for"
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"two\nlines"}}"#),
            "two lines"
        );
        assert_eq!(error_message(""), "no details");
        assert!(says_overloaded(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        ));
    }
}
