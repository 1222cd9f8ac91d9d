//! Keys during a turn: while the model streams or a tool runs, the terminal is put in a mode
//! without line buffering, echo or signals (output processing stays on), and a thread watches
//! for Ctrl+C and a lone Esc, each of which sends an `interrupt` action. A line typed meanwhile
//! (shown after the spinner) is read on Enter: `/help` lists the commands, `/workers` draws the
//! tree of running workers; anything else is answered with what works during a turn. What it
//! prints while the answer streams goes above the line still streaming (`frontend::screen`),
//! and `⏹ interrupting…` is printed before the interrupt is sent, so that it comes before
//! what the end of the turn prints. The approval prompt
//! (`frontend::approval`) pauses the watcher and gets the terminal back as it was; the watcher
//! resumes after the answer.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use golem_protocol::ActionEvent;
use golem_runtime::host::ActionSender;
use rustix::termios::{OptionalActions, Termios, tcgetattr, tcsetattr};

use crate::frontend::approval::KeyWatcher;
use crate::frontend::screen::Screen;
use crate::frontend::terminal_keys::{ESCAPE_SEQUENCE_GAP, key_mode, read_byte, readable};
use crate::frontend::workers::WorkerTreeView;

/// How often the watcher looks at its flags.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest line kept while a turn runs.
const MAX_TYPED: usize = 80;

#[derive(Debug, Default)]
struct Flags {
    stop: bool,
    paused: bool,
    idle: bool,
}

type Shared = Arc<(Mutex<Flags>, Condvar)>;

/// The watcher for one turn. Dropping it stops the watcher and restores the terminal.
pub struct TurnKeys {
    shared: Shared,
    saved: Termios,
    thread: Option<JoinHandle<()>>,
    screen: Arc<Mutex<Screen>>,
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Flags> {
    shared.0.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TurnKeys {
    /// Starts watching (`None` when stdin is not a terminal); `/workers` draws `workers`.
    pub fn start(
        bus: ActionSender,
        screen: Arc<Mutex<Screen>>,
        workers: Arc<Mutex<WorkerTreeView>>,
    ) -> Option<TurnKeys> {
        let saved = tcgetattr(std::io::stdin()).ok()?;
        tcsetattr(std::io::stdin(), OptionalActions::Now, &key_mode(&saved)).ok()?;
        let shared: Shared = Arc::new((Mutex::new(Flags::default()), Condvar::new()));
        let flags = shared.clone();
        let watched = screen.clone();
        let thread = std::thread::spawn(move || watch(&flags, &bus, &watched, &workers));
        Some(TurnKeys {
            shared,
            saved,
            thread: Some(thread),
            screen,
        })
    }

    /// Stops reading keys and gives the terminal back as it was (for a prompt).
    pub fn pause(&self) {
        let mut flags = lock(&self.shared);
        flags.paused = true;
        self.shared.1.notify_all();
        while !flags.idle && !flags.stop {
            flags = self
                .shared
                .1
                .wait(flags)
                .unwrap_or_else(PoisonError::into_inner);
        }
        drop(flags);
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }

    /// Watches keys again after [`TurnKeys::pause`].
    pub fn resume(&self) {
        let _ = tcsetattr(
            std::io::stdin(),
            OptionalActions::Now,
            &key_mode(&self.saved),
        );
        let mut flags = lock(&self.shared);
        flags.paused = false;
        self.shared.1.notify_all();
    }
}

/// The watcher of the running turn, if any, is what the approval prompt pauses.
impl KeyWatcher for Mutex<Option<Arc<TurnKeys>>> {
    fn pause(&self) {
        let keys = self.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(keys) = keys {
            keys.pause();
        }
    }

    fn resume(&self) {
        let keys = self.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(keys) = keys {
            keys.resume();
        }
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        {
            let mut flags = lock(&self.shared);
            flags.stop = true;
            self.shared.1.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // A line typed but not ended is dropped with the turn.
        self.screen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .set_typed("");
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// Carries out a line typed while a turn runs.
fn typed_line(line: &str, screen: &Mutex<Screen>, workers: &Mutex<WorkerTreeView>) {
    let mut screen = screen.lock().unwrap_or_else(PoisonError::into_inner);
    match line.trim() {
        "" => {}
        "/workers" => super::show_workers(workers, &mut screen),
        "/help" => screen.line(&super::slash::help_text()),
        other => {
            let text = screen.dim(&format!(
                "{other}: while a turn runs only /help and /workers work (Esc or Ctrl+C \
                 interrupts); send it after the turn"
            ));
            screen.line(&text);
        }
    }
}

fn watch(
    shared: &Shared,
    bus: &ActionSender,
    screen: &Arc<Mutex<Screen>>,
    workers: &Mutex<WorkerTreeView>,
) {
    let mut interrupted = false;
    let mut typed = String::new();
    loop {
        {
            let mut flags = lock(shared);
            while flags.paused && !flags.stop {
                flags.idle = true;
                shared.1.notify_all();
                flags = shared.1.wait(flags).unwrap_or_else(PoisonError::into_inner);
            }
            if flags.stop {
                flags.idle = true;
                shared.1.notify_all();
                return;
            }
            flags.idle = false;
        }
        if !readable(POLL_INTERVAL) {
            continue;
        }
        let reason = match read_byte() {
            Some(0x03) => Some("Ctrl+C"),
            // A lone Esc; an escape sequence (arrow keys…) sends more bytes at once.
            Some(0x1b) => {
                let lone = !readable(ESCAPE_SEQUENCE_GAP);
                while readable(Duration::ZERO) {
                    let _ = read_byte();
                }
                lone.then_some("Esc")
            }
            Some(b'\r' | b'\n') => {
                let line = std::mem::take(&mut typed);
                lock_screen(screen).set_typed("");
                typed_line(&line, screen, workers);
                None
            }
            Some(0x7f | 0x08) => {
                typed.pop();
                lock_screen(screen).set_typed(&typed);
                None
            }
            Some(byte @ 0x20..=0x7e) if typed.len() < MAX_TYPED => {
                typed.push(char::from(byte));
                lock_screen(screen).set_typed(&typed);
                None
            }
            Some(_) => None,
            None => {
                // End of input or an error: stop watching rather than spin.
                std::thread::sleep(POLL_INTERVAL);
                None
            }
        };
        if let Some(reason) = reason {
            // The line is drawn once, and before the interrupt goes out: the turn may end
            // (and print that it did) as soon as the session gets it.
            if !interrupted {
                interrupted = true;
                let mut screen = lock_screen(screen);
                let text = screen.dim("⏹ interrupting…");
                screen.line(&text);
            }
            // Every press is sent: a second one stops the summary an interrupt asks for
            // ("summarising… (Ctrl+C again to stop)").
            bus.send(ActionEvent::Interrupt {
                reason: Some(reason.to_owned()),
            });
        }
    }
}

fn lock_screen(screen: &Mutex<Screen>) -> std::sync::MutexGuard<'_, Screen> {
    screen.lock().unwrap_or_else(PoisonError::into_inner)
}
