//! Applying a changeset to the zones through the [`Sandbox`] (see the parent module for the
//! order). Everything the sandbox would refuse (a zone that is not `rw`, a protected path) is
//! checked for every change before the first is applied, so such a changeset changes nothing.
//! A failure after that (the zone changed meanwhile, the disk is full) stops at that change:
//! the ones before it stay applied, and the error says how far it got.

use std::collections::HashSet;

use golem_protocol::{ToolError, ToolErrorCode};

use super::scan::open_file;
use super::{Change, ChangeKind, Changeset};
use crate::sandbox::Sandbox;
use crate::zone_path::ZonePath;

/// Why applying a changeset stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("applying the changes stopped at {path} after {applied} of {total}: {}", error.message)]
pub struct ApplyError {
    /// How many changes were applied before it stopped (in the changeset's order).
    pub applied: usize,
    /// How many there were.
    pub total: usize,
    /// The virtual path of the change that failed.
    pub path: String,
    /// What failed.
    pub error: ToolError,
}

impl Changeset {
    /// Applies every change to the zones of `sandbox` (the sandbox the run was jailed with, or
    /// one with the same zones), in order, then removes the layers. Returns how many changes
    /// were applied.
    pub fn apply(self, sandbox: &Sandbox) -> Result<usize, Box<ApplyError>> {
        let total = self.changes.len();
        let stop = |applied: usize, change: &Change, error: ToolError| {
            Box::new(ApplyError {
                applied,
                total,
                path: change.virtual_path(),
                error,
            })
        };
        precheck(sandbox, &self.changes).map_err(|(change, error)| stop(0, change, error))?;
        for (applied, change) in self.changes.iter().enumerate() {
            self.apply_one(sandbox, change)
                .map_err(|error| stop(applied, change, error))?;
        }
        // Directories get their final modes last, deepest first: one made read-only was
        // filled before.
        for change in self.changes.iter().rev() {
            if let ChangeKind::CreateDir { mode } | ChangeKind::SetMode { mode, dir: true } =
                change.kind
                && mode & 0o700 != 0o700
            {
                sandbox
                    .set_mode(change.path(), mode)
                    .map_err(|error| stop(total, change, error))?;
            }
        }
        if let Err(err) = self.discard() {
            tracing::warn!(%err, "could not remove a run's copy-on-write layers");
        }
        Ok(total)
    }

    fn apply_one(&self, sandbox: &Sandbox, change: &Change) -> Result<(), ToolError> {
        let path = change.path();
        match &change.kind {
            ChangeKind::CreateDir { mode } => {
                sandbox.create_dir_all(path)?;
                sandbox.set_mode(path, mode | 0o700)
            }
            ChangeKind::SetMode { mode, dir: true } => sandbox.set_mode(path, mode | 0o700),
            ChangeKind::SetMode { mode, dir: false } => sandbox.set_mode(path, *mode),
            ChangeKind::CreateFile { mode, .. } => self.put_file(sandbox, change, *mode, false),
            ChangeKind::WriteFile { mode, .. } => self.put_file(sandbox, change, *mode, true),
            ChangeKind::Symlink { target, replaces } => {
                sandbox.put_symlink(path, target, *replaces)
            }
            ChangeKind::Delete { dir } => {
                let removed = if *dir {
                    sandbox.remove_empty_dir(path)
                } else {
                    sandbox.remove_file(path)
                };
                match removed {
                    // Already gone: what the change wanted.
                    Err(err) if err.code == ToolErrorCode::FileNotFound => Ok(()),
                    other => other,
                }
            }
        }
    }

    /// Puts the new content of `change`'s file, from the run's layer, in place.
    fn put_file(
        &self,
        sandbox: &Sandbox,
        change: &Change,
        mode: u32,
        replace: bool,
    ) -> Result<(), ToolError> {
        let vpath = change.virtual_path();
        let unreadable = |err: std::io::Error| {
            ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("the new content of {vpath} cannot be read from the run's layer: {err}"),
            )
        };
        let upper = self
            .upper(change.path())
            .ok_or_else(|| unreadable(std::io::Error::from(std::io::ErrorKind::NotFound)))?;
        let mut file = open_file(upper, change.path().relative()).map_err(unreadable)?;
        sandbox.put_file(change.path(), &mut file, mode, replace)
    }
}

/// What the sandbox would refuse of `changes` whatever the zone holds: a zone that is not
/// `rw`, a protected path. A removed directory is judged with everything in it, so what is
/// removed with it is not judged again.
fn precheck<'a>(sandbox: &Sandbox, changes: &'a [Change]) -> Result<(), (&'a Change, ToolError)> {
    let removed_dirs: HashSet<&ZonePath> = changes
        .iter()
        .filter(|change| change.kind == ChangeKind::Delete { dir: true })
        .map(Change::path)
        .collect();
    for change in changes {
        let path = change.path();
        sandbox
            .check_writable(path)
            .map_err(|error| (change, error))?;
        let protection = match change.kind {
            ChangeKind::Delete { .. } => {
                if path
                    .parent()
                    .is_some_and(|parent| removed_dirs.contains(&parent))
                {
                    continue;
                }
                sandbox.removal_protection(path)
            }
            _ => sandbox.protection(path),
        };
        protection.check().map_err(|error| (change, error))?;
    }
    Ok(())
}
