//! The sandbox's side of recording: [`Sandbox::recorded`] wraps a changing operation, keeping
//! the before-image of every path it may change and noting what each was left as. What an
//! operation may change is a [`Touch`]: one entry (with the missing directories above it,
//! which a write may create), a whole tree (a recursive delete), or a move (the source tree,
//! where each of its entries lands, and what was at the destination).

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use super::image::is_absent;
use crate::sandbox::{Sandbox, Zone};
use crate::zone_path::ZonePath;

/// What an operation may change.
pub(crate) enum Touch<'a> {
    /// One entry, and the directories above it that do not exist yet.
    Entry(&'a ZonePath),
    /// An entry and everything beneath it.
    Tree(&'a ZonePath),
    /// A move: the source tree, its entries at the destination, and the destination's tree.
    Move(&'a ZonePath, &'a ZonePath),
}

impl Sandbox {
    /// Runs `op`, keeping before-images of what `touches` names first and the images left
    /// after (also when `op` fails: it may have done part of its work). Without a journal it
    /// only runs `op`.
    pub(crate) fn recorded<T>(&self, touches: &[Touch<'_>], op: impl FnOnce() -> T) -> T {
        if self.undo_journal().is_none() {
            return op();
        }
        let change = self.begin_change(touches);
        let result = op();
        change.finish();
        result
    }

    /// Keeps the before-images of files a program outside the sandbox is about to change
    /// (git's working-tree writes); [`ExternalChange::finish`] notes what they were left as.
    pub fn external_change(&self, paths: &[ZonePath]) -> ExternalChange<'_> {
        let touches: Vec<Touch<'_>> = paths.iter().map(Touch::Entry).collect();
        self.begin_change(&touches)
    }

    fn begin_change(&self, touches: &[Touch<'_>]) -> ExternalChange<'_> {
        let Some(journal) = self.undo_journal() else {
            return ExternalChange {
                sandbox: self,
                paths: Vec::new(),
            };
        };
        let mut paths: Vec<(&Zone, PathBuf)> = Vec::new();
        for touch in touches {
            match touch {
                Touch::Entry(p) => {
                    if let Some(zone) = self.zone_of(p).ok().flatten() {
                        for rel in missing_ancestors(zone.dir(), p.relative()) {
                            paths.push((zone, rel));
                        }
                        paths.push((zone, p.relative().to_path_buf()));
                    }
                }
                Touch::Tree(p) => {
                    if let Some(zone) = self.zone_of(p).ok().flatten() {
                        for rel in tree(zone.dir(), p.relative()) {
                            paths.push((zone, rel));
                        }
                    }
                }
                Touch::Move(from, to) => {
                    let (Some(from_zone), Some(to_zone)) = (
                        self.zone_of(from).ok().flatten(),
                        self.zone_of(to).ok().flatten(),
                    ) else {
                        continue;
                    };
                    for rel in tree(from_zone.dir(), from.relative()) {
                        if let Ok(rest) = rel.strip_prefix(from.relative()) {
                            paths.push((to_zone, to.relative().join(rest)));
                        }
                        paths.push((from_zone, rel));
                    }
                    for rel in tree(to_zone.dir(), to.relative()) {
                        paths.push((to_zone, rel));
                    }
                }
            }
        }
        paths.retain(|(_, rel)| !rel.as_os_str().is_empty());
        for (zone, rel) in &paths {
            journal.before(zone.name(), zone.host_path(), zone.dir(), rel);
        }
        ExternalChange {
            sandbox: self,
            paths,
        }
    }
}

/// A change in progress whose before-images are kept (see [`Sandbox::external_change`]).
#[must_use = "finish notes what the paths were left as"]
pub struct ExternalChange<'a> {
    sandbox: &'a Sandbox,
    paths: Vec<(&'a Zone, PathBuf)>,
}

impl ExternalChange<'_> {
    /// Notes what each path was left as (also after a failure: it may have done part).
    pub fn finish(self) {
        if let Some(journal) = self.sandbox.undo_journal() {
            for (zone, rel) in &self.paths {
                journal.after(zone.name(), zone.dir(), rel);
            }
        }
    }
}

/// The directories above `rel` (outermost first) that do not exist.
fn missing_ancestors(dir: &Dir, rel: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = rel
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| matches!(dir.symlink_metadata(a), Err(err) if is_absent(&err)))
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// `rel` and, for a directory (not followed through a link), everything beneath it, parents
/// before children. Unreadable directories are listed without their entries.
fn tree(dir: &Dir, rel: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![rel.to_path_buf()];
    while let Some(path) = stack.pop() {
        let is_dir = dir.symlink_metadata(&path).is_ok_and(|meta| meta.is_dir());
        if is_dir && let Ok(entries) = dir.read_dir(&path) {
            let mut names: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| path.join(entry.file_name()))
                .collect();
            names.sort();
            stack.extend(names.into_iter().rev());
        }
        out.push(path);
    }
    out
}
