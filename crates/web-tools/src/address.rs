//! The address classifier: which IP addresses `web_fetch` refuses to connect to unless the host
//! is listed in `private_hosts`.
//!
//! Refused: loopback, private (RFC 1918), link-local, unique-local, carrier-grade NAT, multicast,
//! broadcast, unspecified, documentation, benchmarking and other special-purpose ranges, the
//! cloud metadata services (`169.254.169.254`, `fd00:ec2::254`, Alibaba's `100.100.100.200`),
//! and every IPv6 form that carries an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
//! IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
//! `2002::/16`, Teredo `2001::/32`) whose IPv4 address is refused. Everything else is public.
//!
//! The tables are checked in order: the metadata addresses first, so that they are named as
//! such rather than by the wider range they lie in.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A special-purpose range an address lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// What the range is (`loopback`, `private`, …).
    pub name: &'static str,
    /// The range in CIDR notation.
    pub cidr: &'static str,
}

/// Why an address is refused: the range it lies in, and the IPv4 address an IPv6 form
/// carries when it is that address which lies in the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // fields are named for what they hold
pub struct Refusal {
    /// The address as given.
    pub address: IpAddr,
    pub range: Range,
    /// For an IPv6 form of an IPv4 address: the form and the IPv4 address inside it.
    pub embedded: Option<(&'static str, Ipv4Addr)>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.embedded {
            Some((form, v4)) => write!(
                f,
                "{} is the {form} form of {v4}, a {} address ({})",
                self.address, self.range.name, self.range.cidr
            ),
            None => write!(
                f,
                "{} is a {} address ({})",
                self.address, self.range.name, self.range.cidr
            ),
        }
    }
}

const METADATA: &str = "cloud metadata service";

/// The refused IPv4 ranges: network, prefix length, range.
const V4: &[(Ipv4Addr, u8, Range)] = &[
    v4(169, 254, 169, 254, 32, METADATA, "169.254.169.254/32"),
    v4(100, 100, 100, 200, 32, METADATA, "100.100.100.200/32"),
    v4(0, 0, 0, 0, 8, "unspecified (\"this network\")", "0.0.0.0/8"),
    v4(10, 0, 0, 0, 8, "private", "10.0.0.0/8"),
    v4(100, 64, 0, 0, 10, "carrier-grade NAT", "100.64.0.0/10"),
    v4(127, 0, 0, 0, 8, "loopback", "127.0.0.0/8"),
    v4(169, 254, 0, 0, 16, "link-local", "169.254.0.0/16"),
    v4(172, 16, 0, 0, 12, "private", "172.16.0.0/12"),
    v4(192, 0, 0, 0, 24, "IETF protocol assignment", "192.0.0.0/24"),
    v4(192, 0, 2, 0, 24, "documentation", "192.0.2.0/24"),
    v4(192, 88, 99, 0, 24, "6to4 relay anycast", "192.88.99.0/24"),
    v4(192, 168, 0, 0, 16, "private", "192.168.0.0/16"),
    v4(198, 18, 0, 0, 15, "benchmarking", "198.18.0.0/15"),
    v4(198, 51, 100, 0, 24, "documentation", "198.51.100.0/24"),
    v4(203, 0, 113, 0, 24, "documentation", "203.0.113.0/24"),
    v4(224, 0, 0, 0, 4, "multicast", "224.0.0.0/4"),
    v4(255, 255, 255, 255, 32, "broadcast", "255.255.255.255/32"),
    v4(240, 0, 0, 0, 4, "reserved", "240.0.0.0/4"),
];

/// The refused IPv6 ranges, after the forms that carry an IPv4 address were looked into.
const V6: &[(Ipv6Addr, u8, Range)] = &[
    v6(
        [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
        128,
        METADATA,
        "fd00:ec2::254/128",
    ),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified", "::/128"),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback", "::1/128"),
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        96,
        "IPv4-compatible (deprecated)",
        "::/96",
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "local-use NAT64",
        "64:ff9b:1::/48",
    ),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 8, "reserved", "::/8"),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard-only", "100::/64"),
    v6(
        [0x2001, 0x2, 0, 0, 0, 0, 0, 0],
        48,
        "benchmarking",
        "2001:2::/48",
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation",
        "2001:db8::/32",
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation",
        "3fff::/20",
    ),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique-local", "fc00::/7"),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local", "fe80::/10"),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "site-local (deprecated)",
        "fec0::/10",
    ),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast", "ff00::/8"),
];

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix: u8,
    name: &'static str,
    cidr: &'static str,
) -> (Ipv4Addr, u8, Range) {
    (Ipv4Addr::new(a, b, c, d), prefix, Range { name, cidr })
}

const fn v6(
    s: [u16; 8],
    prefix: u8,
    name: &'static str,
    cidr: &'static str,
) -> (Ipv6Addr, u8, Range) {
    (
        Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]),
        prefix,
        Range { name, cidr },
    )
}

/// Whether `address` lies in `network/prefix` (both of one family).
pub(crate) fn in_network(address: IpAddr, network: IpAddr, prefix: u8) -> bool {
    match (address, network) {
        (IpAddr::V4(a), IpAddr::V4(n)) => in_v4(a, n, prefix),
        (IpAddr::V6(a), IpAddr::V6(n)) => in_v6(a, n, prefix),
        _ => false,
    }
}

fn in_v4(address: Ipv4Addr, network: Ipv4Addr, prefix: u8) -> bool {
    let mask = u32::MAX
        .checked_shl(32 - u32::from(prefix.min(32)))
        .unwrap_or(0);
    u32::from(address) & mask == u32::from(network) & mask
}

fn in_v6(address: Ipv6Addr, network: Ipv6Addr, prefix: u8) -> bool {
    let mask = u128::MAX
        .checked_shl(128 - u32::from(prefix.min(128)))
        .unwrap_or(0);
    u128::from(address) & mask == u128::from(network) & mask
}

fn range_of_v4(address: Ipv4Addr) -> Option<Range> {
    V4.iter()
        .find(|(network, prefix, _)| in_v4(address, *network, *prefix))
        .map(|(_, _, range)| *range)
}

/// Why `address` is refused, or `None` for a public address.
pub fn classify(address: IpAddr) -> Option<Refusal> {
    match address {
        IpAddr::V4(v4) => range_of_v4(v4).map(|range| Refusal {
            address,
            range,
            embedded: None,
        }),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v6(address: Ipv6Addr) -> Option<Refusal> {
    let refusal = |range, embedded| Refusal {
        address: IpAddr::V6(address),
        range,
        embedded,
    };
    let bits = u128::from(address);
    let low32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    let segments = address.segments();
    // The forms that carry an IPv4 address: refused when that address is.
    let mut embedded: Vec<(&'static str, Ipv4Addr)> = Vec::new();
    if bits >> 32 == 0xffff {
        embedded.push(("IPv4-mapped", low32));
    } else if bits >> 32 == 0xffff_0000 {
        embedded.push(("IPv4-translated", low32));
    } else if bits >> 32 == 0 && bits > 1 {
        embedded.push(("IPv4-compatible", low32));
    } else if in_v6(address, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        embedded.push(("NAT64", low32));
    } else if segments[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        embedded.push(("6to4", v4));
    } else if segments[0] == 0x2001 && segments[1] == 0 {
        let server = Ipv4Addr::from(((bits >> 64) & 0xffff_ffff) as u32);
        let client = Ipv4Addr::from(!((bits & 0xffff_ffff) as u32));
        embedded.push(("Teredo", server));
        embedded.push(("Teredo", client));
    }
    for (form, v4) in embedded {
        if let Some(range) = range_of_v4(v4) {
            return Some(refusal(range, Some((form, v4))));
        }
    }
    // An IPv4-mapped, -translated or NAT64 form of a public address is that public address
    // (and not in `::/8`'s reserved rest).
    if bits >> 32 == 0xffff
        || bits >> 32 == 0xffff_0000
        || in_v6(address, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96)
    {
        return None;
    }
    V6.iter()
        .find(|(network, prefix, _)| in_v6(address, *network, *prefix))
        .map(|(_, _, range)| refusal(*range, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<&'static str> {
        let address: IpAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        classify(address).map(|r| r.range.name)
    }

    #[test]
    fn every_refused_ipv4_range() {
        for (address, name) in [
            ("0.0.0.0", "unspecified (\"this network\")"),
            ("0.1.2.3", "unspecified (\"this network\")"),
            ("10.0.0.1", "private"),
            ("10.255.255.255", "private"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.127.255.254", "carrier-grade NAT"),
            ("100.100.100.200", METADATA),
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("169.254.169.254", METADATA),
            ("169.254.1.1", "link-local"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.0.0.8", "IETF protocol assignment"),
            ("192.0.2.1", "documentation"),
            ("192.88.99.1", "6to4 relay anycast"),
            ("192.168.1.1", "private"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
        ] {
            assert_eq!(class(address), Some(name), "{address}");
        }
    }

    #[test]
    fn public_ipv4_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.1",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(class(address), None, "{address}");
        }
    }

    #[test]
    fn every_refused_ipv6_range() {
        for (address, name) in [
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fd00:ec2::254", METADATA),
            ("fd00::1", "unique-local"),
            ("fc00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local (deprecated)"),
            ("ff02::1", "multicast"),
            ("ff0e::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "benchmarking"),
            ("100::1", "discard-only"),
            ("64:ff9b:1::1", "local-use NAT64"),
            ("::8.8.8.8", "IPv4-compatible (deprecated)"),
            ("::1:0:0:1", "reserved"),
        ] {
            assert_eq!(class(address), Some(name), "{address}");
        }
    }

    #[test]
    fn ipv6_forms_of_refused_ipv4_addresses_are_refused() {
        for (address, form, v4, name) in [
            ("::ffff:127.0.0.1", "IPv4-mapped", "127.0.0.1", "loopback"),
            ("::ffff:7f00:1", "IPv4-mapped", "127.0.0.1", "loopback"),
            ("::ffff:10.1.2.3", "IPv4-mapped", "10.1.2.3", "private"),
            (
                "::ffff:169.254.169.254",
                "IPv4-mapped",
                "169.254.169.254",
                METADATA,
            ),
            (
                "::ffff:100.64.0.1",
                "IPv4-mapped",
                "100.64.0.1",
                "carrier-grade NAT",
            ),
            (
                "::ffff:0.0.0.0",
                "IPv4-mapped",
                "0.0.0.0",
                "unspecified (\"this network\")",
            ),
            ("::ffff:224.0.0.1", "IPv4-mapped", "224.0.0.1", "multicast"),
            (
                "::ffff:192.0.2.1",
                "IPv4-mapped",
                "192.0.2.1",
                "documentation",
            ),
            ("::127.0.0.1", "IPv4-compatible", "127.0.0.1", "loopback"),
            ("::192.168.0.1", "IPv4-compatible", "192.168.0.1", "private"),
            (
                "::ffff:0:127.0.0.1",
                "IPv4-translated",
                "127.0.0.1",
                "loopback",
            ),
            ("64:ff9b::127.0.0.1", "NAT64", "127.0.0.1", "loopback"),
            ("64:ff9b::a9fe:a9fe", "NAT64", "169.254.169.254", METADATA),
            ("2002:7f00:1::1", "6to4", "127.0.0.1", "loopback"),
            ("2002:c0a8:101::", "6to4", "192.168.1.1", "private"),
            // Teredo: server 10.0.0.1; client !0x80ffffff... = 127.0.0.0 ^ mask.
            ("2001:0:a00:1::1", "Teredo", "10.0.0.1", "private"),
            (
                "2001:0:808:808::80ff:fffe",
                "Teredo",
                "127.0.0.1",
                "loopback",
            ),
        ] {
            let parsed: IpAddr = address.parse().unwrap();
            let refusal = classify(parsed).unwrap_or_else(|| panic!("{address} passed"));
            assert_eq!(refusal.range.name, name, "{address}");
            assert_eq!(
                refusal.embedded,
                Some((form, v4.parse().unwrap())),
                "{address}"
            );
        }
    }

    #[test]
    fn public_ipv6_addresses_pass() {
        for address in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "::ffff:0:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:0:808:808::f7f7:f7f7",
            "fbff:ffff::1",
            "fe00::1",
        ] {
            assert_eq!(class(address), None, "{address}");
        }
    }

    #[test]
    fn refusals_say_what_and_why() {
        let refusal = |text: &str| classify(text.parse().unwrap()).unwrap().to_string();
        assert_eq!(
            refusal("127.0.0.1"),
            "127.0.0.1 is a loopback address (127.0.0.0/8)"
        );
        assert_eq!(
            refusal("169.254.169.254"),
            "169.254.169.254 is a cloud metadata service address (169.254.169.254/32)"
        );
        assert_eq!(
            refusal("::ffff:127.0.0.1"),
            "::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address \
             (127.0.0.0/8)"
        );
    }

    #[test]
    fn networks_contain_their_addresses() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(in_network(ip("10.1.2.3"), ip("10.0.0.0"), 8));
        assert!(!in_network(ip("11.1.2.3"), ip("10.0.0.0"), 8));
        assert!(in_network(ip("1.2.3.4"), ip("0.0.0.0"), 0));
        assert!(in_network(ip("fd12::1"), ip("fd00::"), 8));
        assert!(!in_network(ip("fd12::1"), ip("10.0.0.0"), 8));
        assert!(in_network(ip("::1"), ip("::1"), 128));
    }
}
