//! [`UndoJournal`]: the recording side. A sandbox carrying one calls [`UndoJournal::before`]
//! for every path an operation may change (its before-image is kept the first time a turn
//! touches it: the content goes into `objects/<sha256>`, the image into the journal) and
//! [`UndoJournal::after`] once the operation is over (the image the session left). Over the
//! session's size cap a turn is marked not undoable (and says so, with a warning once the store
//! is most of the way there). Nothing is written for a session that changes nothing.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cap_std::fs::Dir;

use super::image::{Image, is_absent, read_image};
use super::log::{History, JOURNAL, Key, Line, OBJECTS};

/// The default size cap of a session's kept contents: 256 MiB.
pub const DEFAULT_UNDO_CAP: u64 = 256 << 20;
/// The share of the cap past which the user is warned (80 %).
const WARN_PERCENT: u64 = 80;

/// Something the journal wants the user to know (the store is nearly full, a turn cannot be
/// undone).
pub type UndoNotices = Arc<dyn Fn(String) + Send + Sync>;

/// The undo journal of one session (see the module docs). Shared by every sandbox of the
/// session (sub-workers' too) through an `Arc`.
pub struct UndoJournal {
    state: Mutex<State>,
    notices: Mutex<Option<UndoNotices>>,
}

impl std::fmt::Debug for UndoJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UndoJournal")
            .field("dir", &self.lock().dir)
            .finish_non_exhaustive()
    }
}

struct State {
    /// Whether `dir` is the session's (an unbound journal records nothing).
    bound: bool,
    dir: PathBuf,
    cap: u64,
    turn: u32,
    /// Paths whose before-image this turn has kept.
    seen: HashSet<Key>,
    /// Bytes of kept contents.
    bytes: u64,
    warned: bool,
    /// Turns marked not undoable (nothing more is kept for them).
    closed: HashSet<u32>,
    zones: HashSet<String>,
    file: Option<File>,
}

/// Makes temporary object names unique within this process.
static TEMP: AtomicU64 = AtomicU64::new(0);

impl UndoJournal {
    /// The journal in `dir` (`<program root>/.golem-forge/undo/<session id>`), continuing one
    /// that exists; contents beyond `cap` bytes are not kept.
    pub fn open(dir: &Path, cap: u64) -> io::Result<UndoJournal> {
        let state = State::open(dir, cap)?;
        Ok(UndoJournal {
            state: Mutex::new(state),
            notices: Mutex::new(None),
        })
    }

    /// A journal that records nothing until [`UndoJournal::switch`] gives it its directory
    /// (the session's id is known only once its transcript exists).
    pub fn unbound(cap: u64) -> UndoJournal {
        UndoJournal {
            state: Mutex::new(State::unbound(cap)),
            notices: Mutex::new(None),
        }
    }

    /// Where notices go (the session's status line).
    pub fn set_notices(&self, notices: UndoNotices) {
        *self.notices.lock().unwrap_or_else(PoisonError::into_inner) = Some(notices);
    }

    /// The journal's directory.
    pub fn dir(&self) -> PathBuf {
        self.lock().dir.clone()
    }

    /// Changes from now on belong to user turn `turn` (1 is the session's first input).
    pub fn begin_turn(&self, turn: u32) {
        let mut state = self.lock();
        state.turn = turn;
        state.seen.clear();
    }

    /// Moves to another session's directory (a new session started in the same process); on
    /// an error the journal records nothing more.
    pub fn switch(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.lock();
        let (turn, cap) = (state.turn, state.cap);
        match State::open(dir, cap) {
            Ok(opened) => {
                *state = opened;
                state.turn = turn;
                Ok(())
            }
            Err(err) => {
                // Never left recording into another session's journal.
                *state = State::unbound(cap);
                Err(err)
            }
        }
    }

    /// Flushes the journal to disk (at the end of a turn).
    pub fn sync(&self) {
        if let Some(file) = &self.lock().file {
            let _ = file.sync_data();
        }
    }

    /// Keeps the before-image of `rel` in zone `zone` (host directory `host`, opened as `dir`)
    /// unless this turn already has it.
    pub(crate) fn before(&self, zone: &str, host: &Path, dir: &Dir, rel: &Path) {
        self.record(|state, turn| {
            let key = (zone.to_owned(), rel.to_path_buf());
            if state.seen.contains(&key) {
                return None;
            }
            let result = state
                .zone_line(zone, host)
                .and_then(|()| state.keep(dir, rel));
            match result {
                Ok(Kept::Image(image)) => {
                    state.seen.insert(key.clone());
                    let line = Line::Before {
                        turn,
                        zone: key.0,
                        path: key.1,
                        image,
                    };
                    match state.append(&line) {
                        Ok(()) => state.nearly_full(),
                        Err(err) => {
                            state.close_turn(format!("the undo journal cannot be written: {err}"))
                        }
                    }
                }
                Ok(Kept::OverCap(size)) => {
                    let reason = format!(
                        "it changed more than the session's undo store holds ({}; a file of {} \
                         did not fit)",
                        amount(state.cap),
                        amount(size)
                    );
                    state.close_turn(reason)
                }
                Err(err) => state.close_turn(format!(
                    "the before-image of /{zone}/{} could not be kept: {err}",
                    rel.display()
                )),
            }
        });
    }

    /// Notes the image `rel` was left in after a change.
    pub(crate) fn after(&self, zone: &str, dir: &Dir, rel: &Path) {
        self.record(|state, turn| {
            let image = match read_image(dir, rel, None) {
                Ok(image) => image,
                Err(err) => {
                    return state.close_turn(format!(
                        "/{zone}/{} could not be read after the change: {err}",
                        rel.display()
                    ));
                }
            };
            let line = Line::After {
                turn,
                zone: zone.to_owned(),
                path: rel.to_path_buf(),
                image,
            };
            match state.append(&line) {
                Ok(()) => None,
                Err(err) => state.close_turn(format!("the undo journal cannot be written: {err}")),
            }
        });
    }

    /// Runs `step` on the state of the current turn when it is recorded (bound, not closed),
    /// then tells the notice it gives, with the lock released.
    fn record(&self, step: impl FnOnce(&mut State, u32) -> Option<String>) {
        let notice = {
            let mut state = self.lock();
            let turn = state.turn;
            if !state.bound || state.closed.contains(&turn) {
                return;
            }
            step(&mut state, turn)
        };
        if let Some(notice) = notice {
            self.notify(notice);
        }
    }

    /// Appends `line` (an undo's start or end).
    pub(crate) fn append(&self, line: &Line) -> io::Result<()> {
        let mut state = self.lock();
        state.append(line)?;
        if let Some(file) = &state.file {
            file.sync_data()?;
        }
        Ok(())
    }

    /// What the journal says now.
    pub(crate) fn history(&self) -> io::Result<History> {
        History::read(&self.lock().dir.join(JOURNAL))
    }

    fn notify(&self, notice: String) {
        let notices = self
            .notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match notices {
            Some(notices) => notices(notice),
            None => tracing::warn!("{notice}"),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What keeping a before-image gave.
enum Kept {
    Image(Image),
    /// The file (of this many bytes) would pass the cap.
    OverCap(u64),
}

impl State {
    fn open(dir: &Path, cap: u64) -> io::Result<State> {
        let history = History::read(&dir.join(JOURNAL))?;
        let bytes = objects_size(&dir.join(OBJECTS))?;
        Ok(State {
            bound: true,
            dir: dir.to_path_buf(),
            cap,
            turn: 0,
            seen: HashSet::new(),
            bytes,
            warned: bytes * 100 >= cap.saturating_mul(WARN_PERCENT),
            closed: history.not_undoable.keys().copied().collect(),
            zones: history.zones.keys().cloned().collect(),
            file: None,
        })
    }

    fn unbound(cap: u64) -> State {
        State {
            bound: false,
            dir: PathBuf::new(),
            cap,
            turn: 0,
            seen: HashSet::new(),
            bytes: 0,
            warned: false,
            closed: HashSet::new(),
            zones: HashSet::new(),
            file: None,
        }
    }

    /// Writes the zone's line the first time the session changes it.
    fn zone_line(&mut self, zone: &str, host: &Path) -> io::Result<()> {
        if self.zones.contains(zone) {
            return Ok(());
        }
        let path = std::fs::canonicalize(host).unwrap_or_else(|_| host.to_path_buf());
        self.append(&Line::Zone {
            name: zone.to_owned(),
            path,
        })?;
        self.zones.insert(zone.to_owned());
        Ok(())
    }

    /// Reads the image of `rel`, keeping a file's content as an object (once per content).
    fn keep(&mut self, dir: &Dir, rel: &Path) -> io::Result<Kept> {
        let size = match dir.symlink_metadata(rel) {
            Ok(meta) if meta.is_file() => meta.len(),
            Ok(_) => 0,
            Err(err) if is_absent(&err) => 0,
            Err(err) => return Err(err),
        };
        if size == 0 {
            return read_image(dir, rel, None).map(Kept::Image);
        }
        if self.bytes.saturating_add(size) > self.cap {
            return Ok(Kept::OverCap(size));
        }
        let objects = self.dir.join(OBJECTS);
        std::fs::create_dir_all(&objects)?;
        let temp = objects.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            TEMP.fetch_add(1, Ordering::Relaxed)
        ));
        let mut file = File::create(&temp)?;
        let image = read_image(dir, rel, Some(&mut file));
        let image = match image.and_then(|image| file.flush().map(|()| image)) {
            Ok(image) => image,
            Err(err) => {
                let _ = std::fs::remove_file(&temp);
                return Err(err);
            }
        };
        match &image {
            Image::File { sha256, size, .. } => {
                let object = objects.join(sha256);
                if object.exists() {
                    let _ = std::fs::remove_file(&temp);
                } else {
                    std::fs::rename(&temp, &object)?;
                    self.bytes += size;
                }
            }
            // Replaced by something else between the two looks: nothing to keep.
            Image::Absent | Image::Symlink { .. } | Image::Dir { .. } | Image::Special => {
                let _ = std::fs::remove_file(&temp);
            }
        }
        Ok(Kept::Image(image))
    }

    fn append(&mut self, line: &Line) -> io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(io::Error::other)?;
        text.push('\n');
        if self.file.is_none() {
            std::fs::create_dir_all(&self.dir)?;
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.dir.join(JOURNAL))?;
            self.file = Some(file);
        }
        match &mut self.file {
            // One write per line: a kill leaves at most a torn last line, which reading skips.
            Some(file) => file.write_all(text.as_bytes()),
            None => Ok(()),
        }
    }

    /// Marks this turn not undoable; the notice to show.
    fn close_turn(&mut self, reason: String) -> Option<String> {
        let turn = self.turn;
        if !self.closed.insert(turn) {
            return None;
        }
        let line = Line::NotUndoable {
            turn,
            reason: reason.clone(),
        };
        if let Err(err) = self.append(&line) {
            tracing::warn!(%err, "the undo journal cannot be written");
        }
        Some(format!("undo: this turn cannot be undone: {reason}"))
    }

    /// The warning when the store passes most of its cap, once.
    fn nearly_full(&mut self) -> Option<String> {
        if self.warned || self.bytes * 100 < self.cap.saturating_mul(WARN_PERCENT) {
            return None;
        }
        self.warned = true;
        Some(format!(
            "undo: the session's undo store is {}% full ({} of {}); a turn that changes \
             more than is left cannot be undone",
            self.bytes * 100 / self.cap.max(1),
            amount(self.bytes),
            amount(self.cap)
        ))
    }
}

/// The bytes of the objects kept in `dir` (missing: none).
fn objects_size(dir: &Path) -> io::Result<u64> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(err),
    };
    let mut total = 0;
    for entry in entries {
        let entry = entry?;
        if !entry.file_name().to_string_lossy().starts_with('.') {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

/// `12 bytes`, `3 KiB`, `256 MiB`.
fn amount(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..0x10_0000 => format!("{} KiB", bytes >> 10),
        _ => format!("{} MiB", bytes >> 20),
    }
}
