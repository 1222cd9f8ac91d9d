//! Local OTLP trace receivers for tests: a server on 127.0.0.1 that takes trace exports over
//! OTLP/HTTP (`POST /v1/traces`, protobuf or JSON) or OTLP/gRPC (`TraceService/Export`),
//! decodes them with the official OpenTelemetry messages (`opentelemetry-proto`), and records
//! each request and its headers, so a test can assert which spans a program sent.
//!
//! Start one inside a Tokio test ([`OtlpReceiver::http`], [`OtlpReceiver::grpc`]) or from a
//! plain test ([`OtlpReceiver::start_http_blocking`], [`OtlpReceiver::start_grpc_blocking`]:
//! its own thread and runtime, e.g. when the program under test is a subprocess), point
//! `OTEL_EXPORTER_OTLP_ENDPOINT` at [`OtlpReceiver::endpoint`], and read the spans flattened
//! ([`OtlpReceiver::spans`], [`ReceivedSpan`]). [`OtlpReceiver::http_stalling_blocking`] is an
//! endpoint that takes requests and never answers; [`dead_endpoint`] one where nothing listens.

mod spans;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::local_server::{Runner, on_own_thread, on_this_runtime};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message as _;

pub use spans::{Attributes, ReceivedSpan, any_value_to_json, attributes, flatten, hex};

/// How often the `wait_for_*` methods look again.
const POLL: Duration = Duration::from_millis(20);

/// The OTLP transport a receiver speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP/HTTP: `POST /v1/traces`, protobuf (`application/x-protobuf`) or JSON
    /// (`application/json`) bodies, HTTP/1.1.
    Http,
    /// OTLP/gRPC: the `TraceService` of `opentelemetry.proto.collector.trace.v1`, HTTP/2.
    Grpc,
}

impl Protocol {
    /// The value of `OTEL_EXPORTER_OTLP_PROTOCOL` that makes an exporter speak this protocol:
    /// `http/protobuf` or `grpc`.
    pub fn env_value(self) -> &'static str {
        match self {
            Protocol::Http => "http/protobuf",
            Protocol::Grpc => "grpc",
        }
    }
}

/// What the receiver serves: a protocol, and for HTTP whether it ever answers.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Answering(Protocol),
    /// HTTP that records each request and then holds it open forever.
    Stalling,
}

/// What arrived so far; `requests` and `headers` go together, one entry per decoded export.
#[derive(Default)]
struct Store {
    arrived: usize,
    requests: Vec<ExportTraceServiceRequest>,
    headers: Vec<BTreeMap<String, String>>,
    errors: Vec<String>,
}

type Shared = Arc<Mutex<Store>>;

/// A running OTLP trace receiver on 127.0.0.1; dropping it stops the server (and, for the
/// blocking ones, drops any request still held).
pub struct OtlpReceiver {
    endpoint: String,
    protocol: Protocol,
    store: Shared,
    /// Stops the server when dropped.
    _runner: Runner,
}

impl OtlpReceiver {
    /// Starts an OTLP/HTTP receiver on the current Tokio runtime.
    pub async fn http() -> Self {
        Self::start(Protocol::Http).await
    }

    /// Starts an OTLP/gRPC receiver on the current Tokio runtime.
    pub async fn grpc() -> Self {
        Self::start(Protocol::Grpc).await
    }

    /// Starts a receiver of `protocol` on the current Tokio runtime (for tests run once per
    /// protocol).
    pub async fn start(protocol: Protocol) -> Self {
        Self::spawn(Mode::Answering(protocol)).await
    }

    /// Like [`OtlpReceiver::http`], for tests that are not async: the server runs on its own
    /// thread with its own Tokio runtime until the receiver is dropped. Must not be called
    /// from within a Tokio runtime's worker (it blocks until the server listens).
    pub fn start_http_blocking() -> Self {
        Self::start_blocking(Protocol::Http)
    }

    /// Like [`OtlpReceiver::grpc`], on its own thread and runtime (see
    /// [`OtlpReceiver::start_http_blocking`]).
    pub fn start_grpc_blocking() -> Self {
        Self::start_blocking(Protocol::Grpc)
    }

    /// Like [`OtlpReceiver::start`], on its own thread and runtime (see
    /// [`OtlpReceiver::start_http_blocking`]).
    pub fn start_blocking(protocol: Protocol) -> Self {
        Self::thread(Mode::Answering(protocol))
    }

    /// An OTLP/HTTP endpoint that never answers, on its own thread and runtime: it takes each
    /// request whole, records it as the answering receiver does (it counts in
    /// [`OtlpReceiver::arrived`]; decoded, in [`OtlpReceiver::requests`]), and then holds the
    /// connection open without a response until the receiver is dropped. For what a program
    /// does when its collector hangs.
    pub fn http_stalling_blocking() -> Self {
        Self::thread(Mode::Stalling)
    }

    async fn spawn(mode: Mode) -> Self {
        let store = Shared::default();
        let served = store.clone();
        let (endpoint, runner) =
            on_this_runtime(move |listener| serve(mode, listener, served)).await;
        Self::new(endpoint, mode, store, runner)
    }

    fn thread(mode: Mode) -> Self {
        let store = Shared::default();
        let served = store.clone();
        // Dropping the runner drops the connections, held ones included.
        let (endpoint, runner) = on_own_thread("otlp-receiver", move |listener| {
            serve(mode, listener, served)
        });
        Self::new(endpoint, mode, store, runner)
    }

    fn new(endpoint: String, mode: Mode, store: Shared, runner: Runner) -> Self {
        let protocol = match mode {
            Mode::Answering(protocol) => protocol,
            Mode::Stalling => Protocol::Http,
        };
        Self {
            endpoint,
            protocol,
            store,
            _runner: runner,
        }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash): the value for
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, to which an HTTP exporter appends `/v1/traces`.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// The protocol the receiver speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The exports received and decoded so far, in order of arrival.
    pub fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        self.store.lock().unwrap().requests.clone()
    }

    /// The headers of each export in [`OtlpReceiver::requests`] (same order), names lowercase,
    /// repeated names' values joined with `,`; for gRPC its metadata (custom entries such as
    /// those of `OTEL_EXPORTER_OTLP_HEADERS`, and `content-type`, `te`, `user-agent`,
    /// `grpc-timeout`, ...). Values that are not visible ASCII are decoded lossily.
    pub fn headers(&self) -> Vec<BTreeMap<String, String>> {
        self.store.lock().unwrap().headers.clone()
    }

    /// Every span of [`OtlpReceiver::requests`], flattened ([`flatten`]).
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.store
            .lock()
            .unwrap()
            .requests
            .iter()
            .flat_map(flatten)
            .collect()
    }

    /// How many export requests reached the receiver so far, decoded or not (an HTTP request
    /// to another path or method does not count).
    pub fn arrived(&self) -> usize {
        self.store.lock().unwrap().arrived
    }

    /// Why each export that arrived but was refused was refused (an unsupported content type
    /// or encoding, a body that does not decode), in order.
    pub fn errors(&self) -> Vec<String> {
        self.store.lock().unwrap().errors.clone()
    }

    /// Waits, blocking the thread (polling every 20 ms), until `predicate` holds for the spans
    /// received or `timeout` passes, and returns the spans received by then: the test asserts
    /// on them after. Not for a receiver on a single-threaded runtime of the same thread (it
    /// would never receive); use [`OtlpReceiver::wait_for_spans_async`] there.
    pub fn wait_for_spans(
        &self,
        predicate: impl Fn(&[ReceivedSpan]) -> bool,
        timeout: Duration,
    ) -> Vec<ReceivedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if predicate(&spans) || Instant::now() >= deadline {
                return spans;
            }
            std::thread::sleep(POLL);
        }
    }

    /// [`OtlpReceiver::wait_for_spans`] until `count` spans named `name` arrived.
    pub fn wait_for_named(&self, name: &str, count: usize, timeout: Duration) -> Vec<ReceivedSpan> {
        self.wait_for_spans(
            |spans| spans.iter().filter(|s| s.name == name).count() >= count,
            timeout,
        )
    }

    /// Like [`OtlpReceiver::wait_for_spans`], sleeping on the Tokio timer instead of blocking
    /// the thread.
    pub async fn wait_for_spans_async(
        &self,
        predicate: impl Fn(&[ReceivedSpan]) -> bool,
        timeout: Duration,
    ) -> Vec<ReceivedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if predicate(&spans) || Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits, blocking the thread (polling every 20 ms), until at least `count` exports have
    /// [`arrived`](OtlpReceiver::arrived) or `timeout` passes, and returns how many had.
    pub fn wait_for_arrived(&self, count: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        loop {
            let arrived = self.arrived();
            if arrived >= count || Instant::now() >= deadline {
                return arrived;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// `http://127.0.0.1:PORT` where nothing listens (a port the system just handed out and took
/// back), for exports that must fail to connect. Another process could take the port in the
/// meantime, which is unlikely within a test.
pub fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// Serves `mode` on `listener` until the future is dropped.
async fn serve(mode: Mode, listener: tokio::net::TcpListener, store: Shared) {
    match mode {
        Mode::Answering(Protocol::Grpc) => {
            let _ = tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(GrpcTraces(store)))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
                .await;
        }
        Mode::Answering(Protocol::Http) | Mode::Stalling => {
            let state = HttpState {
                store,
                stall: matches!(mode, Mode::Stalling),
            };
            let app = axum::Router::new()
                .route("/v1/traces", axum::routing::post(export_http))
                .layer(DefaultBodyLimit::disable())
                .with_state(state);
            let _ = axum::serve(listener, app).await;
        }
    }
}

/// Records a decoded export with its headers.
fn record(store: &Shared, request: ExportTraceServiceRequest, headers: &HeaderMap) {
    let mut by_name = BTreeMap::<String, String>::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        by_name
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|joined| {
                joined.push(',');
                joined.push_str(&value);
            })
            .or_insert_with(|| value.into_owned());
    }
    let mut store = store.lock().unwrap();
    store.requests.push(request);
    store.headers.push(by_name);
}

#[derive(Clone)]
struct HttpState {
    store: Shared,
    stall: bool,
}

/// `POST /v1/traces`: decodes the body by its content type, records it, and answers an empty
/// `ExportTraceServiceResponse` in the same encoding (or, stalling, never answers).
async fn export_http(State(state): State<HttpState>, headers: HeaderMap, body: Bytes) -> Response {
    state.store.lock().unwrap().arrived += 1;
    let refuse = |status: StatusCode, why: String| {
        state.store.lock().unwrap().errors.push(why.clone());
        (status, why).into_response()
    };
    let header = |name| {
        headers
            .get(name)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).to_ascii_lowercase())
    };
    if let Some(encoding) = header(CONTENT_ENCODING).filter(|e| e.trim() != "identity") {
        let why = format!("unsupported content-encoding {encoding:?}");
        return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, why);
    }
    let content_type = header(CONTENT_TYPE).unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    let json = match media_type {
        "application/x-protobuf" => false,
        "application/json" => true,
        _ => {
            let why = format!("unsupported content-type {content_type:?}");
            return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, why);
        }
    };
    let decoded = if json {
        serde_json::from_slice::<ExportTraceServiceRequest>(&body).map_err(|e| e.to_string())
    } else {
        ExportTraceServiceRequest::decode(body).map_err(|e| e.to_string())
    };
    let request = match decoded {
        Ok(request) => request,
        Err(why) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("undecodable export: {why}"),
            );
        }
    };
    record(&state.store, request, &headers);
    if state.stall {
        std::future::pending::<()>().await;
    }
    let answer = ExportTraceServiceResponse::default();
    if json {
        let body = serde_json::to_vec(&answer).unwrap();
        ([(CONTENT_TYPE, "application/json")], body).into_response()
    } else {
        (
            [(CONTENT_TYPE, "application/x-protobuf")],
            answer.encode_to_vec(),
        )
            .into_response()
    }
}

/// The gRPC `TraceService`: records each export with its metadata.
struct GrpcTraces(Shared);

#[async_trait::async_trait]
impl TraceService for GrpcTraces {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.0.lock().unwrap().arrived += 1;
        let headers = request.metadata().clone().into_headers();
        record(&self.0, request.into_inner(), &headers);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}
