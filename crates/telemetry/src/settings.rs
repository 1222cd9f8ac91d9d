//! Whether traces are sent and where: the program config's `telemetry:` section under the
//! standard OpenTelemetry environment variables (the environment wins, key by key). Off unless
//! an endpoint is named somewhere; `OTEL_SDK_DISABLED=true` turns it off whatever else says.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the full URL traces are sent to (used as written).
pub const TRACES_ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
/// `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL (`/v1/traces` is added for HTTP).
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs, comma separated, percent-encoded values.
pub const HEADERS_ENV: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// `OTEL_EXPORTER_OTLP_TRACES_HEADERS`: as [`HEADERS_ENV`], for traces only (wins over it).
pub const TRACES_HEADERS_ENV: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
/// `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the default) or `grpc`.
pub const PROTOCOL_ENV: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`: as [`PROTOCOL_ENV`], for traces only.
pub const TRACES_PROTOCOL_ENV: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
/// `OTEL_SERVICE_NAME`.
pub const SERVICE_NAME_ENV: &str = "OTEL_SERVICE_NAME";
/// `OTEL_RESOURCE_ATTRIBUTES`: `key=value` pairs, comma separated.
pub const RESOURCE_ATTRIBUTES_ENV: &str = "OTEL_RESOURCE_ATTRIBUTES";
/// `OTEL_SDK_DISABLED`: `true` turns tracing off.
pub const SDK_DISABLED_ENV: &str = "OTEL_SDK_DISABLED";
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`: the GenAI conventions' switch for
/// recording prompts, answers, tool arguments and results.
pub const CAPTURE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The service name when neither the environment nor the config names one.
pub const DEFAULT_SERVICE_NAME: &str = "golem-forge";

/// The `telemetry:` section of the program config, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// `http/protobuf` or `grpc`.
    #[serde(default)]
    pub protocol: Option<ExportProtocol>,
    /// Headers sent with every export (an API key of the backend, say).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The `service.name` of the spans' resource.
    #[serde(default)]
    pub service_name: Option<String>,
    /// Whether prompts, answers, tool arguments and results go into spans (secrets redacted).
    #[serde(default)]
    pub capture_content: Option<bool>,
}

/// How spans travel to the collector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum ExportProtocol {
    /// OTLP over HTTP, protobuf bodies (`POST …/v1/traces`).
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// OTLP over gRPC.
    #[serde(rename = "grpc")]
    Grpc,
}

impl ExportProtocol {
    /// The name as the environment and the config write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportProtocol::HttpProtobuf => "http/protobuf",
            ExportProtocol::Grpc => "grpc",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "http/protobuf" => Some(ExportProtocol::HttpProtobuf),
            "grpc" => Some(ExportProtocol::Grpc),
            _ => None,
        }
    }
}

/// Where and how traces are sent, every source resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSettings {
    /// The URL export requests go to: for HTTP the full `…/v1/traces` URL, for gRPC the
    /// collector's address.
    pub endpoint: String,
    /// How.
    pub protocol: ExportProtocol,
    /// Sent with every export.
    pub headers: BTreeMap<String, String>,
    /// The resource's `service.name`.
    pub service_name: String,
    /// The resource's other attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource: BTreeMap<String, String>,
    /// Whether content is recorded.
    pub capture_content: bool,
}

/// A setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// The protocol is neither `http/protobuf` nor `grpc`.
    #[error("{source_name} is `{value}`: traces are sent as `http/protobuf` or `grpc`")]
    Protocol {
        /// The variable (or config key) that says it.
        source_name: String,
        /// What it says.
        value: String,
    },
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("{source_name} is `{value}`: an http:// or https:// URL was expected")]
    Endpoint {
        /// The variable (or config key) that says it.
        source_name: String,
        /// What it says.
        value: String,
    },
}

impl TraceSettings {
    /// The settings from `config` and the environment `env` (a variable's value by name; set
    /// but empty counts as unset). `Ok(None)`: tracing is off.
    pub fn resolve(
        config: Option<&TelemetryConfig>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<TraceSettings>, SettingsError> {
        let var = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        if var(SDK_DISABLED_ENV).is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let default = TelemetryConfig::default();
        let config = config.unwrap_or(&default);
        let protocol = match var(TRACES_PROTOCOL_ENV)
            .map(|value| (TRACES_PROTOCOL_ENV, value))
            .or_else(|| var(PROTOCOL_ENV).map(|value| (PROTOCOL_ENV, value)))
        {
            Some((name, value)) => {
                ExportProtocol::parse(&value).ok_or_else(|| SettingsError::Protocol {
                    source_name: name.to_owned(),
                    value,
                })?
            }
            None => config.protocol.unwrap_or_default(),
        };
        let (source_name, written, is_base) = if let Some(full) = var(TRACES_ENDPOINT_ENV) {
            (TRACES_ENDPOINT_ENV, full, false)
        } else if let Some(base) = var(ENDPOINT_ENV) {
            (ENDPOINT_ENV, base, true)
        } else if let Some(base) = config.endpoint.clone().filter(|b| !b.trim().is_empty()) {
            ("telemetry.endpoint", base, true)
        } else {
            return Ok(None);
        };
        let written = written.trim().to_owned();
        if !(written.starts_with("http://") || written.starts_with("https://")) {
            return Err(SettingsError::Endpoint {
                source_name: source_name.to_owned(),
                value: written,
            });
        }
        let endpoint = if is_base {
            signal_url(&written, protocol)
        } else {
            written
        };
        let mut headers = config.headers.clone();
        if let Some(text) = var(TRACES_HEADERS_ENV).or_else(|| var(HEADERS_ENV)) {
            headers.extend(pairs(&text));
        }
        let service_name = var(SERVICE_NAME_ENV)
            .or_else(|| config.service_name.clone())
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
        let resource = var(RESOURCE_ATTRIBUTES_ENV)
            .map(|text| pairs(&text))
            .unwrap_or_default();
        let capture_content = match var(CAPTURE_CONTENT_ENV) {
            Some(value) => value.trim().eq_ignore_ascii_case("true"),
            None => config.capture_content.unwrap_or(false),
        };
        Ok(Some(TraceSettings {
            endpoint,
            protocol,
            headers,
            service_name: service_name.trim().to_owned(),
            resource,
            capture_content,
        }))
    }
}

/// The URL of the traces signal below a collector's base URL: `/v1/traces` appended for HTTP
/// (the OTLP exporter specification's rule), the base as is for gRPC.
fn signal_url(base: &str, protocol: ExportProtocol) -> String {
    match protocol {
        ExportProtocol::HttpProtobuf => format!("{}/v1/traces", base.trim().trim_end_matches('/')),
        ExportProtocol::Grpc => base.trim().to_owned(),
    }
}

/// `key=value,key2=value2` as the OpenTelemetry environment writes lists (W3C baggage
/// format: values percent-encoded); pairs without `=` or with an empty key are left out.
fn pairs(text: &str) -> BTreeMap<String, String> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| (key.to_owned(), percent_decode(value.trim())))
        })
        .collect()
}

/// `%XX` escapes decoded; a malformed escape is kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes
            .get(i + 1..i + 3)
            .filter(|_| bytes[i] == b'%')
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    fn resolve(
        config: Option<&TelemetryConfig>,
        vars: &[(&str, &str)],
    ) -> Result<Option<TraceSettings>, SettingsError> {
        TraceSettings::resolve(config, &env(vars))
    }

    #[test]
    fn tracing_is_off_without_an_endpoint() {
        assert_eq!(resolve(None, &[]), Ok(None));
        assert_eq!(resolve(None, &[(SERVICE_NAME_ENV, "x")]), Ok(None));
        assert_eq!(resolve(None, &[(ENDPOINT_ENV, "  ")]), Ok(None));
    }

    #[test]
    fn the_base_endpoint_gets_the_traces_path_and_the_signal_endpoint_is_used_as_is() {
        let on = resolve(None, &[(ENDPOINT_ENV, "http://c:4318/")])
            .unwrap()
            .unwrap();
        assert_eq!(on.endpoint, "http://c:4318/v1/traces");
        assert_eq!(on.protocol, ExportProtocol::HttpProtobuf);
        assert_eq!(on.service_name, DEFAULT_SERVICE_NAME);
        assert!(!on.capture_content);
        let on = resolve(
            None,
            &[
                (ENDPOINT_ENV, "http://c:4318"),
                (TRACES_ENDPOINT_ENV, "http://t:1/x"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(on.endpoint, "http://t:1/x");
        let grpc = resolve(
            None,
            &[(ENDPOINT_ENV, "http://c:4317"), (PROTOCOL_ENV, "grpc")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(grpc.endpoint, "http://c:4317");
        assert_eq!(grpc.protocol, ExportProtocol::Grpc);
    }

    #[test]
    fn the_environment_wins_over_the_config_key_by_key() {
        let config = TelemetryConfig {
            endpoint: Some("http://config:4318".into()),
            protocol: Some(ExportProtocol::Grpc),
            headers: BTreeMap::from([("a".into(), "config".into()), ("b".into(), "kept".into())]),
            service_name: Some("from-config".into()),
            capture_content: Some(true),
        };
        let only_config = resolve(Some(&config), &[]).unwrap().unwrap();
        assert_eq!(only_config.endpoint, "http://config:4318");
        assert_eq!(only_config.protocol, ExportProtocol::Grpc);
        assert_eq!(only_config.service_name, "from-config");
        assert!(only_config.capture_content);
        let both = resolve(
            Some(&config),
            &[
                (ENDPOINT_ENV, "http://env:4318"),
                (PROTOCOL_ENV, "http/protobuf"),
                (HEADERS_ENV, "a=env%20value,=skipped,novalue"),
                (SERVICE_NAME_ENV, "from-env"),
                (RESOURCE_ATTRIBUTES_ENV, "deployment.environment=ci,team=x"),
                (CAPTURE_CONTENT_ENV, "false"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(both.endpoint, "http://env:4318/v1/traces");
        assert_eq!(both.protocol, ExportProtocol::HttpProtobuf);
        assert_eq!(
            both.headers,
            BTreeMap::from([
                ("a".into(), "env value".into()),
                ("b".into(), "kept".into())
            ])
        );
        assert_eq!(both.service_name, "from-env");
        assert_eq!(both.resource.get("team").map(String::as_str), Some("x"));
        assert!(!both.capture_content);
    }

    #[test]
    fn sdk_disabled_turns_everything_off() {
        let config = TelemetryConfig {
            endpoint: Some("http://config:4318".into()),
            ..TelemetryConfig::default()
        };
        assert_eq!(
            resolve(
                Some(&config),
                &[(SDK_DISABLED_ENV, "TRUE"), (ENDPOINT_ENV, "http://e")]
            ),
            Ok(None)
        );
        assert!(
            resolve(Some(&config), &[(SDK_DISABLED_ENV, "false")])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_bad_protocol_or_endpoint_names_where_it_came_from() {
        let err = resolve(
            None,
            &[(ENDPOINT_ENV, "http://e"), (PROTOCOL_ENV, "http/json")],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL is `http/json`: traces are sent as `http/protobuf` or \
             `grpc`"
        );
        let config = TelemetryConfig {
            endpoint: Some("collector:4318".into()),
            ..TelemetryConfig::default()
        };
        let err = resolve(Some(&config), &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "telemetry.endpoint is `collector:4318`: an http:// or https:// URL was expected"
        );
    }

    #[test]
    fn the_config_section_refuses_unknown_keys_and_protocols() {
        let ok: TelemetryConfig =
            serde_json::from_str(r#"{"endpoint":"http://x","protocol":"grpc"}"#).unwrap();
        assert_eq!(ok.protocol, Some(ExportProtocol::Grpc));
        assert!(serde_json::from_str::<TelemetryConfig>(r#"{"endpoint":"x","port":1}"#).is_err());
        assert!(serde_json::from_str::<TelemetryConfig>(r#"{"protocol":"http/json"}"#).is_err());
    }
}
