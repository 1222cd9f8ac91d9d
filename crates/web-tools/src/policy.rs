//! What the web toolset allows of a URL, decided without the network: the scheme (http and
//! https only), the port (80, 443, and a port written with the host in `allow`), and the host
//! when it is an IP literal or a `localhost` name (refused on private networks unless listed in
//! `private_hosts`). Names are checked again, address by address, when they are resolved
//! (`resolver.rs`); this is what `prepare` can know, and every redirect is checked the same way.

use std::net::IpAddr;

use golem_protocol::{ToolError, ToolErrorCode};
use url::Url;

use super::address::{Refusal, classify};
use super::hosts::{HostName, HostPattern, PrivateHost};

/// The hint every refusal of a private address ends with.
pub(crate) const PRIVATE_HINT: &str = "web_fetch does not reach loopback, private or other \
     special addresses unless the URL's host is listed in toolsets.web.private_hosts";

/// The toolset's `allow` and `private_hosts`.
#[derive(Debug, Clone, Default)]
pub(crate) struct UrlPolicy {
    allow: Vec<HostPattern>,
    private_hosts: Vec<PrivateHost>,
}

/// A URL that passed the checks: where it goes and what the lists say of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The host, normalized.
    pub host: HostName,
    /// The port, explicit or the scheme's.
    pub port: u16,
    /// Whether an `allow` entry matches the host on this port (the fetch is pre-approved).
    pub allowed: bool,
}

impl UrlPolicy {
    pub(crate) fn new(allow: Vec<HostPattern>, private_hosts: Vec<PrivateHost>) -> UrlPolicy {
        UrlPolicy {
            allow,
            private_hosts,
        }
    }

    pub(crate) fn allow(&self) -> &[HostPattern] {
        &self.allow
    }

    /// Checks a URL: scheme, port, and a host that is an IP literal or a `localhost` name.
    pub(crate) fn check(&self, url: &Url) -> Result<Target, ToolError> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!("only http and https URLs can be fetched, not `{scheme}:` ({url})"),
            ));
        }
        let Some(host) = url.host() else {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!("the URL {url} has no host"),
            ));
        };
        let host = HostName::of(&host);
        let port = url.port_or_known_default().unwrap_or(80);
        let allowed = self.allow.iter().any(|p| p.matches(&host, port));
        if port != 80 && port != 443 && !allowed {
            return Err(ToolError::new(
                ToolErrorCode::PermissionDenied,
                format!(
                    "refused {url}: port {port} is not allowed; web_fetch uses ports 80 and 443, \
                     and another port only for a host written with it in toolsets.web.allow \
                     (such as `{host}:{port}`)"
                ),
            ));
        }
        if !self.private_ok(&host) {
            match &host {
                HostName::Ip(ip) => {
                    if let Some(refusal) = classify(*ip) {
                        return Err(refused_literal(url, &refusal));
                    }
                }
                HostName::Name(name) if is_localhost(name) => {
                    return Err(ToolError::new(
                        ToolErrorCode::PermissionDenied,
                        format!(
                            "refused {url}: `{name}` names this machine (a loopback address); \
                             {PRIVATE_HINT}"
                        ),
                    ));
                }
                HostName::Name(_) => {}
            }
        }
        Ok(Target {
            host,
            port,
            allowed,
        })
    }

    /// Whether a URL whose host is `host` may reach private addresses.
    pub(crate) fn private_ok(&self, host: &HostName) -> bool {
        self.private_hosts.iter().any(|p| p.permits(host))
    }
}

/// `localhost`, and names under `.localhost` (RFC 6761: they resolve to loopback).
fn is_localhost(name: &str) -> bool {
    name == "localhost" || name.ends_with(".localhost")
}

/// The refusal of a URL whose host is a refused IP literal.
fn refused_literal(url: &Url, refusal: &Refusal) -> ToolError {
    ToolError::new(
        ToolErrorCode::PermissionDenied,
        format!("refused {url}: {refusal}; {PRIVATE_HINT}"),
    )
    .with_details(refusal_details(refusal.address))
}

/// The refused address, for `details`.
pub(crate) fn refusal_details(address: IpAddr) -> serde_json::Value {
    serde_json::json!({ "address": address.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], private: &[&str]) -> UrlPolicy {
        UrlPolicy::new(
            allow
                .iter()
                .map(|a| HostPattern::parse(a).unwrap())
                .collect(),
            private
                .iter()
                .map(|p| PrivateHost::parse(p).unwrap())
                .collect(),
        )
    }

    fn check(policy: &UrlPolicy, url: &str) -> Result<Target, ToolError> {
        policy.check(&Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}")))
    }

    fn refused(policy: &UrlPolicy, url: &str) -> ToolError {
        match check(policy, url) {
            Ok(target) => panic!("{url} passed: {target:?}"),
            Err(err) => err,
        }
    }

    #[test]
    fn ip_literals_in_every_notation_are_refused() {
        let open = policy(&[], &[]);
        for (url, address) in [
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://017700000001/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://127.0.1/", "127.0.0.1"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
            ("http://[::1]/", "::1"),
            ("http://[0:0:0:0:0:0:0:1]/", "::1"),
            ("http://0/", "0.0.0.0"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "169.254.169.254",
            ),
            ("http://0xa9fea9fe/", "169.254.169.254"),
            ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
            ("http://10.0.0.1/", "10.0.0.1"),
            ("http://192.168.0.1./", "192.168.0.1"),
            ("https://[fe80::1]/", "fe80::1"),
        ] {
            let err = refused(&open, url);
            assert_eq!(err.code, ToolErrorCode::PermissionDenied, "{url}");
            assert_eq!(
                err.details,
                Some(serde_json::json!({ "address": address })),
                "{url}: {}",
                err.message
            );
            assert!(err.message.contains(PRIVATE_HINT), "{}", err.message);
        }
        let err = refused(&open, "http://0x7f.1/");
        assert_eq!(
            err.message,
            format!(
                "refused http://127.0.0.1/: 127.0.0.1 is a loopback address (127.0.0.0/8); \
                 {PRIVATE_HINT}"
            )
        );
    }

    #[test]
    fn localhost_names_are_refused_unless_listed() {
        let open = policy(&[], &[]);
        for url in [
            "http://localhost/",
            "http://LOCALHOST./",
            "http://app.localhost/",
        ] {
            let err = refused(&open, url);
            assert_eq!(err.code, ToolErrorCode::PermissionDenied);
            assert!(
                err.message.contains("names this machine"),
                "{}",
                err.message
            );
        }
        let listed = policy(&[], &["localhost", "127.0.0.1"]);
        assert!(check(&listed, "http://localhost/").is_ok());
        assert!(check(&listed, "http://2130706433/").is_ok());
        assert!(check(&listed, "http://[::1]/").is_err());
    }

    #[test]
    fn schemes_and_ports() {
        let p = policy(&["docs.rs", "127.0.0.1:8080"], &["127.0.0.1"]);
        for url in ["file:///etc/passwd", "ftp://docs.rs/", "gopher://docs.rs/"] {
            assert_eq!(
                refused(&p, url).code,
                ToolErrorCode::InvalidArguments,
                "{url}"
            );
        }
        let err = refused(&p, "https://docs.rs:8443/");
        assert_eq!(err.code, ToolErrorCode::PermissionDenied);
        assert_eq!(
            err.message,
            "refused https://docs.rs:8443/: port 8443 is not allowed; web_fetch uses ports 80 \
             and 443, and another port only for a host written with it in toolsets.web.allow \
             (such as `docs.rs:8443`)"
        );
        assert!(
            refused(&p, "http://example.com:22/")
                .message
                .contains("port 22")
        );
        let ok = check(&p, "http://127.0.0.1:8080/x").unwrap();
        assert_eq!((ok.port, ok.allowed), (8080, true));
        let ok = check(&p, "https://docs.rs/std").unwrap();
        assert_eq!((ok.port, ok.allowed), (443, true));
        let ok = check(&p, "http://docs.rs:443/").unwrap();
        assert!(ok.allowed);
        let ok = check(&p, "https://example.com/").unwrap();
        assert_eq!((ok.port, ok.allowed), (443, false));
        assert!(!check(&p, "http://127.0.0.1/").unwrap().allowed);
    }
}
