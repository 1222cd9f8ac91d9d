//! The worker's zones as the chat prompt sees them: what Tab offers for a path and what an
//! `@path` attaches. They are opened with [`Sandbox::open`] from the worker's own zone list and
//! directory, as the launcher opens the root worker's, so a path is resolved and read by the
//! same rules as the file tools' (`..` never leaves a zone, unknown zones and host paths are
//! refused, symbolic links are not followed out); nothing here joins a path onto a host path.

use golem_runtime::worker::WorkerDefinition;
use golem_sandbox::{EntryKind, Sandbox};

/// The most entries one Tab offers (a huge directory is cut short, not listed whole).
const MAX_ENTRIES: usize = 500;

/// The worker's zones, or none when they could not be opened.
#[derive(Debug, Clone, Default)]
pub struct ZoneFiles {
    sandbox: Option<Sandbox>,
}

/// One path Tab may offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEntry {
    /// The virtual path, ending in `/` for a directory (a zone included).
    pub path: String,
    /// The last component as shown in the menu (`/` ended for a directory).
    pub name: String,
    /// Whether it is a directory (Tab can go on into it).
    pub dir: bool,
}

/// Which entries a listing keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinds {
    /// Everything in the directory (a tool's path argument may name any entry).
    Any,
    /// Files, directories and links only (what an attachment can be, or lead to).
    Readable,
}

impl ZoneFiles {
    /// The zones of `definition`, opened beneath the worker file's directory; none (and so
    /// no paths) when they cannot be opened, which the session itself would have refused.
    pub fn open(definition: &WorkerDefinition) -> ZoneFiles {
        ZoneFiles {
            sandbox: Sandbox::open(definition.dir(), &definition.zones).ok(),
        }
    }

    /// The zones, when open.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref()
    }

    /// The entries whose virtual path starts with `typed` (`""` is `/`): the directory
    /// `typed` names up to its last `/`, listed and filtered by the rest. Names starting with
    /// `.` only when the rest does; names with control characters never (they cannot be
    /// typed back). A path that does not start with `/`, or that the sandbox refuses, has
    /// none.
    pub fn entries(&self, typed: &str, kinds: Kinds) -> Vec<PathEntry> {
        let Some(sandbox) = &self.sandbox else {
            return Vec::new();
        };
        let typed = if typed.is_empty() { "/" } else { typed };
        if !typed.starts_with('/') {
            return Vec::new();
        }
        let split = typed.rfind('/').map_or(0, |i| i + 1);
        let (dir, prefix) = typed.split_at(split);
        let Ok(dir_path) = sandbox.resolve(dir) else {
            return Vec::new();
        };
        let Ok(listing) = sandbox.read_dir(&dir_path) else {
            return Vec::new();
        };
        listing
            .into_iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .filter(|(name, _)| prefix.starts_with('.') || !name.starts_with('.'))
            .filter(|(name, _)| !name.chars().any(char::is_control))
            .filter(|(_, info)| match kinds {
                Kinds::Any => true,
                Kinds::Readable => match info.kind {
                    EntryKind::File | EntryKind::Directory | EntryKind::Symlink => true,
                    EntryKind::Fifo | EntryKind::Socket | EntryKind::Device => false,
                },
            })
            .take(MAX_ENTRIES)
            .map(|(name, info)| {
                let is_dir = info.kind == EntryKind::Directory;
                let name = if is_dir { format!("{name}/") } else { name };
                PathEntry {
                    path: format!("{dir}{name}"),
                    name,
                    dir: is_dir,
                }
            })
            .collect()
    }
}
