//! End-to-end tests of `golem-forge chat` in a real pseudo-terminal (120×40) against a local mock
//! model server: keys go in as bytes, the output is fed to a `vt100` terminal, and tests wait for
//! text to appear on it. The harness and fixtures are here; the cases are in `chat/`, one
//! concern each. `run`'s terminal tests (`run/prompt.rs`) use the same harness.
//!
//! The terminal answers the queries a line editor sends (cursor position, device attributes),
//! keeps the rows that scroll off the top, and remembers where the cursor was when the test last
//! typed, so that [`Chat::wait_for`] only accepts text that appeared since then.

mod approval;
mod basics;
mod complete;
mod custom;
mod edit;
mod elicitation;
mod escapes;
mod git;
mod interrupt;
mod manual;
mod midstream;
mod mode;
mod model;
mod undo;
mod workers;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use golem_testkit::Wire;
use golem_testkit::mock::{Chunk, MockServer, Reply};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use serde_json::{Value, json};

use golem_testkit::cli::{self, TestEnv, WRITES_ASK, fs_front_matter, model_for, provider_env};

/// How long a test waits for anything (never reached when things work).
const LIMIT: Duration = Duration::from_secs(15);
const ROWS: u16 = 40;
const COLS: u16 = 120;

/// The worker of the fixtures and its prompt.
pub(crate) const WORKER: &str = "scribe";
const PROMPT: &str = "scribe› ";
/// The last line of every approval box.
pub(crate) const CHOICES: &str =
    "[y] yes  [s] session  [p] always in this project  [n] no  [e] edit  [q] stop";
pub(crate) const ANSWER: &str = "answer› ";
pub(crate) const NOTE: &str = "note for the model› ";

// ---- fixtures ----

/// The worker `scribe` with `front_matter` (YAML lines, each ending in a newline).
pub(crate) fn worker(front_matter: &str) -> String {
    cli::worker(WORKER, front_matter)
}

/// `scribe` with one read-write zone `out` whose writes ask, and the filesystem tools.
pub(crate) fn fs_worker() -> String {
    worker(&fs_front_matter(WRITES_ASK))
}

/// `scribe` with no tools at all.
fn plain_worker() -> String {
    worker("")
}

/// Writes the project `proj/`: a program config, the zone directory `out` and `scribe.worker`.
pub(crate) fn project(env: &TestEnv, worker_text: &str) {
    env.project(&[(&format!("{WORKER}.worker"), worker_text)]);
}

/// A streamed answer that stops after its first half and never ends (until interrupted).
fn stalled(wire: Wire, text: &str) -> Reply {
    wire.text_stalled(text, Chunk::Hang)
}

/// The JSON bodies of the requests the mock received, for failure messages.
fn bodies(server: &MockServer) -> Vec<Value> {
    server.requests().into_iter().map(|r| r.body).collect()
}

// ---- the terminal ----

/// One row of the terminal: its text (trailing spaces trimmed) and whether it wraps on.
#[derive(Debug, Clone)]
struct Row {
    text: String,
    wrapped: bool,
}

/// The `vt100` callbacks: rows scrolled off the top, answers to the terminal's queries, and
/// the window titles and icon names set (none, unless text drove the terminal).
#[derive(Default)]
struct Capture {
    scrolled: Vec<Row>,
    state: vt100::capture::BasicFormattedCaptureState,
    replies: Vec<u8>,
    titles: Vec<String>,
}

impl vt100::Callbacks for Capture {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(title).into_owned());
    }

    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, icon_name: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(icon_name).into_owned());
    }

    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        let mut formatted = String::new();
        let _ = contents.write_formatted_basic(&mut formatted, &mut self.state);
        // A leading newline means the previous row did not wrap.
        let text = match formatted.strip_prefix('\n') {
            Some(rest) => {
                if let Some(last) = self.scrolled.last_mut() {
                    last.wrapped = false;
                }
                rest.to_owned()
            }
            None => {
                if let Some(last) = self.scrolled.last_mut() {
                    last.wrapped = true;
                }
                formatted
            }
        };
        let text: String = vt100::capture::basic_formatted_to_plain(&text).collect();
        self.scrolled.push(Row {
            text: text.trim_end().to_owned(),
            wrapped: false,
        });
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied();
        match (i1, c, first) {
            // Device status report: the cursor position (1-based).
            (None, 'n', Some(6)) => {
                let (row, col) = screen.cursor_position();
                self.replies
                    .extend(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            (None, 'n', Some(5)) => self.replies.extend(b"\x1b[0n"),
            // Primary device attributes: a VT102-ish terminal (ends crossterm's feature probes).
            (None, 'c', _) => self.replies.extend(b"\x1b[?1;2c"),
            _ => {}
        }
    }
}

/// What the reader thread maintains.
struct Terminal {
    parser: vt100::Parser<Capture>,
    raw: Vec<u8>,
}

/// The terminal's text at one moment.
struct View {
    /// Every row so far: those scrolled off, then the visible ones.
    rows: Vec<Row>,
    /// The cursor: absolute row (an index into `rows`) and column.
    cursor: (usize, u16),
    /// The visible rows only, as `vt100` shows them.
    screen: String,
}

impl View {
    fn of(terminal: &Terminal) -> Self {
        let screen = terminal.parser.screen();
        let scrolled = &terminal.parser.callbacks().scrolled;
        let mut rows = scrolled.clone();
        for (index, text) in screen.rows(0, COLS).enumerate() {
            rows.push(Row {
                text: text.trim_end().to_owned(),
                wrapped: screen.row_wrapped(index as u16),
            });
        }
        let (row, col) = screen.cursor_position();
        Self {
            rows,
            cursor: (scrolled.len() + usize::from(row), col),
            screen: screen.contents(),
        }
    }

    /// The text of the rows from `from` on, wrapped rows joined.
    fn text_from(&self, from: usize) -> String {
        let mut text = String::new();
        for row in self.rows.iter().skip(from) {
            text.push_str(&row.text);
            if !row.wrapped {
                text.push('\n');
            }
        }
        text
    }

    fn cursor_line(&self) -> &str {
        self.rows
            .get(self.cursor.0)
            .map_or("", |row| row.text.as_str())
    }
}

/// `golem-forge chat` running in a pseudo-terminal; killed on drop.
pub(crate) struct Chat {
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    terminal: Arc<Mutex<Terminal>>,
    /// The absolute row the cursor was on when the test last typed.
    from: usize,
    /// The temp dir, redacted in snapshots.
    home: String,
    exit: Option<i32>,
    /// The thread that reads the terminal: finished once it has read everything written.
    reader: std::thread::JoinHandle<()>,
}

/// `golem-forge chat proj/scribe.worker --model …` with `wire`'s provider pointed at `server`.
fn start(env: &TestEnv, wire: Wire, server: &MockServer) -> Chat {
    let worker = format!("proj/{WORKER}.worker");
    let envs: Vec<(&str, String)> = provider_env(wire, server).into_iter().collect();
    Chat::start(env, &["chat", &worker, "--model", model_for(wire)], &envs)
}

impl Chat {
    /// Runs the binary with `args` in the temp dir, with a clean environment (HOME there, no
    /// provider keys, `TERM=xterm-256color`, no `NO_COLOR`) plus `envs`.
    pub(crate) fn start(env: &TestEnv, args: &[&str], envs: &[(&str, String)]) -> Chat {
        Chat::start_program(env, env!("CARGO_BIN_EXE_golem-forge"), args, envs)
    }

    /// Like [`Chat::start`], but runs `program` (a shell that starts the binary with some
    /// output redirected, say).
    pub(crate) fn start_program(
        env: &TestEnv,
        program: &str,
        args: &[&str],
        envs: &[(&str, String)],
    ) -> Chat {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(env.path());
        cmd.env_clear();
        cmd.env("HOME", env.path());
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd.env("TERM", "xterm-256color");
        for (key, value) in envs {
            cmd.env(key, value);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("spawn golem-forge chat");
        // Only the child holds the slave now, so the reader sees the end when it exits.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let terminal = Arc::new(Mutex::new(Terminal {
            parser: vt100::Parser::new_with_callbacks(
                ROWS.try_into().expect("rows"),
                COLS.try_into().expect("cols"),
                0,
                Capture::default(),
            ),
            raw: Vec::new(),
        }));
        let (thread_terminal, thread_writer) = (terminal.clone(), writer.clone());
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let replies = {
                    let mut terminal = thread_terminal.lock().unwrap();
                    terminal.raw.extend_from_slice(&buf[..n]);
                    terminal.parser.process(&buf[..n]);
                    std::mem::take(&mut terminal.parser.callbacks_mut().replies)
                };
                if !replies.is_empty() {
                    let mut writer = thread_writer.lock().unwrap();
                    let _ = writer.write_all(&replies);
                    let _ = writer.flush();
                }
            }
        });
        Chat {
            child,
            _master: pair.master,
            writer,
            terminal,
            from: 0,
            home: env.path().display().to_string(),
            exit: None,
            reader,
        }
    }

    // ---- typing ----

    /// Types `text` (bytes as they are). Later waits only accept text from the cursor's row on.
    pub(crate) fn send(&mut self, text: &str) {
        self.from = self.view().cursor.0;
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(text.as_bytes()).expect("write to the pty");
        writer.flush().expect("flush the pty");
    }

    /// Types `text` and Enter.
    pub(crate) fn send_line(&mut self, text: &str) {
        self.send(&format!("{text}\r"));
    }

    pub(crate) fn key_ctrl_c(&mut self) {
        self.send("\x03");
    }

    fn key_esc(&mut self) {
        self.send("\x1b");
    }

    pub(crate) fn key_ctrl_d(&mut self) {
        self.send("\x04");
    }

    /// Ctrl+U: clears the input line (the line editor's cut to the start).
    pub(crate) fn key_clear_line(&mut self) {
        self.send("\x15");
    }

    fn key_up(&mut self) {
        self.send("\x1b[A");
    }

    // ---- looking ----

    fn view(&self) -> View {
        View::of(&self.terminal.lock().unwrap())
    }

    /// The visible screen, trailing spaces and blank lines trimmed, the temp dir and the version
    /// redacted: for snapshots.
    fn screen(&self) -> String {
        let screen = self.view().screen;
        let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        self.redacted(&lines[..end].join("\n"))
    }

    /// `text` with the temp dir, the version and the session's id (`/status`'s `session:`
    /// line) redacted: for snapshots.
    fn redacted(&self, text: &str) -> String {
        text.replace(&self.home, "[TMP]")
            .replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
            .lines()
            .map(|line| match line.strip_prefix("session: ") {
                Some(_) => "session: [SESSION]",
                None => line,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Everything shown since the test last typed.
    pub(crate) fn since(&self) -> String {
        self.view().text_from(self.from)
    }

    /// Everything shown since the start (rows scrolled off included).
    pub(crate) fn history(&self) -> String {
        self.view().text_from(0)
    }

    /// The window titles (and icon names) the output set, in order.
    fn titles(&self) -> Vec<String> {
        self.terminal
            .lock()
            .unwrap()
            .parser
            .callbacks()
            .titles
            .clone()
    }

    /// The raw bytes the chat wrote, lossily as text.
    fn raw(&self) -> String {
        String::from_utf8_lossy(&self.terminal.lock().unwrap().raw).into_owned()
    }

    /// The screen and the end of the raw output, for failure messages.
    pub(crate) fn dump(&self) -> String {
        let raw = self.raw();
        let tail: String = {
            let chars: Vec<char> = raw.chars().collect();
            chars[chars.len().saturating_sub(6000)..].iter().collect()
        };
        format!(
            "---- history (from row {}) ----\n{}\n---- screen ----\n{}\n---- raw output (tail) ----\n{tail:?}",
            self.from,
            self.history(),
            self.view().screen
        )
    }

    /// Polls the terminal until `check` returns something; panics with the screen after
    /// [`LIMIT`], or soon after the chat exits.
    fn poll<T>(&mut self, what: &str, mut check: impl FnMut(&View, usize) -> Option<T>) -> T {
        let deadline = Instant::now() + LIMIT;
        let mut exited_at: Option<Instant> = None;
        loop {
            if let Some(found) = check(&self.view(), self.from) {
                return found;
            }
            if exited_at.is_none() && self.try_exit().is_some() {
                exited_at = Some(Instant::now());
            }
            let gone = exited_at.is_some_and(|at| at.elapsed() > Duration::from_millis(300));
            if gone || Instant::now() >= deadline {
                let why = match self.exit {
                    Some(code) => format!("the chat exited with status {code}"),
                    None => format!("nothing after {LIMIT:?}"),
                };
                panic!("waiting for {what}: {why}\n{}", self.dump());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until `text` is shown on a row at or below the one the cursor was on when the test
    /// last typed.
    pub(crate) fn wait_for(&mut self, text: &str) {
        self.poll(&format!("{text:?}"), |view, from| {
            view.text_from(from).contains(text).then_some(())
        });
    }

    /// Waits for the first of `texts` to show (as [`Chat::wait_for`]); returns its index.
    fn wait_for_any(&mut self, texts: &[&str]) -> usize {
        self.poll(&format!("any of {texts:?}"), |view, from| {
            let shown = view.text_from(from);
            texts.iter().position(|t| shown.contains(t))
        })
    }

    /// Waits until the cursor sits right after `prompt`, with nothing typed, on a row below the
    /// one where the test last typed (a fresh prompt, not the one just answered).
    pub(crate) fn wait_prompt_text(&mut self, prompt: &str) {
        let width = prompt.chars().count();
        self.poll(&format!("the prompt {prompt:?}"), |view, from| {
            let fresh = view.cursor.0 > from || from == 0;
            (fresh
                && view.cursor_line() == prompt.trim_end()
                && usize::from(view.cursor.1) == width)
                .then_some(())
        });
    }

    /// Waits until the cursor is on a fresh row that starts with `prompt` (which may come
    /// with text already filled in).
    pub(crate) fn wait_prompt_prefilled(&mut self, prompt: &str) {
        self.poll(&format!("the prompt {prompt:?}"), |view, from| {
            (view.cursor.0 > from && view.cursor_line().starts_with(prompt.trim_end()))
                .then_some(())
        });
    }

    /// Waits for the worker's prompt, ready for input.
    fn wait_prompt(&mut self) {
        self.wait_prompt_text(PROMPT);
    }

    /// Waits for the banner and the first prompt.
    fn ready(&mut self) {
        self.wait_for("Type /help for commands");
        self.wait_prompt();
    }

    /// Sends `line` at the prompt, waits for the turn or command to finish and the prompt to
    /// come back; returns what was shown in between.
    fn turn(&mut self, line: &str) -> String {
        self.send_line(line);
        self.wait_prompt();
        self.since()
    }

    // ---- ending ----

    fn try_exit(&mut self) -> Option<i32> {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(match status.signal() {
                Some(signal) => panic!("golem-forge chat was killed by {signal}"),
                None => status.exit_code() as i32,
            });
        }
        self.exit
    }

    /// Waits for the chat to exit and returns its exit code, once what it wrote last has been
    /// read (the terminal's end, or at most two seconds more if a process it started still
    /// holds the terminal).
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(code) = self.try_exit() {
                let drained = Instant::now() + Duration::from_secs(2);
                while !self.reader.is_finished() && Instant::now() < drained {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return code;
            }
            if Instant::now() >= deadline {
                panic!(
                    "golem-forge chat did not exit within {timeout:?}\n{}",
                    self.dump()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Chat {
    fn drop(&mut self) {
        if self.exit.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---- small assertions ----

/// How many times `needle` occurs in `haystack`.
fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The request at `index` as text, with a readable failure if it is missing.
fn request_text(server: &MockServer, index: usize) -> String {
    let requests = server.requests();
    requests
        .get(index)
        .unwrap_or_else(|| panic!("only {} requests: {:#?}", requests.len(), bodies(server)))
        .body
        .to_string()
}

/// The text of the approval box in `shown`, from its top line to the choices line.
pub(crate) fn approval_box(shown: &str) -> &str {
    let start = shown
        .find("┌ Approve")
        .unwrap_or_else(|| panic!("no approval box:\n{shown}"));
    let end = shown[start..]
        .find(CHOICES)
        .unwrap_or_else(|| panic!("the box has no choices line:\n{shown}"));
    &shown[start..start + end + CHOICES.len()]
}

/// Arguments `{path, content}` of a `write_file` call.
pub(crate) fn write_args(path: &str, content: &str) -> Value {
    json!({"path": path, "content": content})
}
