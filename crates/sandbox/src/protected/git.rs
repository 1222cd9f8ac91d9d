//! What git runs or reads as configuration, by git's own rules (issue 45): the protection the
//! names of the built-in list cannot give, because git decides from its configuration where
//! hooks live, which files are configuration and which directories are git directories.
//!
//! For every repository around a judged path or in the zone, [`GitRules`] protects:
//! - its git directories, wherever they lie and whatever their names, judged as a `.git`
//!   directory is (`config`, `hooks/`, `info/`, `commondir`, …): the directory a `.git` *file*
//!   names (`gitdir:`), the one its `commondir` names, and any directory git itself takes for a
//!   git directory by its contents (`HEAD` with `objects/` and `refs/`, or with `commondir`: a
//!   bare repository such as `mirror.git/`);
//! - every file its configuration includes (`include.path`, `includeIf.<condition>.path`,
//!   whatever the condition: an `onbranch:` one holds after the next checkout), recursively;
//! - its hooks directory, from every value of `core.hooksPath` in every scope git reads
//!   (system, global, the repository's `config` and `config.worktree`, the included files, the
//!   `GIT_CONFIG_COUNT` environment), a relative one resolved against every directory git may
//!   run hooks from (the work tree, a `core.worktree`, the git directory of a bare
//!   repository); and when that directory is husky's `_/`, the directory above it, whose
//!   scripts husky's stubs run;
//! - the making of a git directory: creating the `HEAD`, `objects`, `refs` or `commondir` that
//!   would turn a directory into one (as creating `.git` is protected by name).
//!
//! Kept current: each repository's configuration is read again when one of the files it came
//! from (or would come from) changes — its size, times or inode — so a `git config
//! core.hooksPath …` the user runs during a session counts from the next check; a directory
//! is looked at again when its own times change (an entry made or removed in it). The zone is
//! walked once, at the first check, for the repositories inside it whose configuration names
//! places outside their own work tree; repositories made inside a zone later are found from
//! the paths judged under them.

mod repo;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use super::fold::name_key;
use super::in_git_dir;
use repo::{Area, Repo, Scopes};

/// How many directories the first walk of a zone looks at, at most; past it, the repositories
/// deeper in are still found from the paths judged under them.
const WALK_BUDGET: usize = 50_000;

/// The git-derived protection of one zone: cheap to create (nothing is read until the first
/// check), shared by every clone of the zone's guard.
#[derive(Debug)]
pub(crate) struct GitRules {
    /// The zone directory's real path.
    root: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the zone has been walked for repositories.
    walked: bool,
    /// What each directory looked at is, with the stamp it had then.
    dirs: HashMap<PathBuf, (Stamp, DirKind)>,
    /// The repositories found, by the directory they were found at (a work tree, or a git
    /// directory found by its contents; the same git directory may be found at both).
    repos: HashMap<PathBuf, Repo>,
    /// Where git reads its system and global configuration, from this process's environment.
    scopes: Option<Scopes>,
    /// Those files themselves (`repo::scope_areas`), once `scopes` is known.
    scope_areas: Vec<Area>,
}

/// What git takes a directory for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirKind {
    /// Neither of the two.
    Plain,
    /// A work tree: it holds a `.git` directory, file or link.
    WorkTree,
    /// A git directory by its contents.
    GitDir,
}

/// What tells that a file or directory changed: device, inode, size, modification and change
/// times (nanoseconds); `None` when it does not exist.
pub(crate) type Stamp = Option<(u64, u64, u64, i128, i128)>;

/// The stamp of `path` (a link counts as itself).
pub(crate) fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    let nanos = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
    Some((
        meta.dev(),
        meta.ino(),
        meta.size(),
        nanos(meta.mtime(), meta.mtime_nsec()),
        nanos(meta.ctime(), meta.ctime_nsec()),
    ))
}

impl GitRules {
    /// The rules of the zone whose real directory is `root`.
    pub(crate) fn new(root: PathBuf) -> GitRules {
        GitRules {
            root,
            state: Mutex::new(State::default()),
        }
    }

    /// The rules of the zone at `root` reading the scopes given (for tests).
    #[cfg(test)]
    pub(crate) fn with_scopes(root: PathBuf, scopes: Scopes) -> GitRules {
        let rules = GitRules::new(root);
        if let Ok(mut state) = rules.state.lock() {
            state.scopes = Some(scopes);
        }
        rules
    }

    /// Whether git runs or reads as configuration the entry at `host` (a real host path inside
    /// the zone, existing or not) — or creating it would make a git directory.
    pub(crate) fn protects(&self, host: &Path) -> bool {
        let Ok(mut state) = self.state.lock() else {
            // A check that panicked left the state behind: refuse rather than guess.
            return true;
        };
        let state = &mut *state;
        // Taken out for the call (and put back below), so the repositories can be read while
        // the state changes, without copying it on every check.
        let scopes = state.scopes.take().unwrap_or_else(Scopes::from_env);
        if state.scope_areas.is_empty() {
            state.scope_areas = repo::scope_areas(&scopes);
        }
        if !state.walked {
            state.walked = true;
            for (dir, kind) in walk(&self.root) {
                state.add_repo(&dir, kind, &scopes);
            }
        }
        for dir in host.ancestors() {
            let kind = state.kind_of(dir);
            state.add_repo(dir, kind, &scopes);
        }
        for repo in state.repos.values_mut() {
            repo.refresh(&scopes);
        }
        state.scopes = Some(scopes);
        let names = folded(host);
        if makes_git_dir(host, &names) {
            return true;
        }
        state
            .repos
            .values()
            .flat_map(Repo::areas)
            .chain(&state.scope_areas)
            .any(|area| area.covers(&names))
    }

    /// Every place the rules protect in the zone now, zone-relative (for `check`): each git
    /// directory, included file and hooks directory, once.
    pub(crate) fn shown(&self) -> Vec<String> {
        // Judging the zone root walks it and reads every repository.
        self.protects(&self.root);
        let Ok(state) = self.state.lock() else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for area in state
            .repos
            .values()
            .flat_map(Repo::areas)
            .chain(&state.scope_areas)
        {
            // A `.git` directory is on the built-in list already.
            if area.is_dot_git() {
                continue;
            }
            if let Ok(rel) = area.path().strip_prefix(&self.root) {
                let text = area.shown(rel);
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
        out.sort();
        out
    }
}

impl State {
    /// What `dir` is, looked at again only when its stamp changed.
    fn kind_of(&mut self, dir: &Path) -> DirKind {
        let now = stamp(dir);
        if let Some((seen, kind)) = self.dirs.get(dir)
            && *seen == now
        {
            return *kind;
        }
        let kind = if now.is_none() {
            DirKind::Plain
        } else {
            classify(dir)
        };
        self.dirs.insert(dir.to_path_buf(), (now, kind));
        kind
    }

    /// Adds the repository of `dir` (a work tree or a git directory) unless it is known.
    fn add_repo(&mut self, dir: &Path, kind: DirKind, scopes: &Scopes) {
        if kind == DirKind::Plain || self.repos.contains_key(dir) {
            return;
        }
        let repo = match kind {
            DirKind::Plain => return,
            DirKind::WorkTree => Repo::of_work_tree(dir, scopes),
            DirKind::GitDir => Repo::of_git_dir(dir, scopes),
        };
        self.repos.insert(dir.to_path_buf(), repo);
    }
}

/// What git takes `dir` for, from its entries.
fn classify(dir: &Path) -> DirKind {
    if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
        return DirKind::WorkTree;
    }
    if is_git_dir(dir, None) {
        DirKind::GitDir
    } else {
        DirKind::Plain
    }
}

/// The entries whose presence makes a directory a git directory, folded ([`name_key`]).
pub(crate) const GIT_DIR_MARKERS: [&str; 4] = ["head", "objects", "refs", "commondir"];

/// git's own test (`setup.c`) of a directory whose entries `entry` tells (`None`: not there,
/// `Some(is_dir)`): a `HEAD` file, and `objects/` with `refs/`, or a `commondir` file that
/// names them.
pub(crate) fn is_git_dir_by(entry: impl Fn(&str) -> Option<bool>) -> bool {
    entry("HEAD") == Some(false)
        && ((entry("objects") == Some(true) && entry("refs") == Some(true))
            || entry("commondir") == Some(false))
}

/// Whether git takes `dir` for a git directory ([`is_git_dir_by`] over its entries),
/// counting `with` as if it were there, of the kind git wants it.
fn is_git_dir(dir: &Path, with: Option<&str>) -> bool {
    is_git_dir_by(|name| {
        if with.is_some_and(|with| name_key(with) == name_key(name)) {
            return Some(matches!(name, "objects" | "refs"));
        }
        std::fs::metadata(dir.join(name))
            .ok()
            .map(|meta| meta.is_dir())
    })
}

/// Whether creating (or replacing) `host` would make its directory a git directory it is not
/// yet.
fn makes_git_dir(host: &Path, names: &[String]) -> bool {
    let Some(last) = names.last() else {
        return false;
    };
    if !GIT_DIR_MARKERS.contains(&last.as_str()) {
        return false;
    }
    let (Some(parent), Some(name)) = (host.parent(), host.file_name()) else {
        return false;
    };
    !is_git_dir(parent, None) && is_git_dir(parent, Some(&name.to_string_lossy()))
}

/// The folded names ([`name_key`]) of a path, outermost first, without `.`, `..` or the root.
pub(crate) fn folded(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name_key(&name.to_string_lossy())),
            Component::CurDir
            | Component::ParentDir
            | Component::RootDir
            | Component::Prefix(_) => None,
        })
        .collect()
}

/// The work trees and git directories under `root` (not inside a git directory, not through
/// links), with what each is, within [`WALK_BUDGET`] directories.
fn walk(root: &Path) -> Vec<(PathBuf, DirKind)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        seen += 1;
        if seen > WALK_BUDGET {
            tracing::debug!(zone = %root.display(), "stopped looking for repositories");
            break;
        }
        let kind = classify(&dir);
        if kind != DirKind::Plain {
            found.push((dir.clone(), kind));
        }
        if kind == DirKind::GitDir {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) && entry.file_name() != ".git" {
                stack.push(entry.path());
            }
        }
    }
    found
}

impl Area {
    /// Whether the folded path `names` is protected by this area.
    fn covers(&self, names: &[String]) -> bool {
        let (prefix, kind) = self.folded();
        let Some(rest) = names.strip_prefix(prefix) else {
            return false;
        };
        match kind {
            repo::AreaKind::GitDir => rest.is_empty() || in_git_dir(rest),
            repo::AreaKind::Tree => true,
            repo::AreaKind::File => rest.is_empty(),
        }
    }
}
