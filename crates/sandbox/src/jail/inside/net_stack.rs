//! Stage 1's half of the jail's own network (the routes come from the parent in the jail
//! spec, `parent/net.rs`): before stage 1 enters its namespaces it starts `<binary> __jail
//! --net …` (still in the host's network), which waits until stage 1 says its namespaces are
//! made and then becomes `slirp4netns` for stage 1's PID, with the host's loopback cut off;
//! stage 1 waits until the stack says it is ready, adds the routes over netlink (`prohibit` for
//! every blocked range and host address, through the stack's gateway for what the policy
//! allows) and goes on. The stack ends when stage 1 does (its exit descriptor) and is in the
//! run's process group and cgroups. Runs in the helper's processes.

use std::io::Read;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};

use crate::jail::spec::{HELPER_ARG, Ipv4Network, NetRoutes, STDIN_FD};

/// The helper argument that turns into the network stack.
pub(crate) const NET_ARG: &str = "--net";

/// The stack's own addresses: the namespace's gateway and DNS forwarder.
const GATEWAY: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
pub(crate) const NAMESERVER: &str = "10.0.2.3";

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
            .arg(HELPER_ARG)
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
    pub fn start(mut self, routes: &NetRoutes) -> Result<Stack, NetStackError> {
        rustix::io::write(&self.start, b"1").map_err(NetStackError::Start)?;
        let mut said = [0u8; 1];
        if !matches!(rustix::io::read(&self.ready, &mut said), Ok(1)) {
            return Err(NetStackError::NotReady {
                status: self.child.wait().ok(),
            });
        }
        add_routes(routes).map_err(NetStackError::Routes)?;
        Ok(self)
    }
}

/// Why the jail's network could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NetStackError {
    /// Telling the stack to start failed.
    #[error("starting slirp4netns: {0}")]
    Start(#[source] rustix::io::Errno),
    /// The stack ended without saying it was ready (how it ended, when that is known).
    #[error(
        "slirp4netns could not give the jail its network ({}; its messages are above)",
        status.map(|s| s.to_string()).unwrap_or_default()
    )]
    NotReady {
        status: Option<std::process::ExitStatus>,
    },
    /// The kernel refused a route.
    #[error("adding the jail's routes: {0}")]
    Routes(#[source] std::io::Error),
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
    let stdin_pipe = unsafe { rustix::fd::BorrowedFd::borrow_raw(STDIN_FD) };
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
        network.prefix(),
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
    body.extend(attribute(RTA_DST, network.addr()));
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
