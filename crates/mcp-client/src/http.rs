//! The streamable HTTP transport of MCP servers configured with `url` (and `headers`): rmcp's
//! streamable HTTP client worker over a small [`StreamableHttpClient`] written on our own
//! `reqwest` (rmcp's built-in one needs reqwest 0.13, a second copy of it in the build).
//! POSTs carry each message and take back JSON or an SSE stream, GET opens the server's SSE
//! stream, DELETE ends the session; the configured headers go with every request. No redirect
//! is followed, and no message can grow without bound: a JSON reply or one SSE event is at
//! most [`MAX_MESSAGE_BYTES`], an error reply is read up to 64 KiB.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

/// The session header of the protocol.
const SESSION_ID: &str = "mcp-session-id";
/// The header resuming an SSE stream.
const LAST_EVENT_ID: &str = "last-event-id";
/// What a client accepts.
const ACCEPTS: &str = "application/json, text/event-stream";
/// The most bytes of one message a server may send: a JSON reply, or one SSE event.
const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;
/// The most bytes of an error reply read (its start is shown in the error).
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// A streamable HTTP client on our `reqwest`.
#[derive(Clone)]
pub struct HttpClient(reqwest::Client);

/// Errors of [`HttpClient`].
type Error = StreamableHttpError<reqwest::Error>;

/// Why the transport to a `url` server could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// A URL of another scheme.
    #[error("the url must start with http:// or https://")]
    NotHttp,
    /// A header name HTTP refuses.
    #[error("`{name}` is not a valid header name")]
    HeaderName {
        /// The name.
        name: String,
        /// Why.
        source: reqwest::header::InvalidHeaderName,
    },
    /// A header value HTTP refuses (after `${VAR}` expansion; not shown, it may be a secret).
    #[error("the value of header `{name}` is not a valid header value")]
    HeaderValue {
        /// The header's name.
        name: String,
        /// Why.
        source: reqwest::header::InvalidHeaderValue,
    },
    /// The HTTP client could not be built.
    #[error("no HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

/// The transport to the server at `url` sending `headers` (expanded) with each request.
pub fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<HttpClient>, TransportError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(TransportError::NotHttp);
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header =
            HeaderName::try_from(name.as_str()).map_err(|source| TransportError::HeaderName {
                name: name.clone(),
                source,
            })?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|source| {
            TransportError::HeaderValue {
                name: name.clone(),
                source,
            }
        })?;
        custom.insert(header, value);
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(TransportError::Client)?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(
        HttpClient(client),
        config,
    ))
}

/// `builder` with the optional bearer token and the custom headers.
fn with_headers(
    mut builder: reqwest::RequestBuilder,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    if let Some(token) = auth {
        builder = builder.bearer_auth(token);
    }
    for (name, value) in custom {
        builder = builder.header(name, value);
    }
    builder
}

/// The content type of `response`, if any.
fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase)
}

/// The server's SSE events in `response`.
fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut boundary = EventBoundary::default();
    let limited = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        if boundary.feed(&chunk) > MAX_MESSAGE_BYTES {
            return Err(std::io::Error::other(format!(
                "the server sent an event of more than {} MiB",
                MAX_MESSAGE_BYTES >> 20
            )));
        }
        Ok(chunk)
    });
    SseStream::from_bytes_stream(limited).boxed()
}

/// Counts the bytes of an SSE stream since the last blank line (the end of an event), so that
/// one event can never grow without bound.
#[derive(Debug, Default)]
struct EventBoundary {
    /// Bytes since the last event ended.
    pending: usize,
    /// The last byte seen that was not `\r`.
    last: u8,
}

impl EventBoundary {
    /// Feeds `chunk`; the bytes of the event not yet ended.
    fn feed(&mut self, chunk: &[u8]) -> usize {
        for &byte in chunk {
            if byte == b'\n' && self.last == b'\n' {
                self.pending = 0;
            } else {
                self.pending += 1;
            }
            if byte != b'\r' {
                self.last = byte;
            }
        }
        self.pending
    }
}

/// The body of `response`, at most `max` bytes: `None` when it is longer.
async fn body_up_to(
    response: reqwest::Response,
    max: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// A 4xx answer to `server/discover` (a server from before it) as the JSON-RPC error the
/// client's fallback to `initialize` expects, correlated with the request.
fn legacy_discover(
    message: &ClientJsonRpcMessage,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_))
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut request = with_headers(
            self.0.post(uri.as_ref()).header(ACCEPT, ACCEPTS),
            auth,
            custom,
        );
        let session_attached = session_id.is_some();
        if let Some(session) = session_id {
            request = request.header(SESSION_ID, session.as_ref());
        }
        let response = request
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let kind = content_type(&response).unwrap_or_default();
        if !status.is_success() {
            let body = match body_up_to(response, MAX_ERROR_BYTES).await {
                Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(None) | Err(_) => String::new(),
            };
            if !session_attached && let Some(reply) = legacy_discover(&message, status, &body) {
                return Ok(reply);
            }
            if kind.starts_with("application/json")
                && let Ok(error @ ServerJsonRpcMessage::Error(_)) = serde_json::from_str(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            let shown: String = body.chars().take(200).collect();
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {shown}"),
            )));
        }
        if kind.starts_with("text/event-stream") {
            return Ok(StreamableHttpPostResponse::Sse(sse(response), session));
        }
        if kind.starts_with("application/json") {
            let Some(body) = body_up_to(response, MAX_MESSAGE_BYTES)
                .await
                .map_err(StreamableHttpError::Client)?
            else {
                return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!("a reply of more than {} MiB", MAX_MESSAGE_BYTES >> 20),
                )));
            };
            if body.is_empty() {
                return Ok(StreamableHttpPostResponse::Accepted);
            }
            let reply: ServerJsonRpcMessage = serde_json::from_slice(&body)?;
            return Ok(StreamableHttpPostResponse::Json(reply, session));
        }
        if response.content_length() == Some(0) || kind.is_empty() {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(Some(kind)))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request = with_headers(self.0.delete(uri.as_ref()), auth, custom)
            .header(SESSION_ID, session_id.as_ref());
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        response
            .error_for_status()
            .map(|_| ())
            .map_err(StreamableHttpError::Client)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut request = with_headers(
            self.0.get(uri.as_ref()).header(ACCEPT, ACCEPTS),
            auth,
            custom,
        );
        if let Some(session) = session_id {
            request = request.header(SESSION_ID, session.as_ref());
        }
        if let Some(last) = last_event_id {
            request = request.header(LAST_EVENT_ID, last);
        }
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let response = response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        match content_type(&response) {
            Some(kind) if kind.starts_with("text/event-stream") => Ok(sse(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn an_event_ends_at_a_blank_line_whatever_the_line_ends_and_chunks() {
        let mut boundary = EventBoundary::default();
        assert_eq!(boundary.feed(b"data: 12"), 8);
        assert_eq!(boundary.feed(b"34\n"), 11);
        assert_eq!(boundary.feed(b"\n"), 0, "a blank line split across chunks");
        assert_eq!(
            boundary.feed(b"data: x\r\n\r\ndata: y"),
            7,
            "CRLF line ends"
        );
        assert_eq!(boundary.feed(b"\n\n"), 0);
    }

    /// The body of a response of `body_len` bytes read with a limit of `max`.
    async fn read_with_limit(body_len: usize, max: usize) -> Option<usize> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _read = socket.read(&mut request).await.unwrap();
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {body_len}\r\n\r\n");
            socket.write_all(head.as_bytes()).await.unwrap();
            let _sent = socket.write_all(&vec![b'x'; body_len]).await;
        });
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let response = client
            .get(format!("http://{address}/"))
            .send()
            .await
            .unwrap();
        let body = body_up_to(response, max).await.unwrap();
        server.abort();
        body.map(|b| b.len())
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_and_one_within_it_read_whole() {
        assert_eq!(read_with_limit(1000, 1000).await, Some(1000));
        assert_eq!(read_with_limit(1001, 1000).await, None);
        assert_eq!(read_with_limit(0, 1000).await, Some(0));
    }
}
