//! The parent's half of the jail's own network, for a policy with the network on: which
//! routes the jail's namespace gets ([`NetRoutes`], written into the jail spec) and where
//! `slirp4netns` is. The namespace's only way out is `slirp4netns`, a user-mode network stack
//! outside it (the one rootless containers use), started with the host's loopback cut off. So
//! the program reaches the internet, but not the host's own services: not its loopback
//! (`127.0.0.1`, which inside the namespace is the jail's own), not the addresses of the host's
//! interfaces, and not the private, link-local (cloud metadata) and other special ranges of
//! [`BLOCKED`], which get `prohibit` routes in the namespace (a connection fails with
//! `EACCES`). Networks the policy lists
//! ([`JailPolicy::allow_private`](crate::jail::JailPolicy)) get a route through the stack
//! instead. DNS goes to the stack's own forwarder (`10.0.2.3`), which asks the host's servers.
//!
//! Stage 1 starts the stack and adds the routes (`inside/net_stack.rs`); runs in the
//! golem-forge process.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use crate::jail::spec::{Ipv4Network, NetRoutes};

/// Ranges a jail never reaches unless its policy lists them: "this" network, private
/// networks, shared address space, loopback, link-local (cloud metadata services), IETF
/// protocol assignments, benchmarking, multicast and reserved.
pub const BLOCKED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
];

impl NetRoutes {
    /// The routes for a policy allowing `allowed`, with the stack at `stack`.
    pub fn new(allowed: &[Ipv4Network], stack: PathBuf) -> NetRoutes {
        let mut blocked: Vec<Ipv4Network> = BLOCKED
            .iter()
            .filter_map(|range| Ipv4Network::parse(range).ok())
            .chain(own_addresses())
            .filter(|range| !allowed.contains(range))
            .collect();
        blocked.sort_by_key(|n| (u32::from(n.addr()), n.prefix()));
        blocked.dedup();
        NetRoutes {
            blocked,
            allowed: allowed.to_vec(),
            stack,
        }
    }
}

/// What the network on means for a jail on this machine, in one sentence for `check`.
pub fn network_on_summary() -> String {
    match find_stack() {
        Some(stack) => {
            let own: Vec<String> = host_addresses()
                .iter()
                .filter(|addr| !addr.is_loopback())
                .map(ToString::to_string)
                .collect();
            format!(
                "a network of the jail's own through {}: the internet, but not the host's \
                 loopback, its addresses ({}) or the private and special ranges ({}) unless \
                 listed in `allow_private`",
                stack.display(),
                if own.is_empty() {
                    "none but the loopback".to_owned()
                } else {
                    own.join(", ")
                },
                BLOCKED.join(", ")
            )
        }
        None => format!(
            "slirp4netns is not installed, so a strict jail with the network on does not start \
             and a best_effort one shares the host's network, loopback included ({})",
            super::standby::NO_STACK_INSTALL
        ),
    }
}

/// Where `slirp4netns` is, if it is installed: on our `PATH`, or where Debian puts it.
pub fn find_stack() -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    crate::reaper::resolve(
        "slirp4netns",
        Path::new("/"),
        Some(&format!("{path}:/usr/bin:/usr/local/bin")),
    )
    .ok()
}

/// The IPv4 addresses of the host's interfaces (a service bound to every address answers on
/// each of them).
pub fn host_addresses() -> Vec<Ipv4Addr> {
    own_addresses().into_iter().map(|n| n.addr()).collect()
}

/// [`host_addresses`], each as a `/32`.
#[allow(unsafe_code)]
fn own_addresses() -> Vec<Ipv4Network> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `getifaddrs` fills `list` with a linked list we only read and then free.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return found;
    }
    let mut cursor = list;
    while !cursor.is_null() {
        // SAFETY: `cursor` is a node of the list `getifaddrs` made, not yet freed.
        let entry = unsafe { &*cursor };
        if !entry.ifa_addr.is_null()
            // SAFETY: a non-null `ifa_addr` points to a socket address of its family.
            && i32::from(unsafe { (*entry.ifa_addr).sa_family }) == libc::AF_INET
        {
            // SAFETY: an `AF_INET` address is a `sockaddr_in`.
            let addr = unsafe { &*entry.ifa_addr.cast::<libc::sockaddr_in>() };
            found.push(Ipv4Network::host(Ipv4Addr::from(u32::from_be(
                addr.sin_addr.s_addr,
            ))));
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: `list` came from `getifaddrs` and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_networks_are_not_blocked_and_the_host_is() {
        let allowed = [Ipv4Network::parse("10.0.0.0/8").unwrap()];
        let routes = NetRoutes::new(&allowed, PathBuf::from("/usr/bin/slirp4netns"));
        let blocked: Vec<String> = routes.blocked.iter().map(ToString::to_string).collect();
        assert!(!blocked.contains(&"10.0.0.0/8".to_owned()), "{blocked:?}");
        assert!(
            blocked.contains(&"169.254.0.0/16".to_owned()),
            "{blocked:?}"
        );
        assert!(
            blocked.contains(&"127.0.0.1/32".to_owned()),
            "the host's own: {blocked:?}"
        );
    }
}
