//! Git directories a changeset would make (issue 45): a jailed run can lay out a whole bare
//! repository (`HEAD`, `objects/`, `refs/`, `hooks/post-receive`) in one go, and each of its
//! entries, judged against the zone as it is, looks ordinary. Judged here against the zone as
//! it would be after the changes: a directory that is no git directory now and would be one
//! refuses the changeset, as creating a `.git` does.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{Change, ChangeKind, ChangesetError};
use crate::protected::{GIT_DIR_MARKERS, Protection, is_git_dir_by};
use crate::sandbox::Sandbox;
use crate::zone_path::ZonePath;

/// Refuses `changes` when they would make a git directory of a directory that is none.
pub(super) fn refuse_new_git_dirs(
    sandbox: &Sandbox,
    changes: &[Change],
) -> Result<(), ChangesetError> {
    // Per zone and path: whether the entry is there after the changes, and is a directory.
    let mut after: HashMap<(&str, &Path), Option<bool>> = HashMap::new();
    let mut candidates: HashSet<ZonePath> = HashSet::new();
    for change in changes {
        let path = change.path();
        let Some(zone) = path.zone_name() else {
            continue;
        };
        let state = match change.kind() {
            ChangeKind::Delete { .. } => None,
            ChangeKind::CreateDir { .. } => Some(true),
            ChangeKind::SetMode { dir, .. } => Some(*dir),
            ChangeKind::CreateFile { .. }
            | ChangeKind::WriteFile { .. }
            | ChangeKind::Symlink { .. } => Some(false),
        };
        after.insert((zone, path.relative()), state);
        let is_marker = path
            .file_name()
            .is_some_and(|name| GIT_DIR_MARKERS.contains(&name.to_ascii_lowercase().as_str()));
        if state.is_some()
            && is_marker
            && let Some(parent) = path.parent()
        {
            candidates.insert(parent);
        }
    }
    for dir in candidates {
        let Some(zone_name) = dir.zone_name() else {
            continue;
        };
        let Some(zone) = sandbox.zone(zone_name) else {
            continue;
        };
        let now = |name: &str| -> Option<bool> {
            let rel = join(dir.relative(), name);
            zone.dir().metadata(&rel).ok().map(|meta| meta.is_dir())
        };
        let then = |name: &str| -> Option<bool> {
            let rel = join(dir.relative(), name);
            match after.get(&(zone_name, rel.as_path())) {
                Some(state) => *state,
                None => now(name),
            }
        };
        if is_git_dir_by(then) && !is_git_dir_by(now) {
            let path = dir.virtual_path();
            let reason = Protection::Protected { path: path.clone() }
                .reason()
                .unwrap_or_default();
            return Err(ChangesetError::Refused {
                path,
                reason: format!("{reason} (it would become a git directory)"),
            });
        }
    }
    Ok(())
}

fn join(dir: &Path, name: &str) -> PathBuf {
    if dir.as_os_str().is_empty() {
        PathBuf::from(name)
    } else {
        dir.join(name)
    }
}
