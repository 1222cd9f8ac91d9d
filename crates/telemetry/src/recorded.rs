//! A recorded session as spans, after the fact: the same [`SessionTracer`] the live path runs,
//! fed a stream of timed display events that a caller rebuilt from a transcript (this crate
//! does not read transcripts), and the spans written as one OTLP/JSON document (the JSON form
//! of `ExportTraceServiceRequest` that the OTLP specification defines: lowerCamelCase names,
//! ids in hex, 64-bit integers as strings, enums as numbers), built with the official
//! `opentelemetry-proto` messages, for a session that ran with tracing off.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use golem_protocol::DisplayEvent;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::trace::SpanData;

use crate::session::{SessionTracer, TraceOrigin};
use crate::span::{scope, service_resource};

/// Why spans could not be written as OTLP/JSON.
#[derive(Debug, thiserror::Error)]
pub enum OtlpJsonError {
    /// The encoder refused the request (it does not for the messages this crate builds).
    #[error("cannot encode the spans as OTLP/JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The spans of a recorded session: `events` (each with the time it happened, in the order
/// they happened) fed to a [`SessionTracer`] under `origin`, and whatever is still open ended
/// at the last event's time. The stream should start with `sessionStarted` (the root spans'
/// session id comes from it) and carry the user's input as its `message` echo (only read when
/// `capture_content`).
///
/// Recorded times are wall-clock times and need not increase: an event stamped earlier than
/// the one before it is taken at that one's time, so that no span ends before it starts; and a
/// duration an event gives (a model call's, a tool call's) is cut to the time since the first
/// event, so that no span starts before the recording does.
pub fn spans_of_recording(
    events: impl IntoIterator<Item = (SystemTime, DisplayEvent)>,
    origin: TraceOrigin,
    capture_content: bool,
) -> Vec<SpanData> {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&spans);
    let mut tracer = SessionTracer::new(
        origin,
        capture_content,
        Box::new(move |span| {
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(span);
        }),
    );
    let mut first: Option<SystemTime> = None;
    let mut last: Option<SystemTime> = None;
    for (at, mut event) in events {
        let at = match last {
            Some(last) if at < last => last,
            _ => at,
        };
        let start = *first.get_or_insert(at);
        last = Some(at);
        let since_start = at.duration_since(start).unwrap_or_default();
        clamp_duration(&mut event, since_start);
        tracer.observe(at, &event);
    }
    if let Some(last) = last {
        tracer.finish(last);
    }
    drop(tracer);
    let mut spans = spans.lock().unwrap_or_else(PoisonError::into_inner);
    std::mem::take(&mut *spans)
}

/// Cuts the duration `event` gives to `limit` (the tracer subtracts it from the event's time).
fn clamp_duration(event: &mut DisplayEvent, limit: Duration) {
    let limit = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
    let duration = match event {
        DisplayEvent::Usage {
            call: Some(call), ..
        } => &mut call.duration_ms,
        DisplayEvent::ToolResult { duration_ms, .. }
        | DisplayEvent::ContextCompacted { duration_ms, .. } => duration_ms,
        _ => return,
    };
    *duration = (*duration).min(limit);
}

/// `spans` as one OTLP/JSON `ExportTraceServiceRequest`, ending in a newline: one resource
/// (`service.name` = `service_name`, `service.version` this program's), one instrumentation
/// scope (`golem-forge` and this program's version, as the live exporter names it).
pub fn otlp_json(spans: Vec<SpanData>, service_name: &str) -> Result<String, OtlpJsonError> {
    let request = otlp_request(spans, service_name);
    let mut text = serde_json::to_string_pretty(&request)?;
    text.push('\n');
    Ok(text)
}

/// `spans` as the request [`otlp_json`] encodes.
fn otlp_request(spans: Vec<SpanData>, service_name: &str) -> ExportTraceServiceRequest {
    let resource = service_resource(service_name).build();
    let scope = scope();
    let spans = spans
        .into_iter()
        .map(|mut span| {
            span.instrumentation_scope = scope.clone();
            span
        })
        .collect();
    ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(&resource),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use std::time::{Duration, SystemTime};

    use golem_protocol::DisplayEvent;
    use opentelemetry::trace::SpanId;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use serde_json::{Value, json};

    use super::{otlp_json, spans_of_recording};
    use crate::session::TraceOrigin;

    fn event(value: Value) -> DisplayEvent {
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    const ROOT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// A recorded turn: `a` delegates to `b` (through the gate, so the call is known before
    /// `b` starts), `b` makes a model call, the delegation's record settles with no worker.
    fn recording(t0: SystemTime) -> Vec<(SystemTime, DisplayEvent)> {
        let b = json!({"name": "b", "depth": 1, "id": "w2"});
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        vec![
            (
                at(0),
                event(
                    json!({"type": "sessionStarted", "protocolVersion": "1.16", "sessionId": "s-9", "worker": "a", "model": "test:m"}),
                ),
            ),
            (
                at(1),
                event(json!({"type": "message", "message": {"role": "user", "content": "go"}})),
            ),
            (
                at(2),
                event(
                    json!({"type": "workerStarted", "workerId": "w1", "workerName": "a", "depth": 0, "model": "test:m", "traceContext": ROOT}),
                ),
            ),
            (
                at(5),
                event(
                    json!({"type": "approvalResolved", "toolCallId": "c1", "toolName": "b", "approved": true, "decidedBy": "policy"}),
                ),
            ),
            (
                at(6),
                event(
                    json!({"type": "workerStarted", "workerId": "w2", "parentId": "w1", "workerName": "b", "depth": 1, "parentToolCallId": "c1"}),
                ),
            ),
            // Durations longer than the recording are cut to it.
            (
                at(9),
                event(
                    json!({"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}, "total": {"inputTokens": 1, "outputTokens": 1}, "worker": b,
                "call": {"provider": "test", "requestModel": "m", "durationMs": u64::MAX, "purpose": "conversation"}}),
                ),
            ),
            (
                at(10),
                event(
                    json!({"type": "workerFinished", "workerId": "w2", "workerName": "b", "depth": 1, "success": true, "durationMs": 4}),
                ),
            ),
            (
                at(11),
                event(
                    json!({"type": "toolResult", "toolCallId": "c1", "toolName": "b", "status": "success",
                "value": {"kind": "text", "data": {"content": "done"}}, "durationMs": 6, "invokedBy": "model"}),
                ),
            ),
            // A clock set back: taken at the time before it.
            (
                at(3),
                event(
                    json!({"type": "workerFinished", "workerId": "w1", "workerName": "a", "depth": 0, "success": true, "durationMs": 10}),
                ),
            ),
            (
                at(12),
                event(
                    json!({"type": "turnEnded", "status": "completed", "response": "ok", "usage": {"inputTokens": 1, "outputTokens": 1}}),
                ),
            ),
        ]
    }

    #[test]
    fn a_recording_gives_the_tree_and_its_times_stay_in_order() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let spans = spans_of_recording(recording(t0), TraceOrigin::default(), false);
        let named = |name: &str| {
            spans
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        let root = named("invoke_agent a");
        let call = named("execute_tool b");
        let sub = named("invoke_agent b");
        let chat = named("chat m");
        assert_eq!(spans.len(), 4);
        assert_eq!(format!("{}", root.span_context.trace_id()), &ROOT[3..35]);
        assert_eq!(format!("{}", root.span_context.span_id()), &ROOT[36..52]);
        assert_eq!(root.parent_span_id, SpanId::INVALID);
        assert_eq!(call.parent_span_id, root.span_context.span_id());
        assert_eq!(sub.parent_span_id, call.span_context.span_id());
        assert_eq!(chat.parent_span_id, sub.span_context.span_id());
        for span in &spans {
            assert!(span.end_time >= span.start_time, "{}", span.name);
            assert!(
                span.start_time >= t0,
                "{} starts before the recording",
                span.name
            );
        }
        assert_eq!(root.end_time, t0 + Duration::from_millis(11));
        assert_eq!(chat.start_time, t0);
        let session = root
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == "golem_forge.session.id")
            .map(|kv| kv.value.as_str().into_owned());
        assert_eq!(session.as_deref(), Some("s-9"));
    }

    #[test]
    fn content_comes_from_the_input_echo_only_when_captured() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let input = |capture| {
            spans_of_recording(recording(t0), TraceOrigin::default(), capture)
                .into_iter()
                .find(|s| s.name == "invoke_agent a")
                .unwrap()
                .attributes
                .iter()
                .find(|kv| kv.key.as_str() == "gen_ai.input.messages")
                .map(|kv| kv.value.as_str().into_owned())
        };
        assert!(input(true).unwrap().contains("go"));
        assert_eq!(input(false), None);
    }

    #[test]
    fn nothing_recorded_gives_no_spans_and_an_empty_request() {
        let spans = spans_of_recording(Vec::new(), TraceOrigin::default(), false);
        assert!(spans.is_empty());
        let text = otlp_json(spans, "golem-forge").unwrap();
        let request: ExportTraceServiceRequest = serde_json::from_str(&text).unwrap();
        assert!(request.resource_spans[0].scope_spans.is_empty());
    }

    #[test]
    fn otlp_json_is_the_specified_encoding_and_reads_back() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let spans = spans_of_recording(recording(t0), TraceOrigin::default(), false);
        let text = otlp_json(spans.clone(), "golem-forge").unwrap();
        assert!(text.ends_with("}\n"));

        // The wire form: camelCase names, hex ids, 64-bit integers as strings, enums as numbers.
        let json: Value = serde_json::from_str(&text).unwrap();
        let resource = &json["resourceSpans"][0];
        let attrs = resource["resource"]["attributes"].as_array().unwrap();
        let attr = |key: &str| attrs.iter().find(|kv| kv["key"] == key).unwrap()["value"].clone();
        assert_eq!(attr("service.name"), json!({"stringValue": "golem-forge"}));
        assert_eq!(
            attr("service.version"),
            json!({"stringValue": env!("CARGO_PKG_VERSION")})
        );
        let scope = &resource["scopeSpans"][0];
        assert_eq!(scope["scope"]["name"], "golem-forge");
        let wire = scope["spans"].as_array().unwrap();
        assert_eq!(wire.len(), spans.len());
        let root = wire.iter().find(|s| s["name"] == "invoke_agent a").unwrap();
        assert_eq!(root["traceId"], json!(&ROOT[3..35]));
        assert_eq!(root["spanId"], json!(&ROOT[36..52]));
        assert_eq!(root["parentSpanId"], json!(""));
        assert_eq!(root["kind"], json!(1), "SPAN_KIND_INTERNAL");
        let start: u128 = (t0 + Duration::from_millis(2))
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        assert_eq!(root["startTimeUnixNano"], json!(start.to_string()));
        let chat = wire.iter().find(|s| s["name"] == "chat m").unwrap();
        assert_eq!(chat["kind"], json!(3), "SPAN_KIND_CLIENT");
        let tokens = chat["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == "gen_ai.usage.input_tokens")
            .unwrap();
        assert_eq!(tokens["value"], json!({"intValue": "1"}));

        // And the official messages read it back to the same ids and times.
        let request: ExportTraceServiceRequest = serde_json::from_str(&text).unwrap();
        let decoded = &request.resource_spans[0].scope_spans[0].spans;
        assert_eq!(decoded.len(), spans.len());
        for (span, data) in decoded.iter().zip(&spans) {
            assert_eq!(span.name, data.name);
            assert_eq!(span.trace_id, data.span_context.trace_id().to_bytes());
            assert_eq!(span.span_id, data.span_context.span_id().to_bytes());
            let parent = data.parent_span_id;
            let expected: &[u8] = if parent == SpanId::INVALID {
                &[]
            } else {
                &parent.to_bytes()
            };
            assert_eq!(span.parent_span_id, expected);
            let nanos = |t: SystemTime| {
                u64::try_from(t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos()).unwrap()
            };
            assert_eq!(span.start_time_unix_nano, nanos(data.start_time));
            assert_eq!(span.end_time_unix_nano, nanos(data.end_time));
        }
        let tokens = decoded
            .iter()
            .find(|s| s.name == "chat m")
            .unwrap()
            .attributes
            .iter()
            .find(|kv| kv.key == "gen_ai.usage.input_tokens")
            .and_then(|kv| kv.value.as_ref()?.value.clone());
        assert_eq!(tokens, Some(Any::IntValue(1)));
    }
}
