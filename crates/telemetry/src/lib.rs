//! Traces: a session's worker runs, model requests, tool calls with their approvals,
//! compactions and jailed programs as OpenTelemetry spans named and attributed as the GenAI
//! semantic conventions write them, sent over OTLP when tracing is configured
//! (docs/telemetry.md).

mod export;
mod recorded;
mod session;
mod settings;
mod span;
mod traceparent;

pub use export::{EXIT_FLUSH, EXPORT_TIMEOUT, MAX_QUEUED_SPANS, Telemetry, TelemetryError};
pub use opentelemetry::KeyValue;
pub use opentelemetry::trace::SpanKind;
pub use recorded::{OtlpJsonError, otlp_json, spans_of_recording};
pub use session::{SessionTracer, SpanSink, TraceOrigin};
pub use settings::{ExportProtocol, SettingsError, TelemetryConfig, TraceSettings};
pub use span::{FinishedSpan, attr};
pub use traceparent::TraceParent;
