//! What a queued batch runs, stored with it: every consumer runs its items the same way, with
//! the worker found in its own program root.

use std::path::{Path, PathBuf};

use golem_protocol::ApprovalMode;
use serde::{Deserialize, Serialize};

/// A queued batch's settings (`golem-forge:batch:<name>:meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueMeta {
    /// The worker as a path relative to the program root (`/`-separated), found by each
    /// consumer under its own `--root`.
    pub worker: String,
    /// SHA-256 of the items, hex: enqueueing the same items again under the name is a no-op.
    pub input_hash: String,
    /// How many items.
    pub items: usize,
    /// When the batch was queued, RFC 3339 in UTC.
    pub queued: String,
    /// The model for every item, when the batch names one (else the worker's, or the
    /// consumer's `GOLEM_FORGE_MODEL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How calls that need consent are decided (else each consumer's config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalMode>,
    /// Most model turns of each item's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Deliveries after which an item is given up (the dead-letter list).
    pub max_deliveries: u32,
}

impl QueueMeta {
    /// The batch's worker file in the program at `root`. The path comes from the queue, so it
    /// is held to what `batch --queue` writes: relative, `/`-separated, no `.` or `..`, and
    /// still inside `root` once symbolic links are followed.
    pub fn worker_file(&self, root: &Path) -> Result<PathBuf, WorkerNotHere> {
        let parts: Vec<&str> = self.worker.split('/').collect();
        let plain = parts
            .iter()
            .all(|part| !part.is_empty() && *part != "." && *part != ".." && !part.contains('\0'));
        if !plain {
            return Err(WorkerNotHere::NotInside(self.worker.clone()));
        }
        let path: PathBuf = parts
            .iter()
            .fold(root.to_path_buf(), |path, part| path.join(part));
        let (Ok(file), Ok(root)) = (path.canonicalize(), root.canonicalize()) else {
            return Err(WorkerNotHere::Missing(path));
        };
        if !file.starts_with(&root) {
            return Err(WorkerNotHere::NotInside(self.worker.clone()));
        }
        if !file.is_file() {
            return Err(WorkerNotHere::Missing(path));
        }
        Ok(path)
    }
}

/// Why a consumer cannot run a batch's worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerNotHere {
    /// The queue names a path that is not plainly inside the program.
    #[error("the worker `{0}` the queue names is not a path inside the program")]
    NotInside(String),
    /// This program has no such file.
    #[error("there is no worker file {}", .0.display())]
    Missing(PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(worker: &str) -> QueueMeta {
        QueueMeta {
            worker: worker.into(),
            input_hash: String::new(),
            items: 0,
            queued: String::new(),
            model: None,
            approval: None,
            max_iterations: None,
            max_deliveries: 3,
        }
    }

    #[test]
    fn the_worker_is_found_only_plainly_inside_the_program() {
        let program = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(program.path().join("workers")).unwrap();
        std::fs::write(program.path().join("workers/w.worker"), "x").unwrap();
        std::fs::write(outside.path().join("evil.worker"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), program.path().join("link")).unwrap();
        let root = program.path();
        assert_eq!(
            meta("workers/w.worker").worker_file(root).unwrap(),
            root.join("workers/w.worker")
        );
        let escape = format!(
            "../{}/evil.worker",
            outside.path().file_name().unwrap().to_str().unwrap()
        );
        let absolute = outside.path().join("evil.worker").display().to_string();
        for bad in [
            escape.as_str(),
            absolute.as_str(),
            "./workers/w.worker",
            "workers//w.worker",
            "link/evil.worker",
        ] {
            assert!(
                matches!(
                    meta(bad).worker_file(root),
                    Err(WorkerNotHere::NotInside(_))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            meta("workers/none.worker").worker_file(root),
            Err(WorkerNotHere::Missing(_))
        ));
        assert!(matches!(
            meta("workers").worker_file(root),
            Err(WorkerNotHere::Missing(_))
        ));
    }
}
