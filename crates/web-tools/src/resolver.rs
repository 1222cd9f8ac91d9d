//! The resolver of `web_fetch`'s HTTP client (`reqwest`'s `dns_resolver`): every name the
//! client connects to is looked up here, once, and every address it resolves to is checked
//! against the address classifier; one refused address refuses the name (unless the name is
//! listed in `private_hosts`). The client connects to the addresses returned, so the address
//! checked is the address used: no second lookup happens between check and connection.
//!
//! A refusal travels through `reqwest`'s error as an [`AddressRefused`], which the fetch finds
//! in the error's sources and reports as `PERMISSION_DENIED`.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::{Refusal, classify};
use super::hosts::HostName;
use super::policy::{PRIVATE_HINT, UrlPolicy};

/// A name that resolved to an address the toolset refuses.
#[derive(Debug)]
pub(crate) struct AddressRefused {
    /// The name looked up.
    pub host: String,
    /// The first refused address and why.
    pub refusal: Refusal,
}

impl fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` resolves to {}; {PRIVATE_HINT}",
            self.host, self.refusal
        )
    }
}

impl std::error::Error for AddressRefused {}

/// A name that could not be resolved.
#[derive(Debug)]
pub(crate) struct NotResolved {
    host: String,
    why: String,
}

impl fmt::Display for NotResolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot resolve `{}`: {}", self.host, self.why)
    }
}

impl std::error::Error for NotResolved {}

/// Looks names up with the system resolver and refuses private addresses.
#[derive(Debug)]
pub(crate) struct CheckedResolver {
    policy: Arc<UrlPolicy>,
}

impl CheckedResolver {
    pub(crate) fn new(policy: Arc<UrlPolicy>) -> CheckedResolver {
        CheckedResolver { policy }
    }
}

/// The addresses of `host`, each checked unless `private_ok`.
pub(crate) async fn resolve_checked(
    host: &str,
    private_ok: bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|err| NotResolved {
            host: host.to_owned(),
            why: err.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(Box::new(NotResolved {
            host: host.to_owned(),
            why: "no addresses".to_owned(),
        }));
    }
    if !private_ok && let Some(refusal) = addrs.iter().find_map(|addr| classify(addr.ip())) {
        return Err(Box::new(AddressRefused {
            host: host.to_owned(),
            refusal,
        }));
    }
    Ok(addrs)
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let private_ok = self.policy.private_ok(&HostName::of_name(&host));
        Box::pin(async move {
            let addrs = resolve_checked(&host, private_ok).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::PrivateHost;

    #[tokio::test]
    async fn localhost_resolves_to_refused_addresses_unless_listed() {
        let err = match resolve_checked("localhost", false).await {
            Ok(addrs) => panic!("resolved: {addrs:?}"),
            Err(err) => err,
        };
        let refused = err
            .downcast_ref::<AddressRefused>()
            .unwrap_or_else(|| panic!("{err}"));
        assert_eq!(refused.refusal.range.name, "loopback");
        assert!(refused.to_string().starts_with("`localhost` resolves to "));
        let addrs = resolve_checked("localhost", true).await.unwrap();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[tokio::test]
    async fn the_resolver_asks_the_policy_by_name() {
        let listed = Arc::new(UrlPolicy::new(
            vec![],
            vec![PrivateHost::parse("localhost").unwrap()],
        ));
        let resolver = CheckedResolver::new(listed);
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<SocketAddr> = resolver.resolve(name).await.unwrap().collect();
        assert!(!addrs.is_empty());
        let unlisted = CheckedResolver::new(Arc::new(UrlPolicy::default()));
        let name: Name = "localhost".parse().unwrap();
        assert!(unlisted.resolve(name).await.is_err());
    }
}
