//! The streamable HTTP transport of MCP servers configured with `url` (and `headers`): rmcp's
//! streamable HTTP client worker over a small [`StreamableHttpClient`] written on our own
//! `reqwest` (rmcp's built-in one needs reqwest 0.13, a second copy of it in the build).
//! POSTs carry each message and take back JSON or an SSE stream, GET opens the server's SSE
//! stream, DELETE ends the session; the configured headers go with every request.

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

/// A streamable HTTP client on our `reqwest`.
#[derive(Clone)]
pub struct HttpClient(reqwest::Client);

/// Errors of [`HttpClient`].
type Error = StreamableHttpError<reqwest::Error>;

/// The transport to the server at `url` sending `headers` (expanded) with each request.
pub fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<HttpClient>, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err("the url must start with http:// or https://".to_owned());
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("`{name}` is not a valid header name"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of header `{name}` is not a valid header value"))?;
        custom.insert(header, value);
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
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
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
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
            let body = response.text().await.unwrap_or_default();
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
            let body = response
                .bytes()
                .await
                .map_err(StreamableHttpError::Client)?;
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
