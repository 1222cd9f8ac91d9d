//! Undoing turns: [`UndoJournal::undo`] picks the turns, checks that every path is still as the
//! session left it (a path changed since from outside is a conflict: nothing is changed unless
//! forced), then puts each path back to its before-image through a [`Sandbox`] on the zones
//! the journal names — removals deepest first, then directories, files and links shallowest
//! first, each file by temporary file and rename — between an `undoBegun` and an `undone` line,
//! so a kill leaves every file old or new and the next undo finishes the work.

use std::path::Path;

use golem_protocol::ToolErrorCode;

use super::image::{Image, read_image};
use super::journal::UndoJournal;
use super::log::{History, Key, Line, OBJECTS};
use crate::sandbox::Sandbox;
use crate::zone::{ZoneConfig, ZoneMode};
use crate::zone_path::ZonePath;

/// Which turns to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoScope {
    /// The last `n` turns that changed files and are not undone yet.
    Last(usize),
    /// Every such turn from this one (a user turn number, 1 the first) on.
    From(u32),
}

/// A path that changed outside the session since the session left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoConflict {
    /// Its virtual path (`/work/notes.md`).
    pub path: String,
    /// What the session left there.
    pub left: String,
    /// What is there now.
    pub found: String,
}

/// What an undo did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoReport {
    /// The turns undone, oldest first.
    pub turns: Vec<u32>,
    /// The virtual paths put back as they were, in the order they were.
    pub restored: Vec<String>,
    /// The virtual paths removed because they did not exist before (files the turns made).
    pub removed: Vec<String>,
    /// Paths left as they are, with why (a directory that now holds other files).
    pub kept: Vec<(String, String)>,
    /// Conflicts overwritten (with `force`).
    pub forced: Vec<UndoConflict>,
}

impl UndoReport {
    /// What the user is told: `undid turn 3: /work/a.txt put back; /work/new.txt removed`, with
    /// what was kept and what was overwritten.
    pub fn summary(&self) -> String {
        let mut text = format!("undid {}: {}", turn_list(&self.turns), self.changes());
        for (path, why) in &self.kept {
            text.push_str(&format!("; {path} {why}"));
        }
        if !self.forced.is_empty() {
            let forced: Vec<String> = self.forced.iter().map(|c| c.path.clone()).collect();
            text.push_str(&format!(
                "; overwrote what changed outside the session in {}",
                listed(&forced)
            ));
        }
        text
    }

    /// `A put back; B removed`, either alone, or that nothing needed to be put back.
    fn changes(&self) -> String {
        let mut parts = Vec::new();
        if !self.restored.is_empty() {
            parts.push(format!(
                "{} put back",
                crate::shown_paths(&self.restored, 8)
            ));
        }
        if !self.removed.is_empty() {
            parts.push(format!("{} removed", crate::shown_paths(&self.removed, 8)));
        }
        if parts.is_empty() {
            return "nothing needed to be put back".to_owned();
        }
        parts.join("; ")
    }

    /// What the model is told, as a note in its conversation.
    pub fn model_note(&self) -> String {
        if self.restored.is_empty() && self.removed.is_empty() {
            return format!(
                "[The user undid {}; no file needed to be put back.]",
                turn_list(&self.turns)
            );
        }
        format!(
            "[The user undid the file changes of {}: {}, as before those turns. Read files \
             again before relying on what was done then.]",
            turn_list(&self.turns),
            self.changes()
        )
    }
}

fn listed(paths: &[String]) -> String {
    crate::shown_paths(paths, 8)
}

/// Why nothing was undone.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum UndoError {
    /// No turn of the session changed files (or all are undone).
    #[error("nothing to undo: {0}")]
    Nothing(String),
    /// A chosen turn cannot be undone.
    #[error("turn {turn} cannot be undone: {reason}")]
    NotUndoable {
        turn: u32,
        /// Why.
        reason: String,
    },
    /// Files changed outside the session since; nothing was changed.
    #[error("{} changed since the session left {}; nothing was undone (force it to overwrite {})",
        conflict_list(.conflicts),
        if .conflicts.len() == 1 { "it" } else { "them" },
        if .conflicts.len() == 1 { "it" } else { "them" })]
    Conflicts {
        /// The turns that would have been undone.
        turns: Vec<u32>,
        /// The changed paths.
        conflicts: Vec<UndoConflict>,
    },
    /// The journal or a kept content could not be read, or a zone reopened.
    #[error("the undo journal cannot be used: {0}")]
    Journal(String),
    /// Putting a path back failed; the paths before it are back, the rest not (undo again to
    /// finish).
    #[error(
        "undo stopped at {path}: {message} ({done} of {total} paths put back; undo again to finish)"
    )]
    Stopped {
        /// Where it stopped.
        path: String,
        /// The error.
        message: String,
        /// Paths put back.
        done: usize,
        /// Paths to put back.
        total: usize,
    },
}

fn conflict_list(conflicts: &[UndoConflict]) -> String {
    let paths: Vec<String> = conflicts
        .iter()
        .map(|c| format!("{} (left {}, now {})", c.path, c.left, c.found))
        .collect();
    crate::shown_paths(&paths, 5)
}

/// One path to put back.
struct Step {
    key: Key,
    path: ZonePath,
    target: Image,
    current: Image,
}

impl UndoJournal {
    /// Undoes the turns `scope` names (see the module docs); `force` overwrites conflicts.
    pub fn undo(&self, scope: UndoScope, force: bool) -> Result<UndoReport, UndoError> {
        let history = self
            .history()
            .map_err(|e| UndoError::Journal(e.to_string()))?;
        let turns = choose(&history, scope)?;
        let sandbox = zones_sandbox(&history)?;
        let objects = self.dir().join(OBJECTS);
        let mut steps = Vec::new();
        let mut conflicts = Vec::new();
        for (key, target) in history.first_befores(&turns) {
            let path = zone_path(&sandbox, &key)?;
            let zone = sandbox
                .zone_of(&path)
                .ok()
                .flatten()
                .ok_or_else(|| UndoError::Journal(format!("zone {} is not open", key.0)))?;
            let current = read_image(zone.dir(), &key.1, None)
                .map_err(|e| UndoError::Journal(format!("{}: {e}", path.virtual_path())))?;
            if current.same_as(&target) {
                continue;
            }
            if let Some(left) = history.left.get(&key)
                && !current.same_as(left)
            {
                conflicts.push(UndoConflict {
                    path: path.virtual_path(),
                    left: left.describe(),
                    found: current.describe(),
                });
            }
            steps.push(Step {
                key,
                path,
                target,
                current,
            });
        }
        if !conflicts.is_empty() && !force {
            return Err(UndoError::Conflicts { turns, conflicts });
        }
        self.append(&Line::UndoBegun {
            turns: turns.clone(),
        })
        .map_err(|e| UndoError::Journal(e.to_string()))?;
        let mut report = UndoReport {
            turns: turns.clone(),
            forced: conflicts,
            ..UndoReport::default()
        };
        put_back(&sandbox, &objects, &mut steps, &mut report)?;
        self.append(&Line::Undone { turns })
            .map_err(|e| UndoError::Journal(e.to_string()))?;
        Ok(report)
    }

    /// What a session cut off left unsettled, for the user on resume: an undo that did not
    /// finish, or changes of the last turn that never got their after-image (each said to be
    /// the old or the new version).
    pub fn interrupted(&self) -> Option<String> {
        let history = self.history().ok()?;
        if let Some(turns) = &history.unfinished_undo {
            return Some(format!(
                "an undo of {} was cut off; undo again to finish it (paths already back are skipped)",
                turn_list(turns)
            ));
        }
        let last = history.befores.last().map(|(turn, _, _)| *turn)?;
        let sandbox = zones_sandbox(&history).ok()?;
        let mut lines = Vec::new();
        for (turn, key) in &history.cut_off {
            if *turn != last {
                continue;
            }
            let path = zone_path(&sandbox, key).ok()?;
            let zone = sandbox.zone_of(&path).ok().flatten()?;
            let before = history
                .befores
                .iter()
                .find(|(t, k, _)| t == turn && k == key)
                .map(|(_, _, image)| image)?;
            let now = read_image(zone.dir(), &key.1, None).ok()?;
            let state = if now.same_as(before) {
                "unchanged (the change did not happen)"
            } else {
                "changed (the change was applied)"
            };
            lines.push(format!("{} is {state}", path.virtual_path()));
        }
        if lines.is_empty() {
            return None;
        }
        Some(format!(
            "the session was cut off while turn {last} changed files: {}",
            lines.join("; ")
        ))
    }
}

/// The turns `scope` picks.
fn choose(history: &History, scope: UndoScope) -> Result<Vec<u32>, UndoError> {
    let undoable = history.undoable_turns();
    let turns: Vec<u32> = match scope {
        UndoScope::Last(n) => undoable[undoable.len().saturating_sub(n)..].to_vec(),
        UndoScope::From(from) => undoable.iter().copied().filter(|t| *t >= from).collect(),
    };
    if turns.is_empty() {
        let why = match (scope, undoable.last()) {
            (_, None) => "no turn of this session changed files (or they are undone)".to_owned(),
            (UndoScope::From(from), Some(last)) => {
                format!("no turn from {from} on changed files (the last that did is {last})")
            }
            (UndoScope::Last(_), Some(_)) => "no turn was asked for".to_owned(),
        };
        return Err(UndoError::Nothing(why));
    }
    if let Some((turn, reason)) = turns
        .iter()
        .find_map(|t| history.not_undoable.get(t).map(|r| (*t, r.clone())))
    {
        return Err(UndoError::NotUndoable { turn, reason });
    }
    Ok(turns)
}

/// A sandbox on the zones the journal names, each `rw`, with no journal of its own (putting
/// back is not recorded).
fn zones_sandbox(history: &History) -> Result<Sandbox, UndoError> {
    let configs: Vec<ZoneConfig> = history
        .zones
        .iter()
        .map(|(name, path)| ZoneConfig {
            path: Some(path.clone()),
            ..ZoneConfig::new(name.clone(), ZoneMode::Rw)
        })
        .collect();
    // Zones of one mode may nest; `path`s are absolute, so the base is not used.
    Sandbox::open(Path::new("/"), &configs).map_err(|e| UndoError::Journal(e.to_string()))
}

fn zone_path(sandbox: &Sandbox, key: &Key) -> Result<ZonePath, UndoError> {
    let index = sandbox
        .zones()
        .iter()
        .position(|zone| zone.name() == key.0)
        .ok_or_else(|| UndoError::Journal(format!("the journal has no zone {}", key.0)))?;
    Ok(ZonePath::in_zone(index, key.0.clone(), key.1.clone()))
}

/// Puts every step's path back (see the module docs for the order).
fn put_back(
    sandbox: &Sandbox,
    objects: &Path,
    steps: &mut [Step],
    report: &mut UndoReport,
) -> Result<(), UndoError> {
    let total = steps.len();
    let depth = |step: &Step| step.key.1.components().count();
    // Removals, deepest first: what was not there, or was something of another kind.
    steps.sort_by_key(|step| std::cmp::Reverse(depth(step)));
    for (done, step) in steps.iter().enumerate() {
        let is_dir = |image: &Image| matches!(image, Image::Dir { .. });
        let remove = match (&step.current, &step.target) {
            (Image::Absent, _) => false,
            (_, Image::Absent) => true,
            (current, target) => is_dir(current) != is_dir(target),
        };
        if !remove {
            continue;
        }
        let vpath = step.path.virtual_path();
        let result = match step.current {
            Image::Dir { .. } => sandbox.remove_empty_dir(&step.path),
            _ => sandbox.remove_file(&step.path),
        };
        match result {
            Ok(()) => {
                if matches!(step.target, Image::Absent) {
                    report.removed.push(vpath);
                }
            }
            Err(err) if err.code == ToolErrorCode::FileNotFound => {}
            Err(err) if matches!(step.current, Image::Dir { .. }) => {
                report.kept.push((
                    vpath,
                    format!(
                        "kept: it holds files the turn did not make ({})",
                        err.message
                    ),
                ));
            }
            Err(err) => {
                return Err(UndoError::Stopped {
                    path: vpath,
                    message: err.message,
                    done,
                    total,
                });
            }
        }
    }
    // Then what was there, shallowest first.
    steps.sort_by_key(depth);
    for (done, step) in steps.iter().enumerate() {
        let vpath = step.path.virtual_path();
        let stopped = |message: String| UndoError::Stopped {
            path: vpath.clone(),
            message,
            done,
            total,
        };
        let result = match &step.target {
            Image::Absent => continue,
            Image::Dir { mode } => sandbox
                .create_dir_all(&step.path)
                .and_then(|()| sandbox.set_mode(&step.path, *mode)),
            Image::File { sha256, mode, .. } => {
                let mut content = std::fs::File::open(objects.join(sha256))
                    .map_err(|e| stopped(format!("its kept content is missing: {e}")))?;
                sandbox.put_file(&step.path, &mut content, *mode, true)
            }
            Image::Symlink { target } => sandbox.put_symlink(&step.path, target, true),
            Image::Special => {
                report
                    .kept
                    .push((vpath, "kept: a special file cannot be put back".to_owned()));
                continue;
            }
        };
        result.map_err(|err| stopped(err.message))?;
        report.restored.push(vpath);
    }
    Ok(())
}

/// `turn 3` or `turns 3, 4`.
pub fn turn_list(turns: &[u32]) -> String {
    let list: Vec<String> = turns.iter().map(u32::to_string).collect();
    match turns.len() {
        1 => format!("turn {}", list.join("")),
        _ => format!("turns {}", list.join(", ")),
    }
}
