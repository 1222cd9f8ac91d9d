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
pub use hosts::{HostListError, HostPattern, PrivateHost};
pub use search::{SearchBackend, SearchUrlError, check_search_url};
pub use toolset::{SearchUrlMissing, WebSearchConfig, WebToolset, WebToolsetConfig};
pub use web_search::{DEFAULT_RESULTS, MAX_RESULTS};

/// The default of `max_bytes`: the largest response body read.
pub const DEFAULT_MAX_BYTES: u64 = 2_000_000;

/// The default of `timeout`: a fetch's wall-clock limit, and the most a call may ask for.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

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

/// The toolset's tools: `web_fetch` and `web_search`, as `config` sets them; `search_key` is
/// the search backend's API key (Brave, Tavily), read from the environment by the caller.
pub fn web_tools(
    config: &WebToolsetConfig,
    search_key: Option<String>,
) -> Result<Vec<Arc<dyn Tool>>, WebError> {
    let max_bytes = config.max_bytes.max(1);
    let timeout = Duration::from_secs(config.timeout).max(Duration::from_secs(1));
    let policy = Arc::new(policy::UrlPolicy::new(
        config.allow.clone(),
        config.private_hosts.clone(),
    ));
    let fetcher = fetch::Fetcher::new(policy, max_bytes)?;
    let searcher = match &config.search {
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
                search_key.filter(|key| !key.trim().is_empty()),
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
