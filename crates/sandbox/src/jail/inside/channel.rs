//! The private channel of a program started with [`crate::jail::Jail::spawn_with_channel`]:
//! stage 2 talks to the program over a UNIX stream socket that nothing the program starts can
//! reach, and relays it to the parent's stdin and stdout pipes. Runs in stage 2; the parent
//! only writes and reads its pipes, as for [`crate::jail::Jail::spawn`].
//!
//! Before the program starts, stage 2 binds a listening socket to a random abstract name,
//! connects to it, and hands the listener to the program (inheritable, its number in
//! [`CHANNEL_FD_VAR`]); the program accepts that one pending connection and closes the
//! listener before it runs anything else, so the listener is gone before any process it
//! starts exists. What is left is a socket that:
//! - is close-on-exec in the program (an accepted socket is), so no child inherits it;
//! - cannot be reopened through `/proc/<pid>/fd` (a socket, unlike a pipe, refuses `open`);
//! - cannot be copied out with `pidfd_getfd` or `ptrace` (seccomp refuses both).
//!
//! The parent's pipes are held by stage 2 alone: it is non-dumpable and outside the program's
//! Landlock domain, so the program's processes cannot open its `/proc/1/fd` either. The
//! program's own stdin is `/dev/null` and its stdout its stderr, so a child that inherits them
//! (`stdio: 'inherit'`) reaches neither direction of the channel.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::mpsc;
use std::time::Duration;

/// The variable holding the number of the listening socket's descriptor in the program.
pub const CHANNEL_FD_VAR: &str = "GOLEM_CHANNEL_FD";

/// How long stage 2 waits, after the program ended, for the last of its output to be relayed.
const DRAIN: Duration = Duration::from_secs(1);

/// A channel made for a program that has not started yet.
pub(crate) struct Channel {
    listener: UnixListener,
    ours: UnixStream,
}

impl Channel {
    /// Binds the listener to a random abstract name and connects to it (the connection waits
    /// in the listener's queue for the program). The listener is left inheritable.
    pub fn open() -> std::io::Result<Channel> {
        let mut random = [0u8; 16];
        File::open("/dev/urandom")?.read_exact(&mut random)?;
        let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let address = SocketAddr::from_abstract_name(format!("golem-forge-channel-{name}"))?;
        let listener = UnixListener::bind_addr(&address)?;
        let ours = UnixStream::connect_addr(&address)?;
        rustix::io::fcntl_setfd(listener.as_fd(), rustix::io::FdFlags::empty())?;
        Ok(Channel { listener, ours })
    }

    /// The listener's descriptor number, as the program inherits it.
    pub fn listener_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    /// Once the program has started: closes stage 2's copy of the listener and relays
    /// `from_parent` (the parent's stdin pipe) to the program and the program's answers to
    /// stage 2's stdout, each on a thread of its own.
    pub fn relay(self, from_parent: OwnedFd) -> std::io::Result<Relay> {
        drop(self.listener);
        let to_parent = File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
        let incoming = self.ours.try_clone()?;
        let outgoing = self.ours;
        std::thread::spawn(move || {
            let _ = copy_then_close(File::from(from_parent), &incoming);
            let _ = incoming.shutdown(std::net::Shutdown::Write);
        });
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = copy_then_close(&outgoing, to_parent);
            let _ = done.send(());
        });
        Ok(Relay { finished })
    }
}

/// The running relay.
pub(crate) struct Relay {
    finished: mpsc::Receiver<()>,
}

impl Relay {
    /// After the program ended: waits a moment for what it wrote last to reach the parent.
    pub fn drain(self) {
        let _ = self.finished.recv_timeout(DRAIN);
    }
}

/// Copies until `from` ends, flushing every chunk (the other side waits for whole lines). Not
/// `std::io::copy`: its Linux fast path (splicing between the pipe and the socket) stalled
/// the relay, and the custom-tool tests hung on it.
fn copy_then_close(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        to.write_all(&buffer[..read])?;
        to.flush()?;
    }
}
