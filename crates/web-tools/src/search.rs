//! The search backends of `web_search`, one request and one response shape each:
//!
//! - SearXNG: `GET {url}/search?q=…&format=json` → `results[] {title, url, content}` (the
//!   instance must allow the `json` format in its `settings.yml`).
//! - Brave: `GET {url}/res/v1/web/search?q=…&count=N` with `X-Subscription-Token` →
//!   `web.results[] {title, url, description}`; `url` defaults to
//!   `https://api.search.brave.com`.
//! - Tavily: `POST {url}/search` with `Authorization: Bearer …` and `{query, max_results}` →
//!   `results[] {title, url, content}`; `url` defaults to `https://api.tavily.com`.
//!
//! The backend's address is trusted configuration, written by the worker's author: it is not
//! subject to `web_fetch`'s address checks (a SearXNG instance on `127.0.0.1` is fine). Its
//! client still uses no proxy from the environment, follows no redirect, and reads at most
//! `max_bytes` within the toolset's timeout.

use std::fmt;
use std::time::Duration;

use golem_protocol::{ToolError, ToolErrorCode};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::content::size;
use super::fetch::{USER_AGENT, status_text};

/// The search service `web_search` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// A SearXNG instance's JSON API (`url` required).
    Searxng,
    /// The Brave Search API (`BRAVE_API_KEY`).
    Brave,
    /// The Tavily API (`TAVILY_API_KEY`).
    Tavily,
}

impl SearchBackend {
    /// The name in worker files.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchBackend::Searxng => "searxng",
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
        }
    }

    /// The environment variable that holds the API key, for backends that need one.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            SearchBackend::Searxng => None,
            SearchBackend::Brave => Some("BRAVE_API_KEY"),
            SearchBackend::Tavily => Some("TAVILY_API_KEY"),
        }
    }

    /// The address used when `url` is not given; `None` when it must be.
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            SearchBackend::Searxng => None,
            SearchBackend::Brave => Some("https://api.search.brave.com"),
            SearchBackend::Tavily => Some("https://api.tavily.com"),
        }
    }

    fn label(self) -> &'static str {
        match self {
            SearchBackend::Searxng => "SearXNG",
            SearchBackend::Brave => "Brave Search",
            SearchBackend::Tavily => "Tavily",
        }
    }
}

impl fmt::Display for SearchBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A search backend's `url` that is not an absolute http or https URL; it names the URL as
/// written (trimmed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchUrlError {
    /// A URL of another scheme, or without a host.
    #[error("must be an http or https URL such as http://127.0.0.1:8888, found \"{0}\"")]
    NotHttp(String),
    /// Not a URL at all.
    #[error(
        "must be an http or https URL such as http://127.0.0.1:8888, found \"{url}\" ({source})"
    )]
    Unparsable {
        /// The text.
        url: String,
        /// What the parser said.
        source: url::ParseError,
    },
}

/// Checks a backend's `url`: an absolute http or https URL. Returns it as written (trimmed).
pub fn check_search_url(text: &str) -> Result<String, SearchUrlError> {
    let text = text.trim();
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(text.to_owned())
        }
        Ok(_) => Err(SearchUrlError::NotHttp(text.to_owned())),
        Err(source) => Err(SearchUrlError::Unparsable {
            url: text.to_owned(),
            source,
        }),
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// A configured backend with its client.
#[derive(Debug)]
pub(crate) struct Searcher {
    client: reqwest::Client,
    backend: SearchBackend,
    base: Url,
    api_key: Option<String>,
    max_bytes: u64,
    timeout: Duration,
}

impl Searcher {
    pub(crate) fn new(
        backend: SearchBackend,
        base: Url,
        api_key: Option<String>,
        max_bytes: u64,
        timeout: Duration,
    ) -> Result<Searcher, reqwest::Error> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(USER_AGENT)
            .build()?;
        Ok(Searcher {
            client,
            backend,
            base,
            api_key,
            max_bytes,
            timeout,
        })
    }

    pub(crate) fn backend(&self) -> SearchBackend {
        self.backend
    }

    pub(crate) fn base(&self) -> &Url {
        &self.base
    }

    /// Why the backend cannot be used, when its key is missing.
    pub(crate) fn unusable(&self) -> Option<String> {
        let env = self.backend.key_env()?;
        self.api_key.is_none().then(|| {
            format!(
                "web_search uses {} (toolsets.web.search.backend: {}), which needs an API key in \
                 the environment variable {env}; it is not set",
                self.backend,
                self.backend.as_str()
            )
        })
    }

    /// `path` under the base URL (whose own path is kept).
    fn endpoint(&self, path: &str) -> Url {
        let mut base = self.base.clone();
        if !base.path().ends_with('/') {
            let with_slash = format!("{}/", base.path());
            base.set_path(&with_slash);
        }
        base.join(path).unwrap_or(base)
    }

    /// Searches for `query`, giving at most `count` hits.
    pub(crate) async fn search(&self, query: &str, count: usize) -> Result<Vec<Hit>, ToolError> {
        let request = match self.backend {
            SearchBackend::Searxng => {
                let mut url = self.endpoint("search");
                url.query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("format", "json");
                self.client.get(url)
            }
            SearchBackend::Brave => {
                let mut url = self.endpoint("res/v1/web/search");
                url.query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("count", &count.to_string());
                self.client.get(url).header(
                    "X-Subscription-Token",
                    self.api_key.as_deref().unwrap_or(""),
                )
            }
            SearchBackend::Tavily => {
                let body = json!({ "query": query, "max_results": count });
                self.client
                    .post(self.endpoint("search"))
                    .bearer_auth(self.api_key.as_deref().unwrap_or(""))
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.to_string())
            }
        }
        .header(ACCEPT, "application/json");
        let body = match tokio::time::timeout(self.timeout, self.send(request)).await {
            Ok(body) => body?,
            Err(_) => {
                return Err(ToolError::new(
                    ToolErrorCode::Timeout,
                    format!(
                        "{} did not answer within {} s (toolsets.web.timeout)",
                        self.backend,
                        self.timeout.as_secs()
                    ),
                ));
            }
        };
        let mut hits =
            parse_hits(self.backend, &body).map_err(|why| self.failed(&why.to_string()))?;
        hits.truncate(count);
        Ok(hits)
    }

    fn failed(&self, why: &str) -> ToolError {
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{} at {} {why}", self.backend, self.base),
        )
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, ToolError> {
        let mut response = request.send().await.map_err(|err| {
            let mut cause: &dyn std::error::Error = &err;
            while let Some(next) = cause.source() {
                cause = next;
            }
            self.failed(&format!("cannot be reached: {cause}"))
        })?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| self.failed(&format!("sent a broken response: {err}")))?
        {
            if (body.len() + chunk.len()) as u64 > self.max_bytes {
                return Err(self.failed(&format!(
                    "sent more than {} (toolsets.web.max_bytes)",
                    size(self.max_bytes)
                )));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let hint = match (self.backend, status.as_u16()) {
                (SearchBackend::Searxng, 403) => {
                    " (does the instance allow the JSON format? add `json` to `search.formats` \
                     in its settings.yml)"
                        .to_owned()
                }
                (_, 401 | 403) => format!(
                    " (is the API key in {} right?)",
                    self.backend.key_env().unwrap_or("the environment")
                ),
                (_, 429) => " (rate limited: try again later)".to_owned(),
                (_, 300..=399) => " (it redirects: set toolsets.web.search.url to where it \
                                   redirects to)"
                    .to_owned(),
                _ => String::new(),
            };
            let text = String::from_utf8_lossy(&body);
            let excerpt = golem_core::text::fold(text.trim(), 300);
            let mut why = format!("answered {}{hint}", status_text(status));
            if !excerpt.is_empty() {
                why.push_str(&format!(": {excerpt}"));
            }
            return Err(self.failed(&why));
        }
        serde_json::from_slice(&body)
            .map_err(|err| self.failed(&format!("did not answer with JSON: {err}")))
    }
}

/// A backend's JSON answer without the list of results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("answered without a `results` list")]
pub(crate) struct NoResults;

/// The hits of a backend's JSON answer.
pub(crate) fn parse_hits(backend: SearchBackend, body: &Value) -> Result<Vec<Hit>, NoResults> {
    let (results, snippet_key) = match backend {
        SearchBackend::Searxng | SearchBackend::Tavily => (body.get("results"), "content"),
        SearchBackend::Brave => (
            body.get("web")
                .map(|web| web.get("results").unwrap_or(&Value::Null)),
            "description",
        ),
    };
    let results = match results {
        Some(Value::Array(results)) => results.as_slice(),
        Some(Value::Null) | None if backend == SearchBackend::Brave => &[],
        _ => return Err(NoResults),
    };
    let text = |item: &Value, key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .map(plain)
            .unwrap_or_default()
    };
    Ok(results
        .iter()
        .filter_map(|item| {
            let url = text(item, "url");
            (!url.is_empty()).then(|| Hit {
                title: text(item, "title"),
                url,
                snippet: text(item, snippet_key),
            })
        })
        .collect())
}

/// A snippet as plain text: tags dropped (Brave marks matches with `<strong>`), the common
/// entities decoded, white space collapsed.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backend_answer_gives_hits() {
        let searxng = json!({"query": "q", "results": [
            {"title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language", "engine": "x"},
            {"title": "No URL", "content": "dropped"},
        ]});
        assert_eq!(
            parse_hits(SearchBackend::Searxng, &searxng).unwrap(),
            vec![Hit {
                title: "Rust".into(),
                url: "https://www.rust-lang.org/".into(),
                snippet: "A language".into()
            }]
        );
        let brave = json!({"type": "search", "web": {"results": [
            {"title": "Docs", "url": "https://docs.rs/", "description": "The <strong>docs</strong> &amp; more"},
        ]}});
        assert_eq!(
            parse_hits(SearchBackend::Brave, &brave).unwrap()[0].snippet,
            "The docs & more"
        );
        assert_eq!(
            parse_hits(SearchBackend::Brave, &json!({"type": "search"})).unwrap(),
            vec![]
        );
        let tavily = json!({"query": "q", "results": [
            {"title": "T", "url": "https://t.example/", "content": "c", "score": 0.9},
        ]});
        assert_eq!(parse_hits(SearchBackend::Tavily, &tavily).unwrap().len(), 1);
        assert_eq!(
            parse_hits(SearchBackend::Tavily, &json!({"error": "x"})).map_err(|e| e.to_string()),
            Err("answered without a `results` list".to_owned())
        );
    }

    #[test]
    fn search_urls_are_checked() {
        assert_eq!(
            check_search_url(" http://127.0.0.1:8888 "),
            Ok("http://127.0.0.1:8888".to_owned())
        );
        assert_eq!(
            check_search_url(" ftp://x ").unwrap_err().to_string(),
            "must be an http or https URL such as http://127.0.0.1:8888, found \"ftp://x\""
        );
        let unparsable = check_search_url("127.0.0.1:8888").unwrap_err();
        assert!(
            unparsable.to_string().starts_with(
                "must be an http or https URL such as http://127.0.0.1:8888, found \
                 \"127.0.0.1:8888\" ("
            ),
            "{unparsable}"
        );
        assert!(std::error::Error::source(&unparsable).is_some());
        assert!(check_search_url("").is_err());
    }

    #[test]
    fn endpoints_keep_the_base_path() {
        let searcher = |base: &str| {
            Searcher::new(
                SearchBackend::Searxng,
                Url::parse(base).unwrap(),
                None,
                1000,
                Duration::from_secs(1),
            )
            .unwrap()
        };
        assert_eq!(
            searcher("http://h:1").endpoint("search").as_str(),
            "http://h:1/search"
        );
        assert_eq!(
            searcher("http://h/searx").endpoint("search").as_str(),
            "http://h/searx/search"
        );
        assert_eq!(
            searcher("http://h/searx/")
                .endpoint("res/v1/web/search")
                .as_str(),
            "http://h/searx/res/v1/web/search"
        );
    }
}
