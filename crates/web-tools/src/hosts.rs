//! The host lists of the web toolset, parsed once from the worker file:
//!
//! - [`HostPattern`] (`allow`): a host (`docs.rs`, `127.0.0.1`, `[::1]`) or `*.` and a domain
//!   for its subdomains (`*.python.org` matches `docs.python.org`, not `python.org`), with an
//!   optional port (`127.0.0.1:8080`). Without a port it matches ports 80 and 443; with one,
//!   that port only — and only a port written here can be fetched besides 80 and 443.
//! - [`PrivateHost`] (`private_hosts`): a host name, `*.` and a domain, an IP address or a
//!   network in CIDR notation (`10.0.0.0/8`); a URL whose host matches may reach addresses on
//!   private networks.
//!
//! Host names are compared as the URL parser writes them (WHATWG: lowercase, IDNA to
//! punycode, IPv4 in any notation as dotted decimal, a trailing dot dropped), so that
//! `0x7f.1` in a list is `127.0.0.1`, as it is in a URL.

use std::fmt;
use std::net::IpAddr;

use url::Host;

use super::address::in_network;

/// A host as the URL parser normalizes it; names lose a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostName {
    /// A domain name.
    Name(String),
    /// An IP address.
    Ip(IpAddr),
}

impl HostName {
    /// The host of a parsed URL.
    pub(crate) fn of<S: AsRef<str>>(host: &Host<S>) -> HostName {
        match host {
            Host::Domain(name) => HostName::Name(name.as_ref().trim_end_matches('.').to_owned()),
            Host::Ipv4(ip) => HostName::Ip(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => HostName::Ip(IpAddr::V6(*ip)),
        }
    }

    /// A host name as a DNS resolver is asked for it.
    pub(crate) fn of_name(name: &str) -> HostName {
        match name.parse::<IpAddr>() {
            Ok(ip) => HostName::Ip(ip),
            Err(_) => HostName::Name(name.trim_end_matches('.').to_ascii_lowercase()),
        }
    }

    /// Parses a host as a list entry writes it; `[…]` around IPv6 is optional.
    fn parse(text: &str) -> Result<HostName, HostListError> {
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        if let Ok(ip) = inner.parse::<IpAddr>() {
            return Ok(HostName::Ip(ip));
        }
        match Host::parse(text) {
            Ok(host) => Ok(HostName::of(&host)),
            Err(source) => Err(HostListError::BadHost {
                entry: text.to_owned(),
                source,
            }),
        }
    }
}

impl fmt::Display for HostName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostName::Name(name) => f.write_str(name),
            HostName::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            HostName::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Which hosts a list entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hosts {
    /// One host.
    Exact(HostName),
    /// Every subdomain of a domain (`*.python.org`), not the domain itself.
    Subdomains(String),
}

impl Hosts {
    fn parse(text: &str) -> Result<Hosts, HostListError> {
        if let Some(domain) = text.strip_prefix("*.") {
            return match HostName::parse(domain)? {
                HostName::Name(name) if !name.is_empty() && !name.contains('*') => {
                    Ok(Hosts::Subdomains(name))
                }
                _ => Err(HostListError::NoDomainAfterStar(text.to_owned())),
            };
        }
        if text.contains('*') {
            return Err(HostListError::StarInside(text.to_owned()));
        }
        HostName::parse(text).map(Hosts::Exact)
    }

    fn matches(&self, host: &HostName) -> bool {
        match (self, host) {
            (Hosts::Exact(exact), host) => exact == host,
            (Hosts::Subdomains(domain), HostName::Name(name)) => name
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Hosts::Subdomains(_), HostName::Ip(_)) => false,
        }
    }
}

impl fmt::Display for Hosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hosts::Exact(host) => write!(f, "{host}"),
            Hosts::Subdomains(domain) => write!(f, "*.{domain}"),
        }
    }
}

/// Why an entry of `allow` or `private_hosts` is not one; each names the entry as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostListError {
    /// An empty entry.
    #[error("must not be empty")]
    Empty,
    /// A URL's scheme in front of the host.
    #[error(
        "`{entry}`: write the host only, without `{scheme}://` ({list} lists hosts, and \
         web_fetch takes http and https)"
    )]
    Scheme {
        /// The entry.
        entry: String,
        /// The scheme written.
        scheme: String,
        /// The list (`allow`, `private_hosts`).
        list: &'static str,
    },
    /// A path after the host.
    #[error("`{entry}`: write the host only, without a path ({list} lists hosts)")]
    Path {
        /// The entry.
        entry: String,
        /// The list.
        list: &'static str,
    },
    /// White space or `@`: not a host at all.
    #[error("`{0}` is not a host name")]
    NotAHost(String),
    /// The URL parser refuses the host.
    #[error("`{entry}` is not a host name ({source})")]
    BadHost {
        /// The entry (its host part).
        entry: String,
        /// What the parser said.
        source: url::ParseError,
    },
    /// `*.` with no domain name after it.
    #[error("`{0}`: `*.` must be followed by a domain name, as in `*.python.org`")]
    NoDomainAfterStar(String),
    /// `*` anywhere but in a leading `*.`.
    #[error(
        "`{0}`: `*` may only start a pattern, as `*.` before a domain (`*.python.org` for its \
         subdomains)"
    )]
    StarInside(String),
    /// `[` of an IPv6 address without its `]`.
    #[error("`{0}`: the `[` of an IPv6 address is not closed")]
    UnclosedBracket(String),
    /// Something after `]` that is not `:PORT`.
    #[error("`{0}` is not a host or host:port")]
    NotHostPort(String),
    /// A port outside 1 to 65535.
    #[error("`{entry}`: the port must be a number from 1 to 65535, found \"{port}\"")]
    BadPort {
        /// The entry.
        entry: String,
        /// The port as written.
        port: String,
    },
    /// A network whose address part is not an IP address.
    #[error("`{0}`: a network is an IP address and a prefix length, as `10.0.0.0/8`")]
    BadNetwork(String),
    /// A prefix length beyond the address's bits.
    #[error("`{entry}`: the prefix length must be a number from 0 to {max}")]
    BadPrefix {
        /// The entry.
        entry: String,
        /// 32 or 128.
        max: u8,
    },
    /// A port in `private_hosts`.
    #[error(
        "`{0}`: private_hosts lists hosts without ports (a port other than 80 and 443 is \
         written in allow)"
    )]
    PortInPrivateHosts(String),
}

/// What is wrong with a list entry that names more than a host.
fn not_a_host(text: &str, list: &'static str) -> Option<HostListError> {
    if text.is_empty() {
        return Some(HostListError::Empty);
    }
    if let Some((scheme, _)) = text.split_once("://") {
        return Some(HostListError::Scheme {
            entry: text.to_owned(),
            scheme: scheme.to_owned(),
            list,
        });
    }
    if text.contains('/') && list == "allow" {
        return Some(HostListError::Path {
            entry: text.to_owned(),
            list,
        });
    }
    if text.chars().any(|c| c.is_whitespace() || c == '@') {
        return Some(HostListError::NotAHost(text.to_owned()));
    }
    None
}

/// An `allow` entry: hosts whose fetches are pre-approved, and the port they may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    hosts: Hosts,
    port: Option<u16>,
}

impl HostPattern {
    /// Parses an entry: `docs.rs`, `*.python.org`, `127.0.0.1:8080`, `[::1]:8080`.
    pub fn parse(text: &str) -> Result<HostPattern, HostListError> {
        let text = text.trim();
        if let Some(problem) = not_a_host(text, "allow") {
            return Err(problem);
        }
        let (host, port) = split_port(text)?;
        Ok(HostPattern {
            hosts: Hosts::parse(host)?,
            port,
        })
    }

    /// The port written in the entry, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Whether the entry matches `host` on `port`: the port written, else 80 or 443.
    pub(crate) fn matches(&self, host: &HostName, port: u16) -> bool {
        let port_ok = match self.port {
            Some(own) => own == port,
            None => port == 80 || port == 443,
        };
        port_ok && self.hosts.matches(host)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.hosts),
            None => write!(f, "{}", self.hosts),
        }
    }
}

/// Splits `host:port` (`[v6]:port`); a bare IPv6 address has no port.
fn split_port(text: &str) -> Result<(&str, Option<u16>), HostListError> {
    let port_text = if let Some(rest) = text.strip_prefix('[') {
        match rest.split_once(']') {
            Some((_, "")) => None,
            Some((_, after)) => match after.strip_prefix(':') {
                Some(port) => Some(port),
                None => return Err(HostListError::NotHostPort(text.to_owned())),
            },
            None => return Err(HostListError::UnclosedBracket(text.to_owned())),
        }
    } else if text.matches(':').count() == 1 {
        text.rsplit_once(':').map(|(_, port)| port)
    } else {
        None
    };
    let Some(port_text) = port_text else {
        return Ok((text, None));
    };
    let host = text.get(..text.len() - port_text.len() - 1).unwrap_or(text);
    match port_text.parse::<u16>() {
        Ok(port) if port > 0 => Ok((host, Some(port))),
        _ => Err(HostListError::BadPort {
            entry: text.to_owned(),
            port: port_text.to_owned(),
        }),
    }
}

/// A `private_hosts` entry: hosts that may be reached on private networks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateHost(Private);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Private {
    Hosts(Hosts),
    Network(IpAddr, u8),
}

impl PrivateHost {
    /// Parses an entry: `intranet.example`, `*.corp.example`, `10.1.2.3`, `::1`, `10.0.0.0/8`.
    pub fn parse(text: &str) -> Result<PrivateHost, HostListError> {
        let text = text.trim();
        if let Some(problem) = not_a_host(text, "private_hosts") {
            return Err(problem);
        }
        if let Some((network, prefix)) = text.split_once('/') {
            let Ok(network) = network.parse::<IpAddr>() else {
                return Err(HostListError::BadNetwork(text.to_owned()));
            };
            let max = if network.is_ipv4() { 32 } else { 128 };
            return match prefix.parse::<u8>() {
                Ok(prefix) if prefix <= max => Ok(PrivateHost(Private::Network(network, prefix))),
                _ => Err(HostListError::BadPrefix {
                    entry: text.to_owned(),
                    max,
                }),
            };
        }
        let is_bare_v6 = text.parse::<IpAddr>().is_ok();
        if !is_bare_v6 && ((text.contains(':') && !text.starts_with('[')) || text.contains("]:")) {
            return Err(HostListError::PortInPrivateHosts(text.to_owned()));
        }
        Ok(PrivateHost(Private::Hosts(Hosts::parse(text)?)))
    }

    /// Whether a URL whose host is `host` may reach private addresses.
    pub(crate) fn permits(&self, host: &HostName) -> bool {
        match (&self.0, host) {
            (Private::Hosts(hosts), host) => hosts.matches(host),
            (Private::Network(network, prefix), HostName::Ip(ip)) => {
                in_network(*ip, *network, *prefix)
            }
            (Private::Network(..), HostName::Name(_)) => false,
        }
    }
}

impl fmt::Display for PrivateHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Private::Hosts(hosts) => write!(f, "{hosts}"),
            Private::Network(network, prefix) => write!(f, "{network}/{prefix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> HostName {
        HostName::parse(text).unwrap()
    }

    fn pattern(text: &str) -> HostPattern {
        HostPattern::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn allow_entries_match_hosts_and_ports() {
        let docs = pattern("docs.rs");
        assert!(docs.matches(&host("docs.rs"), 443));
        assert!(docs.matches(&host("DOCS.rs."), 80));
        assert!(!docs.matches(&host("docs.rs"), 8080));
        assert!(!docs.matches(&host("x.docs.rs"), 443));
        let python = pattern("*.python.org");
        assert!(python.matches(&host("docs.python.org"), 443));
        assert!(python.matches(&host("a.b.python.org"), 443));
        assert!(!python.matches(&host("python.org"), 443));
        assert!(!python.matches(&host("evilpython.org"), 443));
        let local = pattern("127.0.0.1:8080");
        assert!(local.matches(&host("127.0.0.1"), 8080));
        assert!(!local.matches(&host("127.0.0.1"), 80));
        assert!(pattern("0x7f.1:8080").matches(&host("127.0.0.1"), 8080));
        assert!(pattern("[::1]:81").matches(&host("::1"), 81));
        assert!(pattern("::1").matches(&host("[::1]"), 443));
        assert_eq!(
            pattern("Bücher.example").to_string(),
            "xn--bcher-kva.example"
        );
        assert_eq!(pattern(" [::1]:81 ").to_string(), "[::1]:81");
        assert_eq!(pattern("*.Python.org").to_string(), "*.python.org");
    }

    #[test]
    fn bad_allow_entries_say_why() {
        for (text, message) in [
            ("", "must not be empty"),
            (
                "https://docs.rs",
                "`https://docs.rs`: write the host only, without `https://` (allow lists hosts, \
                 and web_fetch takes http and https)",
            ),
            (
                "docs.rs/std",
                "`docs.rs/std`: write the host only, without a path (allow lists hosts)",
            ),
            (
                "docs.*",
                "`docs.*`: `*` may only start a pattern, as `*.` before a domain \
                 (`*.python.org` for its subdomains)",
            ),
            (
                "*",
                "`*`: `*` may only start a pattern, as `*.` before a domain (`*.python.org` \
                 for its subdomains)",
            ),
            (
                "*.127.0.0.1",
                "`*.127.0.0.1`: `*.` must be followed by a domain name, as in `*.python.org`",
            ),
            (
                "docs.rs:http",
                "`docs.rs:http`: the port must be a number from 1 to 65535, found \"http\"",
            ),
            (
                "docs.rs:0",
                "`docs.rs:0`: the port must be a number from 1 to 65535, found \"0\"",
            ),
            ("[::1", "`[::1`: the `[` of an IPv6 address is not closed"),
            ("a b", "`a b` is not a host name"),
            ("user@docs.rs", "`user@docs.rs` is not a host name"),
        ] {
            assert_eq!(
                HostPattern::parse(text).map_err(|e| e.to_string()),
                Err(message.to_owned()),
                "{text}"
            );
        }
        let err = HostPattern::parse("exa%mple.com").unwrap_err();
        let HostListError::BadHost { entry, source } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(entry, "exa%mple.com");
        assert_eq!(
            err.to_string(),
            format!("`exa%mple.com` is not a host name ({source})")
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn private_hosts_match_names_addresses_and_networks() {
        let private = |text: &str| PrivateHost::parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert!(private("localhost").permits(&host("localhost")));
        assert!(!private("localhost").permits(&host("127.0.0.1")));
        assert!(private("127.0.0.1").permits(&host("127.0.0.1")));
        assert!(private("2130706433").permits(&host("127.0.0.1")));
        assert!(private("::1").permits(&host("::1")));
        assert!(private("[::1]").permits(&host("::1")));
        assert!(private("10.0.0.0/8").permits(&host("10.9.8.7")));
        assert!(!private("10.0.0.0/8").permits(&host("11.0.0.1")));
        assert!(!private("10.0.0.0/8").permits(&host("ten.example")));
        assert!(private("fd00::/8").permits(&host("fd12::1")));
        assert!(private("*.corp.example").permits(&host("wiki.corp.example")));
        assert_eq!(private("10.0.0.0/8").to_string(), "10.0.0.0/8");
        for (text, message) in [
            (
                "localhost:8080",
                "`localhost:8080`: private_hosts lists hosts without ports (a port other than \
                 80 and 443 is written in allow)",
            ),
            (
                "[::1]:8080",
                "`[::1]:8080`: private_hosts lists hosts without ports (a port other than 80 \
                 and 443 is written in allow)",
            ),
            (
                "10.0.0.0/33",
                "`10.0.0.0/33`: the prefix length must be a number from 0 to 32",
            ),
            (
                "intranet/8",
                "`intranet/8`: a network is an IP address and a prefix length, as `10.0.0.0/8`",
            ),
            (
                "http://intranet",
                "`http://intranet`: write the host only, without `http://` (private_hosts \
                 lists hosts, and web_fetch takes http and https)",
            ),
        ] {
            assert_eq!(
                PrivateHost::parse(text).map_err(|e| e.to_string()),
                Err(message.to_owned()),
                "{text}"
            );
        }
    }
}
