//! Tests of the OTLP receivers: exports pushed with the official messages over each protocol
//! (a raw HTTP/1.1 POST, `opentelemetry-proto`'s own gRPC client) come out flattened, with
//! their headers; refused exports are counted and explained; the stalling endpoint holds
//! requests until dropped; the dead endpoint refuses.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use serde_json::json;

use super::*;

/// Long enough never to be reached when things work.
const PATIENCE: Duration = Duration::from_secs(20);

fn kv(key: &str, value: Any) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

/// One span with a parent, two attributes, an event, a link and an error status, in a resource
/// with a service name and a scope.
fn sample_request() -> ExportTraceServiceRequest {
    let span = Span {
        trace_id: (1..=16).collect(),
        span_id: vec![0xab, 0xcd, 0, 0, 0, 0, 0, 1],
        parent_span_id: vec![0, 0, 0, 0, 0, 0, 0, 7],
        name: "llm.request".into(),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: 1_000,
        end_time_unix_nano: 2_000,
        attributes: vec![
            kv("gen_ai.system", Any::StringValue("anthropic".into())),
            kv("gen_ai.usage.input_tokens", Any::IntValue(42)),
        ],
        events: vec![Event {
            time_unix_nano: 1_500,
            name: "retry".into(),
            attributes: vec![kv("attempt", Any::IntValue(2))],
            ..Default::default()
        }],
        links: vec![Link {
            trace_id: vec![0xff; 16],
            span_id: vec![0x01; 8],
            attributes: vec![kv("why", Any::StringValue("follows".into()))],
            ..Default::default()
        }],
        status: Some(Status {
            message: "boom".into(),
            code: StatusCode::Error as i32,
        }),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", Any::StringValue("golem-forge".into()))],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "golem".into(),
                    ..Default::default()
                }),
                spans: vec![span],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// Asserts that `spans` is exactly the span of [`sample_request`], flattened.
fn assert_sample(spans: &[ReceivedSpan]) {
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let span = &spans[0];
    assert_eq!(span.trace_id, "0102030405060708090a0b0c0d0e0f10");
    assert_eq!(span.span_id, "abcd000000000001");
    assert_eq!(span.parent_span_id.as_deref(), Some("0000000000000007"));
    assert_eq!(span.name, "llm.request");
    assert_eq!(span.kind, SpanKind::Client as i32);
    assert_eq!((span.start_unix_nanos, span.end_unix_nanos), (1_000, 2_000));
    assert_eq!(span.attributes.len(), 2);
    assert_eq!(span.attr_str("gen_ai.system"), Some("anthropic"));
    assert_eq!(span.attr_i64("gen_ai.usage.input_tokens"), Some(42));
    assert_eq!(span.attr("missing"), None);
    assert_eq!(span.status_code, StatusCode::Error as i32);
    assert_eq!(span.status_message, "boom");
    let attempt = Attributes::from([("attempt".to_owned(), json!(2))]);
    assert_eq!(span.events, vec![("retry".to_owned(), attempt)]);
    let why = Attributes::from([("why".to_owned(), json!("follows"))]);
    let link = ("ff".repeat(16), "01".repeat(8), why);
    assert_eq!(span.links, vec![link]);
    let service = Attributes::from([("service.name".to_owned(), json!("golem-forge"))]);
    assert_eq!(span.resource, service);
    assert_eq!(span.scope_name, "golem");
}

/// A raw HTTP/1.1 response: status, head (lowercased), body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

/// POSTs `body` to `path` of the receiver at `endpoint` with `headers`, and reads the whole
/// answer (the connection is closed after it).
fn post(endpoint: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let address = endpoint.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(answer[..split].to_vec())
        .unwrap()
        .to_ascii_lowercase();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer {
        status,
        head,
        body: answer[split + 4..].to_vec(),
    }
}

const PROTOBUF: (&str, &str) = ("Content-Type", "application/x-protobuf");

#[tokio::test]
async fn http_protobuf_export_is_flattened_with_its_headers() {
    let receiver = OtlpReceiver::http().await;
    assert_eq!(receiver.protocol(), Protocol::Http);
    let endpoint = receiver.endpoint();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
    let body = sample_request().encode_to_vec();
    let answer = tokio::task::spawn_blocking(move || {
        let headers = [
            PROTOBUF,
            ("X-Team", "Forge"),
            ("x-multi", "a"),
            ("x-multi", "b"),
        ];
        post(&endpoint, "/v1/traces", &headers, &body)
    })
    .await
    .unwrap();
    assert_eq!(answer.status, 200);
    assert!(
        answer.head.contains("content-type: application/x-protobuf"),
        "{}",
        answer.head
    );
    assert_eq!(
        ExportTraceServiceResponse::decode(answer.body.as_slice()).unwrap(),
        ExportTraceServiceResponse::default()
    );
    assert_eq!(receiver.requests(), vec![sample_request()]);
    assert_sample(&receiver.spans());
    let headers = receiver.headers();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0]["x-team"], "Forge");
    assert_eq!(headers[0]["x-multi"], "a,b");
    assert_eq!(headers[0]["content-type"], "application/x-protobuf");
    assert_eq!((receiver.arrived(), receiver.errors()), (1, vec![]));
}

#[tokio::test]
async fn http_json_export_is_decoded_as_otlp_json() {
    let receiver = OtlpReceiver::http().await;
    let endpoint = receiver.endpoint();
    // The OTLP/JSON encoding: hex ids, 64-bit integers as strings, enums as numbers.
    let body = json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "forge"}}]},
        "scopeSpans": [{"scope": {"name": "golem"}, "spans": [{
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": "eee19b7ec3c1b174",
            "name": "tool.call",
            "kind": 1,
            "startTimeUnixNano": "1544712660000000000",
            "endTimeUnixNano": "1544712661000000000",
            "attributes": [
                {"key": "n", "value": {"intValue": "7"}},
                {"key": "ok", "value": {"boolValue": true}},
                {"key": "ratio", "value": {"doubleValue": 0.5}}
            ],
            "status": {"code": 1}
        }]}]
    }]})
    .to_string();
    let answer = tokio::task::spawn_blocking(move || {
        let headers = [("content-type", "application/json; charset=utf-8")];
        post(&endpoint, "/v1/traces", &headers, body.as_bytes())
    })
    .await
    .unwrap();
    assert_eq!(answer.status, 200, "{:?}", receiver.errors());
    assert!(
        answer.head.contains("content-type: application/json"),
        "{}",
        answer.head
    );
    assert!(serde_json::from_slice::<serde_json::Value>(&answer.body).is_ok());
    let spans = receiver
        .wait_for_spans_async(|spans| !spans.is_empty(), PATIENCE)
        .await;
    assert_eq!(spans.len(), 1);
    let span = &spans[0];
    assert_eq!(span.trace_id, "5b8efff798038103d269b633813fc60c");
    assert_eq!(span.span_id, "eee19b7ec3c1b174");
    assert_eq!(span.parent_span_id, None);
    assert_eq!(span.kind, SpanKind::Internal as i32);
    assert_eq!(span.start_unix_nanos, 1_544_712_660_000_000_000);
    assert_eq!(span.attr_i64("n"), Some(7));
    assert_eq!(span.attr("ok"), Some(&json!(true)));
    assert_eq!(span.attr("ratio"), Some(&json!(0.5)));
    assert_eq!(span.attr_i64("ratio"), None);
    assert_eq!(span.status_code, StatusCode::Ok as i32);
    assert_eq!(span.resource["service.name"], "forge");
}

#[tokio::test]
async fn http_refuses_what_it_cannot_decode_and_counts_it() {
    let receiver = OtlpReceiver::http().await;
    let endpoint = receiver.endpoint();
    let statuses = tokio::task::spawn_blocking(move || {
        let garbage = post(&endpoint, "/v1/traces", &[PROTOBUF], &[0xff, 0xff, 0xff]);
        let text = post(
            &endpoint,
            "/v1/traces",
            &[("content-type", "text/plain")],
            b"x",
        );
        let gzip = [PROTOBUF, ("content-encoding", "gzip")];
        let zipped = post(&endpoint, "/v1/traces", &gzip, b"x");
        let other_path = post(&endpoint, "/v1/metrics", &[PROTOBUF], b"");
        [
            garbage.status,
            text.status,
            zipped.status,
            other_path.status,
        ]
    })
    .await
    .unwrap();
    assert_eq!(statuses, [400, 415, 415, 404]);
    assert_eq!(receiver.arrived(), 3);
    let errors = receiver.errors();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].starts_with("undecodable export"), "{errors:?}");
    assert!(errors[1].contains("text/plain"), "{errors:?}");
    assert!(errors[2].contains("gzip"), "{errors:?}");
    assert!(receiver.requests().is_empty());
    assert!(receiver.headers().is_empty());
}

#[tokio::test]
async fn grpc_export_is_flattened_with_its_metadata() {
    let receiver = OtlpReceiver::grpc().await;
    assert_eq!(receiver.protocol(), Protocol::Grpc);
    let mut client = TraceServiceClient::connect(receiver.endpoint())
        .await
        .unwrap();
    let mut request = tonic::Request::new(sample_request());
    request
        .metadata_mut()
        .insert("x-team", "forge".parse().unwrap());
    let answer = client.export(request).await.unwrap().into_inner();
    assert_eq!(answer, ExportTraceServiceResponse::default());
    assert_sample(&receiver.spans());
    let headers = receiver.headers();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0]["x-team"], "forge");
    assert!(
        headers[0]["content-type"].starts_with("application/grpc"),
        "{headers:?}"
    );
    assert_eq!(receiver.arrived(), 1);
}

#[test]
fn blocking_receivers_serve_plain_tests() {
    let http = OtlpReceiver::start_http_blocking();
    let body = sample_request().encode_to_vec();
    let auth = ("authorization", "Bearer t0ken");
    assert_eq!(
        post(&http.endpoint(), "/v1/traces", &[PROTOBUF, auth], &body).status,
        200
    );
    assert_sample(&http.wait_for_spans(|spans| !spans.is_empty(), PATIENCE));
    assert_eq!(http.headers()[0]["authorization"], "Bearer t0ken");

    let grpc = OtlpReceiver::start_blocking(Protocol::Grpc);
    assert_eq!(grpc.protocol(), Protocol::Grpc);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut client = TraceServiceClient::connect(grpc.endpoint()).await.unwrap();
        client.export(sample_request()).await.unwrap();
    });
    assert_sample(&grpc.wait_for_spans(|spans| !spans.is_empty(), PATIENCE));
}

#[test]
fn dropping_a_blocking_receiver_stops_it() {
    let receiver = OtlpReceiver::start_grpc_blocking();
    let address = receiver
        .endpoint()
        .strip_prefix("http://")
        .unwrap()
        .to_owned();
    assert!(TcpStream::connect(&address).is_ok());
    drop(receiver);
    assert!(TcpStream::connect(&address).is_err());
}

#[test]
fn wait_for_spans_gives_up_with_what_it_has() {
    let receiver = OtlpReceiver::start_http_blocking();
    let spans = receiver.wait_for_spans(|spans| spans.len() > 5, Duration::from_millis(50));
    assert!(spans.is_empty());
    assert_eq!(receiver.wait_for_arrived(1, Duration::from_millis(50)), 0);
}

#[test]
fn stalling_receiver_records_requests_and_never_answers() {
    let receiver = OtlpReceiver::http_stalling_blocking();
    assert_eq!(receiver.protocol(), Protocol::Http);
    let address = receiver
        .endpoint()
        .strip_prefix("http://")
        .unwrap()
        .to_owned();
    let mut stream = TcpStream::connect(&address).unwrap();
    let body = sample_request().encode_to_vec();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/x-protobuf\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    assert_eq!(receiver.wait_for_arrived(1, PATIENCE), 1);
    assert_sample(&receiver.spans());
    // It has the request, and yet no answer comes.
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buffer = [0u8; 64];
    let error = stream.read(&mut buffer).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{error}"
    );
    // Dropping the receiver lets the held connection go.
    drop(receiver);
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    match stream.read(&mut buffer) {
        Ok(read) => assert_eq!(read, 0, "an answer came after all"),
        Err(error) => assert_eq!(error.kind(), ErrorKind::ConnectionReset, "{error}"),
    }
}

#[test]
fn dead_endpoint_refuses_connections() {
    let endpoint = dead_endpoint();
    let address = endpoint.strip_prefix("http://127.0.0.1:").unwrap();
    assert!(address.parse::<u16>().is_ok(), "{endpoint}");
    let error = TcpStream::connect(endpoint.strip_prefix("http://").unwrap()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionRefused);
}

#[test]
fn any_values_become_json() {
    let value = |v| any_value_to_json(&AnyValue { value: Some(v) });
    assert_eq!(value(Any::StringValue("s".into())), json!("s"));
    assert_eq!(value(Any::BoolValue(false)), json!(false));
    assert_eq!(value(Any::IntValue(-3)), json!(-3));
    assert_eq!(value(Any::DoubleValue(1.25)), json!(1.25));
    assert_eq!(value(Any::DoubleValue(f64::NAN)), json!("NaN"));
    assert_eq!(value(Any::DoubleValue(f64::NEG_INFINITY)), json!("-inf"));
    assert_eq!(value(Any::BytesValue(vec![0, 0x1f, 0xa0])), json!("001fa0"));
    assert_eq!(value(Any::StringValueStrindex(4)), json!(4));
    let array = ArrayValue {
        values: vec![
            AnyValue {
                value: Some(Any::IntValue(1)),
            },
            AnyValue { value: None },
        ],
    };
    assert_eq!(value(Any::ArrayValue(array)), json!([1, null]));
    let list = KeyValueList {
        values: vec![
            kv("b", Any::BoolValue(true)),
            kv("a", Any::StringValue("first".into())),
            kv("a", Any::StringValue("second".into())),
        ],
    };
    assert_eq!(
        value(Any::KvlistValue(list)),
        json!({"a": "second", "b": true})
    );
    assert_eq!(any_value_to_json(&AnyValue { value: None }), json!(null));
}

#[test]
fn flattening_keeps_order_and_context_and_tolerates_missing_parts() {
    let mut request = sample_request();
    // A second resource with no resource, no scope, and a root span with no status.
    request.resource_spans.push(ResourceSpans {
        scope_spans: vec![ScopeSpans {
            spans: vec![Span {
                trace_id: vec![0xee; 16],
                span_id: vec![0x02; 8],
                name: "root".into(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let spans = flatten(&request);
    assert_eq!(spans.len(), 2);
    assert_sample(&spans[..1]);
    let root = &spans[1];
    assert_eq!(root.name, "root");
    assert_eq!(root.parent_span_id, None);
    assert!(root.resource.is_empty() && root.attributes.is_empty());
    assert_eq!(root.scope_name, "");
    assert_eq!((root.status_code, root.status_message.as_str()), (0, ""));
    assert_eq!(hex(&[]), "");
}

#[test]
fn protocols_name_their_exporter_setting() {
    assert_eq!(Protocol::Http.env_value(), "http/protobuf");
    assert_eq!(Protocol::Grpc.env_value(), "grpc");
}
