//! The jail's own network, for a policy with the network on: a network namespace of its own
//! whose only way out is `slirp4netns`, a user-mode network stack outside it (the one rootless
//! containers use), started with the host's loopback cut off. So the program reaches the
//! internet, but not the host's own services: not its loopback (`127.0.0.1`, which inside the
//! namespace is the jail's own), not the addresses of the host's interfaces, and not the
//! private, link-local (cloud metadata) and other special ranges of [`BLOCKED`], which get
//! `prohibit` routes in the namespace (a connection fails with `EACCES`). Networks the policy
//! lists ([`JailPolicy::allow_private`](super::JailPolicy)) get a route through the stack
//! instead. DNS goes to the stack's own forwarder (`10.0.2.3`), which asks the host's servers.
//!
//! Stage 1 starts the stack: before it enters its namespaces it starts `<binary> __jail
//! --net …` (still in the host's network), which waits until stage 1 says its namespaces are
//! made and then becomes `slirp4netns` for stage 1's PID; stage 1 waits until the stack says it
//! is ready, adds the routes over netlink and goes on. The stack ends when stage 1 does (its
//! exit descriptor) and is in the run's process group and cgroups.

use std::fmt;
use std::io::Read;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde::{Deserialize, Serialize};

/// The helper argument that turns into the network stack.
pub(crate) const NET_ARG: &str = "--net";

/// The stack's own addresses: the namespace's gateway and DNS forwarder.
const GATEWAY: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
pub(crate) const NAMESERVER: &str = "10.0.2.3";

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

/// An IPv4 network: an address and a prefix length (`10.1.0.0/16`; a bare address is `/32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ipv4Network {
    addr: Ipv4Addr,
    prefix: u8,
}

impl Ipv4Network {
    /// Parses `10.1.0.0/16` or `10.1.2.3`; the address is masked to the prefix.
    pub fn parse(text: &str) -> Result<Ipv4Network, String> {
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((addr, prefix)) => (addr, prefix.parse::<u8>().ok().filter(|p| *p <= 32)),
            None => (text.trim(), Some(32)),
        };
        let (Ok(addr), Some(prefix)) = (addr.parse::<Ipv4Addr>(), prefix) else {
            return Err(format!(
                "{text:?} is not an IPv4 address or network such as \"10.1.2.3\" or \
                 \"10.1.0.0/16\""
            ));
        };
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        Ok(Ipv4Network {
            addr: Ipv4Addr::from(u32::from(addr) & mask),
            prefix,
        })
    }
}

impl fmt::Display for Ipv4Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// The routes of a jail's namespace, decided by the parent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NetRoutes {
    /// `prohibit`: [`BLOCKED`] and the host's own addresses.
    pub blocked: Vec<Ipv4Network>,
    /// Through the stack: what the policy allows.
    pub allowed: Vec<Ipv4Network>,
    /// The `slirp4netns` to run.
    pub stack: PathBuf,
}

impl NetRoutes {
    /// The routes for a policy allowing `allowed`, with the stack at `stack`.
    pub fn new(allowed: &[Ipv4Network], stack: PathBuf) -> NetRoutes {
        let mut blocked: Vec<Ipv4Network> = BLOCKED
            .iter()
            .filter_map(|range| Ipv4Network::parse(range).ok())
            .chain(own_addresses())
            .filter(|range| !allowed.contains(range))
            .collect();
        blocked.sort_by_key(|n| (u32::from(n.addr), n.prefix));
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
    own_addresses().into_iter().map(|n| n.addr).collect()
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
            found.push(Ipv4Network {
                addr: Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr)),
                prefix: 32,
            });
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: `list` came from `getifaddrs` and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// Stage 1's side of the stack, started before its namespaces are made.
pub(crate) struct Stack {
    child: Child,
    /// Written once the namespaces are made.
    start: OwnedFd,
    /// The stack writes `1` here when the namespace is configured.
    ready: OwnedFd,
    /// Kept open while stage 1 lives; the stack ends when it closes.
    _alive: OwnedFd,
}

impl Stack {
    /// Starts `<exe> __jail --net` for stage 1 (this process), waiting for [`Stack::start`].
    pub fn spawn(exe: &Path, stack: &Path) -> std::io::Result<Stack> {
        use rustix::pipe::{PipeFlags, pipe_with};
        let (start_read, start_write) = pipe_with(PipeFlags::CLOEXEC)?;
        let (ready_read, ready_write) = pipe_with(PipeFlags::CLOEXEC)?;
        let (alive_read, alive_write) = pipe_with(PipeFlags::CLOEXEC)?;
        let passed = [&start_read, &ready_write, &alive_read];
        for fd in passed {
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
        }
        let child = Command::new(exe)
            .arg(super::HELPER_ARG)
            .arg(NET_ARG)
            .arg(stack)
            .args(passed.map(|fd| fd.as_raw_fd().to_string()))
            .arg(std::process::id().to_string())
            .env_clear()
            .stdin(std::process::Stdio::null())
            // Its stdout is the program's: the stack's chatter goes nowhere.
            .stdout(std::process::Stdio::null())
            .spawn()?;
        Ok(Stack {
            child,
            start: start_write,
            ready: ready_read,
            _alive: alive_write,
        })
    }

    /// Once stage 1's namespaces are made: lets the stack configure them, waits until it has,
    /// and adds `routes`.
    pub fn start(mut self, routes: &NetRoutes) -> Result<Stack, String> {
        rustix::io::write(&self.start, b"1").map_err(|e| format!("starting slirp4netns: {e}"))?;
        let mut said = [0u8; 1];
        if !matches!(rustix::io::read(&self.ready, &mut said), Ok(1)) {
            let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
            return Err(format!(
                "slirp4netns could not give the jail its network ({status}; its messages are \
                 above)"
            ));
        }
        add_routes(routes).map_err(|e| format!("adding the jail's routes: {e}"))?;
        Ok(self)
    }
}

/// The helper's `--net STACK START READY ALIVE PID` mode: waits for `START`, then becomes the
/// stack for `PID`'s namespaces. Returns an exit code only when it could not.
pub(crate) fn stack_main(args: &[String]) -> i32 {
    let [stack, start, ready, alive, pid] = args else {
        return 2;
    };
    let fd = |text: &str| text.parse::<RawFd>().ok();
    let (Some(start), Some(ready), Some(alive)) = (fd(start), fd(ready), fd(alive)) else {
        return 2;
    };
    // SAFETY: stage 1 passed this descriptor open, to us alone, at this number.
    #[allow(unsafe_code)]
    let mut start = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(start) });
    let mut byte = [0u8; 1];
    if !matches!(start.read(&mut byte), Ok(1)) {
        return 0;
    }
    drop(start);
    // The program's stdin pipe came along (stage 1 had not claimed it yet): not the stack's.
    // SAFETY: borrowed for the one `fcntl`, which fails harmlessly on a closed descriptor.
    #[allow(unsafe_code)]
    let stdin_pipe = unsafe { rustix::fd::BorrowedFd::borrow_raw(super::standby::STDIN_FD) };
    let _ = rustix::io::fcntl_setfd(stdin_pipe, rustix::io::FdFlags::CLOEXEC);
    let err = Command::new(stack)
        .args(["--configure", "--mtu=65520", "--disable-host-loopback"])
        .arg(format!("--ready-fd={ready}"))
        .arg(format!("--exit-fd={alive}"))
        .arg(pid)
        .arg("tap0")
        .exec();
    eprintln!("golem-forge: starting {stack}: {err}");
    127
}

/// Adds a route per network over rtnetlink: `prohibit` for the blocked ones, through the
/// stack's gateway for the allowed ones.
fn add_routes(routes: &NetRoutes) -> std::io::Result<()> {
    let socket = rustix::net::socket_with(
        rustix::net::AddressFamily::NETLINK,
        rustix::net::SocketType::RAW,
        rustix::net::SocketFlags::CLOEXEC,
        None, // NETLINK_ROUTE
    )?;
    let mut seq = 0;
    for (network, via) in routes
        .allowed
        .iter()
        .map(|n| (n, Some(GATEWAY)))
        .chain(routes.blocked.iter().map(|n| (n, None)))
    {
        seq += 1;
        let message = route_message(seq, network, via);
        rustix::net::send(&socket, &message, rustix::net::SendFlags::empty())?;
        let mut answer = [0u8; 512];
        let read = rustix::net::recv(&socket, &mut answer, rustix::net::RecvFlags::empty())?.0;
        // The acknowledgement: nlmsghdr (16 bytes), then the error code (0: done).
        let code = answer
            .get(16..20)
            .filter(|_| read >= 20)
            .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(-libc::EIO);
        if code != 0 && code != -libc::EEXIST {
            return Err(std::io::Error::from_raw_os_error(-code));
        }
    }
    Ok(())
}

/// An `RTM_NEWROUTE` request for `network` in the main table: through `via`, or `prohibit`.
fn route_message(seq: u32, network: &Ipv4Network, via: Option<Ipv4Addr>) -> Vec<u8> {
    const RTM_NEWROUTE: u16 = 24;
    const NLM_F_REQUEST_ACK_CREATE: u16 = 0x1 | 0x4 | 0x400;
    const RTN_UNICAST: u8 = 1;
    const RTN_PROHIBIT: u8 = 8;
    const RTA_DST: u16 = 1;
    const RTA_GATEWAY: u16 = 5;
    let attribute = |kind: u16, addr: Ipv4Addr| {
        let mut bytes = 8u16.to_ne_bytes().to_vec();
        bytes.extend(kind.to_ne_bytes());
        bytes.extend(addr.octets());
        bytes
    };
    let mut body = vec![
        libc::AF_INET as u8,
        network.prefix,
        0,   // source prefix
        0,   // tos
        254, // RT_TABLE_MAIN
        4,   // RTPROT_STATIC
        0,   // RT_SCOPE_UNIVERSE
        if via.is_some() {
            RTN_UNICAST
        } else {
            RTN_PROHIBIT
        },
    ];
    body.extend(0u32.to_ne_bytes()); // flags
    body.extend(attribute(RTA_DST, network.addr));
    if let Some(gateway) = via {
        body.extend(attribute(RTA_GATEWAY, gateway));
    }
    let length = u32::try_from(16 + body.len()).unwrap_or(u32::MAX);
    let mut message = length.to_ne_bytes().to_vec();
    message.extend(RTM_NEWROUTE.to_ne_bytes());
    message.extend(NLM_F_REQUEST_ACK_CREATE.to_ne_bytes());
    message.extend(seq.to_ne_bytes());
    message.extend(0u32.to_ne_bytes()); // port id: the kernel
    message.extend(body);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_parse_masked_and_bad_ones_say_what_is_expected() {
        let parse = |text| Ipv4Network::parse(text).map(|n| n.to_string());
        assert_eq!(parse("10.1.2.3").as_deref(), Ok("10.1.2.3/32"));
        assert_eq!(parse("10.1.2.3/16").as_deref(), Ok("10.1.0.0/16"));
        assert_eq!(parse("0.0.0.0/0").as_deref(), Ok("0.0.0.0/0"));
        for bad in ["10.1.2", "10.1.2.3/33", "intranet", "::1", "10.0.0.0/x"] {
            let err = Ipv4Network::parse(bad).unwrap_err();
            assert!(err.contains("IPv4 address or network"), "{bad}: {err}");
        }
    }

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

    #[test]
    fn a_route_message_is_a_well_formed_netlink_request() {
        let message = route_message(7, &Ipv4Network::parse("10.0.0.0/8").unwrap(), None);
        assert_eq!(message.len(), 16 + 12 + 8);
        assert_eq!(&message[0..4], &36u32.to_ne_bytes());
        assert_eq!(&message[8..12], &7u32.to_ne_bytes());
        assert_eq!(message[16], libc::AF_INET as u8);
        assert_eq!(message[17], 8, "prefix");
        assert_eq!(message[23], 8, "RTN_PROHIBIT");
        assert_eq!(&message[32..36], &[10, 0, 0, 0]);
        let via = route_message(
            1,
            &Ipv4Network::parse("10.1.0.0/16").unwrap(),
            Some(GATEWAY),
        );
        assert_eq!(via[23], 1, "RTN_UNICAST");
        assert_eq!(&via[via.len() - 4..], &[10, 0, 2, 2]);
    }
}
