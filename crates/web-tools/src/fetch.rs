//! One fetch, hop by hop: the HTTP client (no proxies from the environment, no automatic
//! redirects, names resolved only through `resolver.rs`), up to [`MAX_REDIRECTS`] redirects
//! each checked again like the first URL (`policy.rs`), the body read up to `max_bytes`, and
//! every failure as a `ToolError` a model can act on.
//!
//! Redirects: `301`/`302`/`303` turn a POST into a GET without its body, `307`/`308` keep both.
//! Across origins only the safelisted headers go on ([`CROSS_ORIGIN_HEADERS`]): `Authorization`,
//! `Cookie` and any custom header (an `X-Api-Key`) stay with the origin they were given for. A
//! fetch that was pre-approved (its host is in `allow`) follows a redirect only to a host in
//! `allow` too: the model cannot go through an open redirect of an allowed site to any host
//! without the user's approval. A fetch the user approved follows redirects to any host that
//! passes the address checks.

use std::sync::Arc;
use std::time::Duration;

use golem_protocol::{ToolError, ToolErrorCode};
use reqwest::header::{HeaderMap, LOCATION};
use reqwest::{Method, StatusCode};
use url::Url;

use super::content::{BodyKind, ContentType, Fetched, size};
use super::policy::{UrlPolicy, refusal_details};
use super::resolver::{AddressRefused, CheckedResolver, NotResolved};

/// The most redirects one fetch follows.
pub const MAX_REDIRECTS: usize = 5;

/// The headers that carry credentials: sent only to hosts in `allow` (and, like every header
/// but the safelisted ones, never across a redirect to another origin).
pub(crate) const SECRET_HEADERS: &[&str] = &["authorization", "cookie"];

/// The headers a redirect carries to another origin (the CORS-safelisted request headers);
/// every other header given for the first URL stays behind.
pub(crate) const CROSS_ORIGIN_HEADERS: &[&str] = &[
    "accept",
    "accept-language",
    "content-language",
    "content-type",
];

/// The user agent of every request.
pub(crate) const USER_AGENT: &str = concat!("golem-forge/", env!("CARGO_PKG_VERSION"));

/// A request as `prepare` checked it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<String>,
    /// Whether the call was pre-approved by `allow` (redirects then stay within `allow`).
    pub pre_approved: bool,
    pub timeout: Duration,
}

/// The client and the rules every hop follows.
#[derive(Debug)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    policy: Arc<UrlPolicy>,
    max_bytes: u64,
}

impl Fetcher {
    /// A client whose every connection goes through the checked resolver.
    pub(crate) fn new(policy: Arc<UrlPolicy>, max_bytes: u64) -> Result<Fetcher, reqwest::Error> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(CheckedResolver::new(policy.clone())))
            .build()?;
        Ok(Fetcher {
            client,
            policy,
            max_bytes,
        })
    }

    pub(crate) fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    pub(crate) fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Fetches `request`, following redirects, within its timeout.
    pub(crate) async fn fetch(&self, request: Request) -> Result<(Url, Fetched), ToolError> {
        let timeout = request.timeout;
        let shown = request.url.to_string();
        match tokio::time::timeout(timeout, self.follow(request)).await {
            Ok(result) => result,
            Err(_) => Err(timed_out(&shown, timeout)),
        }
    }

    async fn follow(&self, request: Request) -> Result<(Url, Fetched), ToolError> {
        let Request {
            mut method,
            mut url,
            mut headers,
            mut body,
            pre_approved,
            timeout,
        } = request;
        let shown = url.to_string();
        let first = url.clone();
        let mut redirects = 0;
        loop {
            let mut builder = self
                .client
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = builder
                .send()
                .await
                .map_err(|e| send_error(&url, &e, &shown, timeout))?;
            let status = response.status();
            let location = response.headers().get(LOCATION).cloned();
            let redirect = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
            let (true, Some(location)) = (redirect, location) else {
                let fetched = self.read(response, &url, &shown, timeout).await?;
                return Ok((url, fetched));
            };
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!("{first} redirected more than {MAX_REDIRECTS} times; stopped at {url}"),
                ));
            }
            let next = location
                .to_str()
                .ok()
                .and_then(|location| url.join(location).ok())
                .ok_or_else(|| {
                    ToolError::new(
                        ToolErrorCode::ExecutionError,
                        format!("{url} redirected to an invalid location ({location:?})"),
                    )
                })?;
            let target = self
                .policy
                .check(&next)
                .map_err(|err| redirect_refused(&url, err))?;
            if pre_approved && !target.allowed {
                return Err(ToolError::new(
                    ToolErrorCode::PermissionDenied,
                    format!(
                        "{url} redirected to {next}, whose host is not in toolsets.web.allow; \
                         this fetch was pre-approved for the hosts in allow only. Call \
                         web_fetch with {next} to ask the user for it"
                    ),
                ));
            }
            if !same_origin(&url, &next) {
                let staying: Vec<_> = headers
                    .keys()
                    .filter(|name| !CROSS_ORIGIN_HEADERS.contains(&name.as_str()))
                    .cloned()
                    .collect();
                for name in staying {
                    headers.remove(name);
                }
            }
            if status == StatusCode::SEE_OTHER
                || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST)
            {
                method = Method::GET;
                body = None;
                headers.remove(reqwest::header::CONTENT_TYPE);
            }
            url = next;
        }
    }

    /// Reads the body up to `max_bytes`; a binary body whose size is known is left unread.
    async fn read(
        &self,
        mut response: reqwest::Response,
        url: &Url,
        shown: &str,
        timeout: Duration,
    ) -> Result<Fetched, ToolError> {
        let code = response.status().as_u16();
        let status = status_text(response.status());
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(ContentType::parse);
        let declared = response.content_length();
        let binary = content_type
            .as_ref()
            .is_some_and(|c| c.kind() == BodyKind::Binary);
        if let (true, Some(declared)) = (binary, declared) {
            return Ok(Fetched {
                code,
                status,
                content_type,
                body: Vec::new(),
                size: declared,
            });
        }
        if let Some(declared) = declared
            && declared > self.max_bytes
        {
            return Err(too_large(
                url,
                &format!("is {}", size(declared)),
                self.max_bytes,
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| read_error(url, &e, shown, timeout))?
        {
            if (body.len() + chunk.len()) as u64 > self.max_bytes {
                if binary {
                    // Its size is all that is reported; the result says "more than".
                    return Err(ToolError::new(
                        ToolErrorCode::ExecutionError,
                        format!(
                            "{url} is binary content ({}, more than {}); web_fetch returns \
                             HTML, JSON and other text only",
                            content_type.as_ref().map_or("", |c| c.mime.as_str()),
                            size(self.max_bytes)
                        ),
                    ));
                }
                return Err(too_large(
                    url,
                    &format!("was cut at {} bytes", self.max_bytes),
                    self.max_bytes,
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let size = body.len() as u64;
        Ok(Fetched {
            code,
            status,
            content_type,
            body,
            size,
        })
    }
}

/// `200 OK`, `404 Not Found`, `299` for a code without a reason.
pub(crate) fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

fn too_large(url: &Url, what: &str, max_bytes: u64) -> ToolError {
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!(
            "the response of {url} {what}: larger than the limit of {max_bytes} bytes \
             (toolsets.web.max_bytes); nothing of it is returned"
        ),
    )
    .with_details(serde_json::json!({ "maxBytes": max_bytes }))
}

pub(crate) fn timed_out(url: &str, timeout: Duration) -> ToolError {
    ToolError::new(
        ToolErrorCode::Timeout,
        format!(
            "fetching {url} took longer than {} s and was stopped (the call's timeout, at most \
             toolsets.web.timeout)",
            timeout.as_secs()
        ),
    )
}

/// A redirect the checks refuse: `PERMISSION_DENIED` (the model's arguments were fine).
fn redirect_refused(from: &Url, err: ToolError) -> ToolError {
    ToolError {
        code: ToolErrorCode::PermissionDenied,
        message: format!("{from} redirected; {}", err.message),
        ..err
    }
}

/// The innermost source of an error, in words.
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// The error of a request that got no response.
pub(crate) fn send_error(
    url: &Url,
    err: &reqwest::Error,
    shown: &str,
    timeout: Duration,
) -> ToolError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if let Some(refused) = current.downcast_ref::<AddressRefused>() {
            return ToolError::new(
                ToolErrorCode::PermissionDenied,
                format!("refused {url}: {refused}"),
            )
            .with_details(refusal_details(refused.refusal.address));
        }
        if let Some(unresolved) = current.downcast_ref::<NotResolved>() {
            return ToolError::new(ToolErrorCode::ExecutionError, unresolved.to_string());
        }
        source = current.source();
    }
    if err.is_timeout() {
        return timed_out(shown, timeout);
    }
    let what = if err.is_connect() {
        "cannot connect to"
    } else {
        "the request failed for"
    };
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("{what} {url}: {}", root_cause(err)),
    )
}

fn read_error(url: &Url, err: &reqwest::Error, shown: &str, timeout: Duration) -> ToolError {
    if err.is_timeout() {
        return timed_out(shown, timeout);
    }
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("reading the response of {url} failed: {}", root_cause(err)),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::hosts::{HostPattern, PrivateHost};

    /// A listener on 127.0.0.1 that counts the connections it gets and answers none.
    async fn counting_listener() -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        (port, count)
    }

    fn fetcher(allow: &str, private: &[&str]) -> Fetcher {
        let policy = UrlPolicy::new(
            vec![HostPattern::parse(allow).unwrap()],
            private
                .iter()
                .map(|p| PrivateHost::parse(p).unwrap())
                .collect(),
        );
        Fetcher::new(Arc::new(policy), 1000).unwrap()
    }

    fn request(url: &str) -> Request {
        Request {
            method: Method::GET,
            url: Url::parse(url).unwrap(),
            headers: HeaderMap::new(),
            body: None,
            pre_approved: true,
            timeout: Duration::from_secs(5),
        }
    }

    /// The client itself refuses a name that resolves to a private address, whatever got
    /// past `prepare`: its resolver checks every address, and nothing connects.
    #[tokio::test]
    async fn the_client_refuses_names_that_resolve_to_private_addresses() {
        let (port, connections) = counting_listener().await;
        let url = format!("http://localhost:{port}/");
        let unlisted = fetcher(&format!("localhost:{port}"), &[]);
        let err = unlisted.fetch(request(&url)).await.unwrap_err();
        assert_eq!(err.code, ToolErrorCode::PermissionDenied, "{err}");
        assert!(
            err.message
                .starts_with(&format!("refused {url}: `localhost` resolves to ")),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("a loopback address"),
            "{}",
            err.message
        );
        assert_eq!(connections.load(Ordering::SeqCst), 0);

        // Listed, the same name connects (the listener hangs up: a send error, not a refusal).
        let listed = fetcher(&format!("localhost:{port}"), &["localhost"]);
        let err = listed.fetch(request(&url)).await.unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError, "{err}");
        assert!(connections.load(Ordering::SeqCst) >= 1);
    }
}
