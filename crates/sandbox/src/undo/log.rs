//! The undo journal on disk: `journal.jsonl`, one [`Line`] per line, appended while a session
//! changes its zones, and [`History`], what a reading of it says — each path's first
//! before-image per turn, the state the session left each path in, the turns already undone
//! and those that cannot be.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::image::Image;

/// The journal file's name in a session's undo directory.
pub(crate) const JOURNAL: &str = "journal.jsonl";
/// The directory of kept contents, one file per SHA-256.
pub(crate) const OBJECTS: &str = "objects";

/// One line of the journal. The on-disk format: renaming a field breaks older journals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub(crate) enum Line {
    /// A zone the session changed, and its host directory (so an undo can reopen it later).
    Zone { name: String, path: PathBuf },
    /// What `path` (relative to `zone`) held before `turn` first changed it.
    Before {
        turn: u32,
        zone: String,
        path: PathBuf,
        image: Image,
    },
    /// What `path` held after a change of `turn`.
    After {
        turn: u32,
        zone: String,
        path: PathBuf,
        image: Image,
    },
    /// `turn` cannot be undone, and why.
    NotUndoable { turn: u32, reason: String },
    /// An undo of `turns` started.
    UndoBegun { turns: Vec<u32> },
    /// An undo of `turns` finished.
    Undone { turns: Vec<u32> },
}

/// A path of a zone.
pub(crate) type Key = (String, PathBuf);

/// What the journal says.
#[derive(Debug, Default)]
pub(crate) struct History {
    /// Each zone's host directory.
    pub zones: BTreeMap<String, PathBuf>,
    /// Before-images in journal order: the first of each path in each turn.
    pub befores: Vec<(u32, Key, Image)>,
    /// The state the session last left each path in (after a change, or after an undo).
    pub left: HashMap<Key, Image>,
    /// Turns already undone.
    pub undone: HashSet<u32>,
    /// Turns that cannot be undone, with why.
    pub not_undoable: BTreeMap<u32, String>,
    /// An undo that started and did not finish.
    pub unfinished_undo: Option<Vec<u32>>,
    /// Paths with a before-image of the last turn and no after-image yet: a change that was
    /// cut off.
    pub cut_off: Vec<(u32, Key)>,
}

impl History {
    /// Reads the journal at `path`; a missing file is an empty history. A torn last line (a
    /// kill during a write) is ignored; a damaged line elsewhere is an error naming it.
    pub fn read(path: &Path) -> io::Result<History> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(History::default()),
            Err(err) => return Err(err),
        };
        let lines: Vec<String> = BufReader::new(file).lines().collect::<Result<_, _>>()?;
        let mut history = History::default();
        let last = lines.len().saturating_sub(1);
        for (number, text) in lines.iter().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Line>(text) {
                Ok(line) => history.add(line),
                Err(_) if number == last => {}
                Err(err) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{} line {}: {err}", path.display(), number + 1),
                    ));
                }
            }
        }
        Ok(history)
    }

    fn add(&mut self, line: Line) {
        match line {
            Line::Zone { name, path } => {
                self.zones.insert(name, path);
            }
            Line::Before {
                turn,
                zone,
                path,
                image,
            } => {
                let key = (zone, path);
                self.cut_off.push((turn, key.clone()));
                self.befores.push((turn, key, image));
            }
            Line::After {
                turn,
                zone,
                path,
                image,
            } => {
                let key = (zone, path);
                self.cut_off.retain(|(t, k)| !(*t == turn && *k == key));
                self.left.insert(key, image);
            }
            Line::NotUndoable { turn, reason } => {
                self.not_undoable.entry(turn).or_insert(reason);
            }
            Line::UndoBegun { turns } => self.unfinished_undo = Some(turns),
            Line::Undone { turns } => {
                for (key, image) in self.first_befores(&turns) {
                    self.left.insert(key, image);
                }
                self.undone.extend(turns.iter().copied());
                self.unfinished_undo = None;
            }
        }
    }

    /// The turns that changed something (or were marked not undoable while they did) and are
    /// not undone, oldest first.
    pub fn undoable_turns(&self) -> Vec<u32> {
        let turns: BTreeSet<u32> = self
            .befores
            .iter()
            .map(|(turn, _, _)| *turn)
            .chain(self.not_undoable.keys().copied())
            .filter(|turn| !self.undone.contains(turn))
            .collect();
        turns.into_iter().collect()
    }

    /// Each path's earliest before-image among `turns`, in the order first seen.
    pub fn first_befores(&self, turns: &[u32]) -> Vec<(Key, Image)> {
        let mut seen = HashSet::new();
        self.befores
            .iter()
            .filter(|(turn, _, _)| turns.contains(turn))
            .filter(|(_, key, _)| seen.insert(key.clone()))
            .map(|(_, key, image)| (key.clone(), image.clone()))
            .collect()
    }
}
