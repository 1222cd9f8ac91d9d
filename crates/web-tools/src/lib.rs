//! The `web` toolset: `web_fetch` (SSRF-safe fetching) and `web_search` (SearXNG, Brave or
//! Tavily).
//!
//! - `hosts.rs`: the `allow` entries ([`HostPattern`]: hosts whose fetches are pre-approved,
//!   `*.` for subdomains, with the ports they may use) and the `private_hosts` entries
//!   ([`PrivateHost`]: hosts that may reach private networks), parsed once from the worker
//!   file.
//! - `address.rs`: the classifier of refused addresses (loopback, private, link-local,
//!   unique-local, CGNAT, multicast, unspecified, documentation, cloud metadata and the IPv6
//!   forms of each IPv4 one), [`classify`].
//! - `policy.rs`: what can be decided about a URL without the network — scheme, port, an
//!   IP-literal or `localhost` host — used by `prepare` and again for every redirect.
//! - `resolver.rs`: the HTTP client's only resolver; each address a name resolves to is
//!   checked, and the client connects to exactly those addresses.
//! - `fetch.rs`: the client (no proxies from the environment, no automatic redirects), the
//!   redirect loop (at most 5, each checked), the size and time limits, readable errors.
//! - `content.rs`: HTML → markdown, JSON → `structured`, text → `text`, binary refused.
//! - `search.rs`: the backends' request and response shapes; `web_search.rs` and
//!   `web_fetch.rs` are the tools.

mod address;
mod content;
mod fetch;
mod hosts;
mod nesting;
mod policy;
mod resolver;
mod search;
mod toolset;
mod web_fetch;
mod web_search;

use std::sync::Arc;
use std::time::Duration;

use golem_core::tool::Tool;
use url::Url;

pub use address::{Range, Refusal, classify};
pub use fetch::MAX_REDIRECTS;
pub use hosts::{HostPattern, PrivateHost};
pub use search::{SearchBackend, check_search_url};
pub use toolset::{WebSearchConfig, WebToolset, WebToolsetConfig};
pub use web_search::{DEFAULT_RESULTS, MAX_RESULTS};

/// The default of `max_bytes`: the largest response body read.
pub const DEFAULT_MAX_BYTES: u64 = 2_000_000;

/// The default of `timeout`: a fetch's wall-clock limit, and the most a call may ask for.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The search backend of `web_search`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// Which service.
    pub backend: SearchBackend,
    /// Its address; `None` → the backend's default (SearXNG has none and needs one).
    pub url: Option<String>,
    /// The API key (Brave, Tavily), read from the environment by the caller.
    pub api_key: Option<String>,
}

/// The options of the `web` toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOptions {
    /// Hosts whose fetches are pre-approved (and ports other than 80 and 443 they may use).
    pub allow: Vec<HostPattern>,
    /// Hosts that may be fetched on private networks.
    pub private_hosts: Vec<PrivateHost>,
    /// The largest response body read, in bytes.
    pub max_bytes: u64,
    /// A fetch's wall-clock limit, and the most a call's `timeout` may ask for.
    pub timeout: Duration,
    /// The backend of `web_search`; `None` → `web_search` calls fail with an error naming the
    /// setting.
    pub search: Option<SearchOptions>,
}

impl Default for WebOptions {
    /// No host pre-approved, no private host, the default limits, no search backend.
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            private_hosts: Vec::new(),
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
            search: None,
        }
    }
}

/// Why the toolset cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The search backend's `url` is missing or not an http(s) URL.
    #[error("toolsets.web.search.url {0}")]
    SearchUrl(String),
    /// The HTTP client cannot be built (its TLS setup failed).
    #[error("the HTTP client cannot be built: {0}")]
    Client(#[from] reqwest::Error),
}

/// The toolset's tools: `web_fetch` and `web_search`.
pub fn web_tools(options: WebOptions) -> Result<Vec<Arc<dyn Tool>>, WebError> {
    let max_bytes = options.max_bytes.max(1);
    let timeout = options.timeout.max(Duration::from_secs(1));
    let policy = Arc::new(policy::UrlPolicy::new(options.allow, options.private_hosts));
    let fetcher = fetch::Fetcher::new(policy, max_bytes)?;
    let searcher = match options.search {
        None => None,
        Some(search) => {
            let url = match (&search.url, search.backend.default_url()) {
                (Some(url), _) => url.clone(),
                (None, Some(default)) => default.to_owned(),
                (None, None) => {
                    return Err(WebError::SearchUrl(format!(
                        "is needed for the {} backend (the address of the instance, such as \
                         http://127.0.0.1:8888)",
                        search.backend.as_str()
                    )));
                }
            };
            let url = check_search_url(&url)
                .ok()
                .and_then(|url| Url::parse(&url).ok())
                .ok_or_else(|| WebError::SearchUrl(format!("is not an http(s) URL: {url}")))?;
            Some(search::Searcher::new(
                search.backend,
                url,
                search.api_key.filter(|key| !key.trim().is_empty()),
                max_bytes,
                timeout,
            )?)
        }
    };
    Ok(vec![
        Arc::new(web_fetch::WebFetch::new(fetcher, timeout)),
        Arc::new(web_search::WebSearch::new(searcher)),
    ])
}
