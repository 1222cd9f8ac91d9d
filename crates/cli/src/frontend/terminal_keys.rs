//! Single keys from the terminal, shared by the approval prompt and the chat's key watcher:
//! the mode without line buffering, echo or signals (output processing stays on, so other
//! output still starts its lines at the left), waiting for a byte, and reading one.

use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::termios::{
    LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};

/// How long to wait after an Esc for the rest of an escape sequence (arrow keys and the like).
pub const ESCAPE_SEQUENCE_GAP: Duration = Duration::from_millis(30);

/// `saved` in the mode of one key: reads return each byte as it is typed, nothing is echoed,
/// and Ctrl+C is a byte rather than a signal.
pub fn key_mode(saved: &Termios) -> Termios {
    let mut mode = saved.clone();
    mode.local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    mode.special_codes[SpecialCodeIndex::VMIN] = 1;
    mode.special_codes[SpecialCodeIndex::VTIME] = 0;
    mode
}

/// Stdin's terminal in [`key_mode`] for as long as it lives; dropping it puts the terminal back
/// as it was.
pub struct KeyMode {
    saved: Termios,
}

impl KeyMode {
    /// Switches stdin's terminal; `None` when it cannot be.
    pub fn enter() -> Option<KeyMode> {
        let saved = tcgetattr(std::io::stdin()).ok()?;
        tcsetattr(std::io::stdin(), OptionalActions::Now, &key_mode(&saved)).ok()?;
        Some(KeyMode { saved })
    }
}

impl Drop for KeyMode {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// Whether stdin has a byte to read within `timeout` (below a second).
pub fn readable(timeout: Duration) -> bool {
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
}

/// One byte of stdin (a read a signal cut short is tried again); `None` at its end or on an
/// error.
pub fn read_byte() -> Option<u8> {
    let mut byte = [0u8; 1];
    loop {
        match rustix::io::read(std::io::stdin(), &mut byte) {
            Ok(1) => return Some(byte[0]),
            Err(rustix::io::Errno::INTR) => continue,
            Ok(_) | Err(_) => return None,
        }
    }
}
