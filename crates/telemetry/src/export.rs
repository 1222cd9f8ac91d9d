//! Sending spans: the OpenTelemetry SDK's batch processor in front of its OTLP exporter
//! (HTTP/protobuf through our reqwest client, or gRPC through tonic). A span handed over is
//! queued without blocking (a full queue drops it); a background thread batches the queue and
//! exports on a small Tokio runtime of its own, so a slow or dead collector never holds up a
//! run. The first failed export is told once, as a warning; the rest are quiet. What is still
//! queued at exit is flushed for at most the time [`Telemetry::shutdown`] is given.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanData, SpanExporter, SpanProcessor,
};

use crate::settings::{ExportProtocol, TelemetryConfig, TraceSettings};
use crate::span::{scope, service_resource};

/// How many finished spans may wait for export; more are dropped. The SDK allocates the
/// whole queue when tracing starts (about 300 bytes a span), which a one-turn run pays for:
/// 1024 keeps that small while holding two export batches.
pub const MAX_QUEUED_SPANS: usize = 1024;

/// How long one export may take before it is given up.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the flush at exit may take.
pub const EXIT_FLUSH: Duration = Duration::from_secs(2);

/// Why spans cannot be sent.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The settings are wrong.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The exporter could not be built.
    #[error("cannot set up the trace exporter for {endpoint}: {message}")]
    Exporter {
        /// Where it would send.
        endpoint: String,
        /// What went wrong.
        message: String,
    },
    /// The export thread could not be started.
    #[error("cannot start the trace export thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// Where finished spans go, with what the spans of this process share. Cheap to clone.
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Inner>,
}

struct Inner {
    processor: BatchSpanProcessor,
    scope: InstrumentationScope,
    capture_content: bool,
    endpoint: String,
    /// Set once the one warning about this collector is told.
    warned: Arc<AtomicBool>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("capture_content", &self.inner.capture_content)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Starts exporting with `settings`: the batch processor, and the export thread, which
    /// builds its runtime and the exporter while the run goes on (an HTTP client with its TLS
    /// roots is not made on the run's path). Nothing is sent until a span is.
    pub fn start(settings: &TraceSettings) -> Result<Telemetry, TelemetryError> {
        let warned = Arc::new(AtomicBool::new(false));
        let exporter = OffThreadExporter {
            ready: export_thread(settings.clone())?,
            endpoint: settings.endpoint.clone(),
            warned: Arc::clone(&warned),
        };
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(MAX_QUEUED_SPANS)
                    .with_scheduled_delay(Duration::from_millis(500))
                    .build(),
            )
            .build();
        let scope = scope();
        Ok(Telemetry {
            inner: Arc::new(Inner {
                processor,
                scope,
                capture_content: settings.capture_content,
                endpoint: settings.endpoint.clone(),
                warned,
            }),
        })
    }

    /// Queues a finished span for export (never blocks; dropped when the queue is full).
    pub fn send(&self, mut span: SpanData) {
        span.instrumentation_scope = self.inner.scope.clone();
        self.inner.processor.on_end(span);
    }

    /// Queues a span this crate's [`FinishedSpan`] describes (a batch's, say).
    pub fn send_finished(&self, span: crate::span::FinishedSpan) {
        self.send(span.into_span_data());
    }

    /// Whether spans record content (prompts, answers, tool arguments and results).
    pub fn capture_content(&self) -> bool {
        self.inner.capture_content
    }

    /// Exports what is queued and stops, waiting at most `timeout`; a collector that does not
    /// answer by then is told once, as a warning (unless an export already failed).
    pub fn shutdown(&self, timeout: Duration) {
        if let Err(e) = self.inner.processor.shutdown_with_timeout(timeout)
            && !self.inner.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "traces cannot be sent to {}: no answer within {} s at exit ({e}); the spans \
                 of this run may be lost",
                self.inner.endpoint,
                timeout.as_secs_f32()
            );
        }
    }
}

/// The resource every span of this process shares: `service.name`, `service.version` and
/// what `OTEL_RESOURCE_ATTRIBUTES` adds.
fn resource(settings: &TraceSettings) -> Resource {
    service_resource(&settings.service_name)
        .with_attributes(
            settings
                .resource
                .iter()
                .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
        )
        .with_attribute(KeyValue::new("telemetry.sdk.language", "rust"))
        .with_attribute(KeyValue::new("telemetry.sdk.name", "opentelemetry"))
        .build()
}

/// The exporter once the export thread has made it, with the runtime its I/O runs on; or
/// why it could not be made.
type Ready = OnceLock<
    Result<
        (
            tokio::runtime::Handle,
            Arc<opentelemetry_otlp::SpanExporter>,
        ),
        TelemetryError,
    >,
>;

/// Starts the export thread: a current-thread Tokio runtime, and the exporter made on it.
fn export_thread(settings: TraceSettings) -> Result<Arc<Ready>, TelemetryError> {
    let ready: Arc<Ready> = Arc::new(OnceLock::new());
    let filled = Arc::clone(&ready);
    std::thread::Builder::new()
        .name("golem-trace-export".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = filled.set(Err(TelemetryError::Thread(e)));
                    return;
                }
            };
            let handle = runtime.handle().clone();
            let made =
                build_exporter(&settings, &handle).map(|exporter| (handle, Arc::new(exporter)));
            let _ = filled.set(made);
            runtime.block_on(std::future::pending::<()>());
        })
        .map_err(TelemetryError::Thread)?;
    Ok(ready)
}

/// The OTLP exporter `settings` describe, made within `handle`'s runtime.
fn build_exporter(
    settings: &TraceSettings,
    handle: &tokio::runtime::Handle,
) -> Result<opentelemetry_otlp::SpanExporter, TelemetryError> {
    let failure = |message: String| TelemetryError::Exporter {
        endpoint: settings.endpoint.clone(),
        message,
    };
    let mut exporter = match settings.protocol {
        ExportProtocol::HttpProtobuf => {
            let client = reqwest::Client::builder()
                .timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| failure(e.to_string()))?;
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(ReqwestHttpClient(client))
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(settings.endpoint.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .with_headers(settings.headers.clone().into_iter().collect())
                .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
                .build()
        }
        ExportProtocol::Grpc => {
            // tonic's channel is made on the runtime it will run on.
            let _entered = handle.enter();
            let mut headers = http::HeaderMap::new();
            for (key, value) in &settings.headers {
                match (
                    http::HeaderName::from_bytes(key.to_ascii_lowercase().as_bytes()),
                    http::HeaderValue::from_str(value),
                ) {
                    (Ok(key), Ok(value)) => {
                        headers.insert(key, value);
                    }
                    (Err(_), _) | (_, Err(_)) => {
                        return Err(failure(format!("the header `{key}` cannot be sent")));
                    }
                }
            }
            let metadata =
                opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(headers);
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(settings.endpoint.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .with_metadata(metadata)
                .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
                .build()
        }
    }
    .map_err(|e| failure(e.to_string()))?;
    exporter.set_resource(&resource(settings));
    Ok(exporter)
}

/// The OTLP exporter, its exports run on the export runtime (the batch processor's thread
/// has none), and its first failure told once.
#[derive(Debug)]
struct OffThreadExporter {
    ready: Arc<Ready>,
    endpoint: String,
    warned: Arc<AtomicBool>,
}

impl OffThreadExporter {
    fn warn_once(&self, error: &dyn std::fmt::Display) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "traces cannot be sent to {}: {error} (spans of this run are dropped; the run \
                 goes on)",
                self.endpoint
            );
        }
    }
}

impl SpanExporter for OffThreadExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        // The batch processor's own thread waits here for the export thread's first moments.
        let (handle, inner) = match self.ready.wait() {
            Ok((handle, inner)) => (handle, Arc::clone(inner)),
            Err(error) => {
                self.warn_once(error);
                return Err(OTelSdkError::InternalFailure(error.to_string()));
            }
        };
        let result = match handle.spawn(async move { inner.export(batch).await }).await {
            Ok(result) => result,
            Err(e) => Err(OTelSdkError::InternalFailure(e.to_string())),
        };
        if let Err(e) = &result {
            self.warn_once(e);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        match self.ready.get() {
            Some(Ok((_, inner))) => inner.shutdown_with_timeout(timeout),
            Some(Err(_)) | None => Ok(()),
        }
    }
}

/// opentelemetry-http's client trait over our reqwest client.
#[derive(Debug)]
struct ReqwestHttpClient(reqwest::Client);

#[async_trait::async_trait]
impl HttpClient for ReqwestHttpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let mut answer = Response::builder().status(response.status());
        if let Some(headers) = answer.headers_mut() {
            *headers = response.headers().clone();
        }
        Ok(answer.body(response.bytes().await?)?)
    }
}

/// The process's exporter, made by the first [`Telemetry::for_process`].
static PROCESS: OnceLock<Option<Telemetry>> = OnceLock::new();

impl Telemetry {
    /// The process's telemetry: started by the first call from `config` and the process
    /// environment, the same for every later call (one exporter per process). `None` when
    /// tracing is off, or when it cannot start (told once, as a warning).
    pub fn for_process(config: Option<&TelemetryConfig>) -> Option<Telemetry> {
        PROCESS
            .get_or_init(|| {
                let env = |name: &str| std::env::var(name).ok();
                let started = TraceSettings::resolve(config, &env)
                    .map_err(TelemetryError::from)
                    .and_then(|settings| settings.map(|s| Telemetry::start(&s)).transpose());
                match started {
                    Ok(telemetry) => telemetry,
                    Err(e) => {
                        tracing::warn!("traces are off: {e}");
                        None
                    }
                }
            })
            .clone()
    }

    /// Flushes and stops the process's telemetry, if it was started ([`EXIT_FLUSH`] at most).
    pub fn shutdown_process() {
        if let Some(Some(telemetry)) = PROCESS.get() {
            telemetry.shutdown(EXIT_FLUSH);
        }
    }
}
