//! `web_fetch {url, method?, headers?, body?, timeout?}` → the page as markdown, JSON as
//! `structured`, other text as `text`. `prepare` parses the URL and checks what can be known
//! without the network (scheme, port, an IP-literal or `localhost` host, the headers), so a
//! refused URL is an error result before any prompt; the call is pre-approved when an `allow`
//! entry matches the host and port, and asks otherwise. `execute` fetches through `fetch.rs`,
//! where names are resolved and checked and redirects are checked again.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::content::size;
use super::fetch::{Fetcher, MAX_REDIRECTS, Request, SECRET_HEADERS};
use super::hosts::HostName;

pub(super) const NAME: &str = "web_fetch";

/// Headers the client sets itself, or that would change how the request travels.
const OWN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
    "expect",
];

/// How much of an error page the model sees.
const ERROR_EXCERPT_CHARS: usize = 1000;

/// The HTTP method (variants without doc comments, so that the schema is a plain `enum`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
enum FetchMethod {
    // Read a resource (the default).
    #[default]
    #[serde(rename = "GET")]
    Get,
    // Send `body` to it.
    #[serde(rename = "POST")]
    Post,
}

/// Fetch a URL over http or https.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The absolute http or https URL to fetch.
    url: String,
    /// GET (the default) or POST.
    #[serde(default)]
    method: FetchMethod,
    /// Request headers by name. `Authorization` and `Cookie` are sent only to pre-approved
    /// hosts.
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    /// The request body, with POST only. Its `Content-Type` is `application/json` when it is
    /// JSON and no header says otherwise, else `text/plain`.
    #[serde(default)]
    body: Option<String>,
    /// Seconds before the fetch is stopped (described with the toolset's limit at
    /// construction).
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
}

/// What a `web_fetch` call will request.
#[derive(Debug)]
pub struct WebFetchPlan {
    request: Request,
}

impl CallPlan for WebFetchPlan {}

/// The `web_fetch` tool.
#[derive(Debug)]
pub struct WebFetch {
    fetcher: Fetcher,
    timeout: Duration,
    description: String,
    schema: Value,
}

impl WebFetch {
    pub(super) fn new(fetcher: Fetcher, timeout: Duration) -> WebFetch {
        let mut schema = input_schema_for::<WebFetchArgs>();
        if let Some(Value::Object(property)) = schema.pointer_mut("/properties/timeout") {
            property.insert(
                "description".into(),
                Value::String(format!(
                    "Seconds before the fetch is stopped with a TIMEOUT error (default and at \
                     most {}: larger values are capped)",
                    timeout.as_secs()
                )),
            );
        }
        let allow = fetcher.policy().allow();
        let hosts = if allow.is_empty() {
            "Every fetch needs the user's approval".to_owned()
        } else {
            format!(
                "Fetches from {} are pre-approved; other hosts need the user's approval",
                list(allow)
            )
        };
        let description = format!(
            "Fetch a web page or an API over http or https. HTML comes back as markdown, JSON \
             as data, other text as text; binary content (images, PDFs, archives) is refused. \
             {hosts}. Addresses on private networks (localhost, 10.x, 192.168.x, link-local, \
             cloud metadata) are refused unless the worker allows them, ports other than 80 \
             and 443 likewise. Responses larger than {} and HTTP errors (4xx, 5xx) are \
             errors; at most {MAX_REDIRECTS} redirects are followed.",
            size(fetcher.max_bytes()),
        );
        WebFetch {
            fetcher,
            timeout,
            description,
            schema,
        }
    }

    fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorCode::InvalidArguments, message)
    }

    /// The request's headers, checked: names and values valid, none the client sets itself,
    /// and credentials only for a host in `allow`.
    fn headers(
        given: Option<BTreeMap<String, String>>,
        host: &HostName,
        allowed: bool,
    ) -> Result<HeaderMap, ToolError> {
        let mut headers = HeaderMap::new();
        for (name, value) in given.unwrap_or_default() {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Self::invalid(format!("`{name}` is not a valid header name")))?;
            if OWN_HEADERS.contains(&header.as_str()) {
                return Err(Self::invalid(format!(
                    "the `{name}` header is set by web_fetch itself; leave it out"
                )));
            }
            if SECRET_HEADERS.contains(&header.as_str()) && !allowed {
                return Err(ToolError::new(
                    ToolErrorCode::PermissionDenied,
                    format!(
                        "the `{name}` header carries credentials, which are sent only to hosts \
                         in toolsets.web.allow; {host} is not in it"
                    ),
                ));
            }
            let value = HeaderValue::from_str(&value).map_err(|_| {
                Self::invalid(format!(
                    "the value of the `{name}` header is not valid (no line breaks or control \
                     characters)"
                ))
            })?;
            headers.append(header, value);
        }
        Ok(headers)
    }
}

/// `a, b, c` of displayable items.
pub(super) fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl TypedTool for WebFetch {
    type Args = WebFetchArgs;
    type Plan = WebFetchPlan;

    fn name(&self) -> &str {
        NAME
    }

    /// The user may fetch too (`/web_fetch --url …` in a chat).
    fn execution(&self) -> ManualExecution {
        ManualExecution::both("Fetch a URL", Some("Web"))
    }

    fn kind(&self) -> golem_protocol::ToolKind {
        golem_protocol::ToolKind::Fetch
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn approval_policy(&self) -> Option<String> {
        let allow = self.fetcher.policy().allow();
        Some(if allow.is_empty() {
            "ask (no host in allow)".to_owned()
        } else {
            format!("pre-approved for {}; other hosts ask", list(allow))
        })
    }

    /// Parses and checks the URL and the headers once; decides by `allow`.
    async fn prepare(
        &self,
        args: WebFetchArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<WebFetchPlan>, ToolError> {
        let url = Url::parse(args.url.trim()).map_err(|err| {
            Self::invalid(format!(
                "`{}` is not an absolute URL ({err}); give one such as https://example.com/page",
                fold(&args.url, 200)
            ))
        })?;
        let target = self.fetcher.policy().check(&url)?;
        if (!url.username().is_empty() || url.password().is_some()) && !target.allowed {
            return Err(ToolError::new(
                ToolErrorCode::PermissionDenied,
                format!(
                    "the URL carries credentials (user:password@), which are sent only to \
                     hosts in toolsets.web.allow; {} is not in it",
                    target.host
                ),
            ));
        }
        let method = args.method;
        if method == FetchMethod::Get && args.body.is_some() {
            return Err(Self::invalid(
                "a body is sent with POST only: add \"method\": \"POST\" or leave the body out",
            ));
        }
        let mut headers = Self::headers(args.headers, &target.host, target.allowed)?;
        if let Some(body) = &args.body
            && !headers.contains_key(CONTENT_TYPE)
        {
            let json = serde_json::from_str::<Value>(body).is_ok();
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static(if json {
                    "application/json"
                } else {
                    "text/plain; charset=utf-8"
                }),
            );
        }
        let timeout = match args.timeout {
            Some(secs) => Duration::from_secs(secs.max(1)).min(self.timeout),
            None => self.timeout,
        };
        let (method, risk) = match method {
            FetchMethod::Get => (Method::GET, Risk::Low),
            FetchMethod::Post => (Method::POST, Risk::Medium),
        };
        let mut what = format!("{method} {}", fold(url.as_str(), 300));
        if let Some(body) = &args.body {
            what.push_str(&format!(" with a {} body", size(body.len() as u64)));
        }
        if !headers.is_empty() {
            let names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
            what.push_str(&format!(" (headers: {})", names.join(", ")));
        }
        let (requirement, description) = if target.allowed {
            (
                ApprovalRequirement::PreApproved,
                format!(
                    "{what}; pre-approved: {} is in toolsets.web.allow",
                    target.host
                ),
            )
        } else {
            (
                ApprovalRequirement::Ask,
                format!(
                    "{what}; asked because {} is not in toolsets.web.allow",
                    if target.port == 80 || target.port == 443 {
                        target.host.to_string()
                    } else {
                        format!("{}:{}", target.host, target.port)
                    }
                ),
            )
        };
        let plan = WebFetchPlan {
            request: Request {
                method,
                url,
                headers,
                body: args.body,
                pre_approved: target.allowed,
                timeout,
            },
        };
        Ok(PreparedCall::new(plan)
            .with_requirement(requirement)
            .with_description(description)
            .with_risk(risk))
    }

    async fn execute(
        &self,
        plan: WebFetchPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let request = plan.request;
        let asked = request.url.clone();
        let method = request.method.clone();
        let fetched = tokio::select! {
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(
                    ToolErrorCode::Interrupted,
                    format!("fetching {asked} was interrupted"),
                ));
            }
            fetched = self.fetcher.fetch(request) => fetched?,
        };
        let (url, fetched) = fetched;
        let code = fetched.code;
        let status = fetched.status.clone();
        let summary_tail = (url != asked).then(|| format!(" · redirected to {url}"));
        let shown = url.to_string();
        // Converting a large page takes a while: off the async threads.
        let converted = tokio::task::spawn_blocking(move || {
            let about = format!("{}, {}", fetched.mime(), size(fetched.size));
            (fetched.into_result(&shown), about)
        })
        .await
        .map_err(|err| {
            ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("converting the response of {url} failed: {err}"),
            )
        })?;
        let (result, about) = converted;
        if code >= 400 {
            let excerpt = match &result {
                Ok(value) => fold(value.to_model_text().trim(), ERROR_EXCERPT_CHARS),
                Err(_) => String::new(),
            };
            let mut message = format!("{method} {url} answered {status} ({about})");
            if !excerpt.is_empty() {
                message.push_str(":\n");
                message.push_str(&excerpt);
            }
            return Err(ToolError::new(ToolErrorCode::ExecutionError, message)
                .with_details(serde_json::json!({ "status": code })));
        }
        let mut value = result?;
        if let (Some(tail), Some(summary)) = (summary_tail, value.summary.as_mut()) {
            summary.push_str(&tail);
        }
        Ok(value)
    }
}
