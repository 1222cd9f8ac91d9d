//! The flattened view of received OTLP trace exports: one [`ReceivedSpan`] per span, with its
//! ids in lowercase hex, its attributes (and those of its events, links, and resource) as JSON
//! values, so that tests assert on plain data rather than walk the protobuf nesting.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use serde_json::Value;

/// Attributes by key, each value converted by [`any_value_to_json`]; of two with the same key,
/// the later one.
pub type Attributes = BTreeMap<String, Value>;

/// One span of a received export, with what it came with.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedSpan {
    /// The trace id, lowercase hex (32 digits from a conforming exporter).
    pub trace_id: String,
    /// The span id, lowercase hex (16 digits from a conforming exporter).
    pub span_id: String,
    /// The parent's span id, lowercase hex; `None` for a root span (an empty id on the wire).
    pub parent_span_id: Option<String>,
    /// The span's name.
    pub name: String,
    /// The OTLP `SpanKind` as its number (compare with `SpanKind::Client as i32`).
    pub kind: i32,
    /// Start time, nanoseconds since the Unix epoch.
    pub start_unix_nanos: u64,
    /// End time, nanoseconds since the Unix epoch.
    pub end_unix_nanos: u64,
    /// The span's attributes.
    pub attributes: Attributes,
    /// The OTLP `StatusCode` as its number (0 unset, 1 ok, 2 error; also 0 with no status).
    pub status_code: i32,
    /// The status message (empty with no status).
    pub status_message: String,
    /// The events, in order: name and attributes.
    pub events: Vec<(String, Attributes)>,
    /// The links, in order: trace id and span id (lowercase hex) and attributes.
    pub links: Vec<(String, String, Attributes)>,
    /// The attributes of the resource of the `ResourceSpans` the span came in (empty with no
    /// resource).
    pub resource: Attributes,
    /// The name of the instrumentation scope of the `ScopeSpans` the span came in (empty with
    /// no scope).
    pub scope_name: String,
}

impl ReceivedSpan {
    /// The attribute `key`, if the span has it.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    /// The attribute `key` if it is a string; `None` if absent or of another type.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Value::as_str)
    }

    /// The attribute `key` if it is an integer that fits `i64`; `None` if absent or of another
    /// type (a double, even a whole one, is not an integer here).
    pub fn attr_i64(&self, key: &str) -> Option<i64> {
        self.attr(key).and_then(Value::as_i64)
    }
}

/// Every span of `request`, in the order they came (resource by resource, scope by scope).
pub fn flatten(request: &ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut spans = Vec::new();
    for resource_spans in &request.resource_spans {
        let resource = resource_spans
            .resource
            .as_ref()
            .map(|resource| attributes(&resource.attributes))
            .unwrap_or_default();
        for scope_spans in &resource_spans.scope_spans {
            let scope_name = scope_spans
                .scope
                .as_ref()
                .map(|scope| scope.name.clone())
                .unwrap_or_default();
            for span in &scope_spans.spans {
                let status = span.status.clone().unwrap_or_default();
                spans.push(ReceivedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: (!span.parent_span_id.is_empty())
                        .then(|| hex(&span.parent_span_id)),
                    name: span.name.clone(),
                    kind: span.kind,
                    start_unix_nanos: span.start_time_unix_nano,
                    end_unix_nanos: span.end_time_unix_nano,
                    attributes: attributes(&span.attributes),
                    status_code: status.code,
                    status_message: status.message,
                    events: span
                        .events
                        .iter()
                        .map(|event| (event.name.clone(), attributes(&event.attributes)))
                        .collect(),
                    links: span
                        .links
                        .iter()
                        .map(|link| {
                            let attrs = attributes(&link.attributes);
                            (hex(&link.trace_id), hex(&link.span_id), attrs)
                        })
                        .collect(),
                    resource: resource.clone(),
                    scope_name: scope_name.clone(),
                });
            }
        }
    }
    spans
}

/// `key_values` as a map, each value converted by [`any_value_to_json`].
pub fn attributes(key_values: &[KeyValue]) -> Attributes {
    key_values
        .iter()
        .map(|kv| {
            let value = kv.value.as_ref().map_or(Value::Null, any_value_to_json);
            (kv.key.clone(), value)
        })
        .collect()
}

/// An OTLP `AnyValue` as JSON: a string, bool, or int as itself; a double as a number (NaN and
/// the infinities, which JSON has no number for, as the strings `NaN`, `inf`, `-inf`); an array
/// as an array; a key-value list as an object; bytes as a lowercase hex string; a string-table
/// index (`string_value_strindex`, used only by profiles) as its number; no value as `null`.
pub fn any_value_to_json(value: &AnyValue) -> Value {
    match &value.value {
        None => Value::Null,
        Some(Any::StringValue(s)) => Value::String(s.clone()),
        Some(Any::BoolValue(b)) => Value::Bool(*b),
        Some(Any::IntValue(i)) => Value::from(*i),
        Some(Any::DoubleValue(d)) => serde_json::Number::from_f64(*d)
            .map_or_else(|| Value::String(d.to_string()), Value::Number),
        Some(Any::ArrayValue(array)) => array.values.iter().map(any_value_to_json).collect(),
        Some(Any::KvlistValue(list)) => {
            Value::Object(attributes(&list.values).into_iter().collect())
        }
        Some(Any::BytesValue(bytes)) => Value::String(hex(bytes)),
        Some(Any::StringValueStrindex(index)) => Value::from(*index),
    }
}

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}
