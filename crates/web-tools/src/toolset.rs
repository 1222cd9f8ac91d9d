//! The `web` toolset as a worker file configures it (`toolsets.web`) and its place among the
//! toolsets: `web_fetch` and `web_search`, the search backend's API key read from the
//! environment when the worker is launched.

use std::fmt;

use golem_toolset::{BuildContext, Reach, Section, Tools, Toolset, ToolsetConfig, ToolsetError};
use schemars::JsonSchema;
use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::{
    DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, HostListError, HostPattern, MAX_REDIRECTS, PrivateHost,
    SearchBackend, check_search_url, web_tools,
};

/// `web_fetch` and `web_search`.
pub struct WebToolset;

/// The web toolset's options (`toolsets.web`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebToolsetConfig {
    /// Hosts whose fetches are pre-approved (`docs.rs`, `*.python.org`, `127.0.0.1:8080`);
    /// other hosts ask. A port other than 80 and 443 can be fetched only when written here.
    #[serde(default, deserialize_with = "host_patterns")]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow: Vec<HostPattern>,
    /// Hosts, addresses or networks (`10.0.0.0/8`) that may be fetched on private networks
    /// (none by default).
    #[serde(default, deserialize_with = "private_hosts")]
    #[schemars(with = "Option<Vec<String>>")]
    pub private_hosts: Vec<PrivateHost>,
    /// The largest response body read, in bytes (default 2000000, at least 1).
    #[serde(default = "default_max_bytes", deserialize_with = "positive_max_bytes")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub max_bytes: u64,
    /// A fetch's wall-clock limit in seconds, and the most a call may ask for (default 30).
    #[serde(
        default = "default_web_timeout",
        deserialize_with = "positive_web_secs"
    )]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout: u64,
    /// The backend of `web_search`; absent → `web_search` fails, naming this setting.
    #[serde(default)]
    pub search: Option<WebSearchConfig>,
}

impl Default for WebToolsetConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            private_hosts: Vec::new(),
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT.as_secs(),
            search: None,
        }
    }
}

/// `toolsets.web.search`: which service `web_search` asks, and where.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, try_from = "SearchSection")]
pub struct WebSearchConfig {
    /// `searxng`, `brave` (key in `BRAVE_API_KEY`) or `tavily` (key in `TAVILY_API_KEY`).
    pub backend: SearchBackend,
    /// The service's address: required for SearXNG (its instance), optional for Brave and
    /// Tavily (their public APIs by default). Trusted configuration: not subject to
    /// `web_fetch`'s address checks.
    #[serde(default)]
    pub url: Option<String>,
}

/// `toolsets.web.search` as written, before the backend and the URL are checked together.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchSection {
    /// `searxng`, `brave` (key in `BRAVE_API_KEY`) or `tavily` (key in `TAVILY_API_KEY`).
    backend: SearchBackend,
    /// The service's address: required for SearXNG (its instance), optional for Brave and
    /// Tavily (their public APIs by default).
    #[serde(default, deserialize_with = "search_url")]
    url: Option<String>,
}

/// A search backend without the `url` only it can be reached at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "must give `url` for the {} backend (the address of the instance, such as \
     http://127.0.0.1:8888)",
    .0.as_str()
)]
pub struct SearchUrlMissing(pub SearchBackend);

impl TryFrom<SearchSection> for WebSearchConfig {
    type Error = SearchUrlMissing;

    fn try_from(section: SearchSection) -> Result<Self, SearchUrlMissing> {
        if section.url.is_none() && section.backend.default_url().is_none() {
            return Err(SearchUrlMissing(section.backend));
        }
        Ok(WebSearchConfig {
            backend: section.backend,
            url: section.url,
        })
    }
}

impl ToolsetConfig for WebToolsetConfig {
    fn empty() -> Result<WebToolsetConfig, &'static str> {
        Ok(WebToolsetConfig::default())
    }
}

impl Toolset for WebToolset {
    type Config = WebToolsetConfig;

    fn build(config: &WebToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let search_key = config
            .search
            .as_ref()
            .and_then(|search| search.backend.key_env())
            .and_then(|name| std::env::var(name).ok());
        web_tools(config, search_key).map_err(|e| cx.worker_error(e))
    }

    fn reach(_: &WebToolsetConfig) -> Reach {
        Reach {
            web: true,
            ..Reach::default()
        }
    }

    /// The hosts pre-approved and those that may be private, the limits, and the search
    /// backend (with whether its API key is set).
    fn section(
        config: &WebToolsetConfig,
        _: &BuildContext<'_>,
    ) -> Result<Option<Section>, ToolsetError> {
        let list = |items: Vec<String>| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        let search = match &config.search {
            None => "none (web_search fails until toolsets.web.search is set)".to_owned(),
            Some(search) => {
                let url = search
                    .url
                    .as_deref()
                    .or(search.backend.default_url())
                    .unwrap_or_default();
                let key = match search.backend.key_env() {
                    None => String::new(),
                    Some(name) if std::env::var(name).is_ok_and(|v| !v.trim().is_empty()) => {
                        format!(", key in {name}")
                    }
                    Some(name) => format!(", warning: {name} is not set, so web_search fails"),
                };
                format!("{} at {url}{key}", search.backend.as_str())
            }
        };
        Ok(Some(Section {
            title: "Web".to_owned(),
            lines: vec![
                format!(
                    "  allow (pre-approved): {}",
                    list(config.allow.iter().map(ToString::to_string).collect())
                ),
                format!(
                    "  private hosts: {}",
                    list(
                        config
                            .private_hosts
                            .iter()
                            .map(ToString::to_string)
                            .collect()
                    )
                ),
                format!(
                    "  limits: {} bytes and {} s per fetch, {MAX_REDIRECTS} redirects",
                    config.max_bytes, config.timeout
                ),
                format!("  search: {search}"),
            ],
        }))
    }
}

fn default_max_bytes() -> u64 {
    DEFAULT_MAX_BYTES
}

fn default_web_timeout() -> u64 {
    DEFAULT_TIMEOUT.as_secs()
}

fn positive_max_bytes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    golem_toolset::config::at_least_one(deserializer, default_max_bytes(), "bytes")
}

fn positive_web_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    golem_toolset::config::at_least_one(deserializer, default_web_timeout(), "seconds")
}

fn host_patterns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<HostPattern>, D::Error> {
    parsed_list(
        deserializer,
        HostPattern::parse,
        "a host such as \"docs.rs\", \"*.python.org\" or \"127.0.0.1:8080\"",
    )
}

fn private_hosts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PrivateHost>, D::Error> {
    parsed_list(
        deserializer,
        PrivateHost::parse,
        "a host, an address or a network such as \"intranet.example\", \"10.1.2.3\" or \
         \"10.0.0.0/8\"",
    )
}

/// A list of strings, each parsed by `parse`; a bad entry is an error at its own line.
fn parsed_list<'de, D, T>(
    deserializer: D,
    parse: fn(&str) -> Result<T, HostListError>,
    what: &'static str,
) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(deserializer
        .deserialize_option(ParsedList { parse, what })?
        .unwrap_or_default())
}

/// Reads a list of strings, parsing each one where it stands.
struct ParsedList<T> {
    parse: fn(&str) -> Result<T, HostListError>,
    what: &'static str,
}

impl<'de, T> Visitor<'de> for ParsedList<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ParsedItem {
            parse: self.parse,
            what: self.what,
        })? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// One entry of a [`ParsedList`].
struct ParsedItem<T> {
    parse: fn(&str) -> Result<T, HostListError>,
    what: &'static str,
}

impl<'de, T> DeserializeSeed<'de> for ParsedItem<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        let text = String::deserialize(deserializer)?;
        (self.parse)(&text)
            .map_err(|why| serde::de::Error::custom(format!("must be {}: {why}", self.what)))
    }
}

fn search_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(None),
        Some(url) => check_search_url(&url)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}
