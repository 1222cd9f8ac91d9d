//! Protected files (issue 26): paths that programs on the host read as configuration or run,
//! which no writer may create, change, delete or rename in a zone — whatever the zone's
//! approval table, a session memory, a project rule or the approval mode says.
//!
//! The policy is data: the built-in list ([`is_builtin`], described by [`BUILT_IN`]), extra
//! patterns from the program config's `protected:` and exact host paths or files of a host
//! directory given by the caller (the modules of the worker's custom toolsets and the files they
//! may import), all in [`ProtectedPaths`]; and per zone, its `unprotect:` patterns, which turn
//! matching *built-in* entries into a question only a person may answer
//! ([`Protection::Unprotected`] → [`ApprovalRequirement::AskUser`]).
//!
//! How a path is judged: by name, each name compared under the key a case-insensitive file
//! system would take it for (`fold`: Unicode canonical caseless form, so neither `.GIT/CONFIG`
//! nor `.git/hoo\u{212A}s`, with a KELVIN SIGN, gets through). The built-in list is matched against the zone's real
//! host directory followed by the zone-relative path, so a zone opened inside a `.git`
//! directory is protected as a whole; `protected:` and `unprotect:` patterns and host paths are
//! zone-relative. A path counts as protected when it, or one of its parent directories, matches
//! (so a pattern naming a directory covers what is in it). Every change is judged under its
//! path as given *and* under its real path (parent directories resolved beneath the zone, and
//! for a write the target of a final symbolic link), so `x -> .git` then `x/config` is refused.
//! Removing or moving a directory judges every entry in it (without following links), and a
//! move judges every entry again under its new name.
//!
//! What the names cannot tell — hooks directories `core.hooksPath` names, git directories not
//! named `.git` (a `gitdir:` file's target, a bare repository), files a git configuration
//! includes — comes from git's own configuration, read as git reads it (`git.rs`) and judged
//! with the built-in list (so `unprotect` lifts it the same way).
//!
//! `Sandbox` uses this in `prepare` (the tools ask it before approval) and again inside every
//! changing operation, where the directory actually written to is judged through its open
//! handle; the later changesets of jailed processes use the same [`Sandbox::protection`] calls.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::DirExt;
use cap_std::fs::Dir;
use golem_policy::{ApprovalRequirement, GlobError, check_glob, glob_matches};
use golem_protocol::{ToolError, ToolErrorCode};

use crate::sandbox::{Sandbox, Zone};
use crate::zone_path::ZonePath;

mod fold;
mod git;
mod git_config;

use fold::name_key;
use git::GitRules;
pub(crate) use git::{GIT_DIR_MARKERS, is_git_dir_by};

/// The built-in list, as `check` and the docs show it (matched by [`is_builtin`]).
pub const BUILT_IN: &[&str] = &[
    "**/.git (a repository's directory, or a gitdir file)",
    "**/.git/{config,config.worktree,commondir,gitdir}",
    "**/.git/hooks/**",
    "**/.git/info/**",
    "**/.git/objects/info/alternates",
    "**/.git/modules/**/{config,hooks/**,info/**,commondir,gitdir}",
    "**/.git/worktrees/**/{config*,commondir,gitdir}",
    "**/.golem-forge/**",
    "**/golem-forge.config.yaml",
    "**/*.worker",
    "**/.envrc",
    "**/.vscode/**",
    "**/.idea/**",
    "**/.devcontainer/**",
    "**/.devcontainer.json",
    "**/.zed/**",
    "**/rust-toolchain",
    "**/rust-toolchain.toml",
    "**/.pre-commit-config.yaml",
    "**/{,.}lefthook{,-local}.{yml,yaml,toml,json,jsonc}",
    "**/.overcommit.yml",
    "**/.husky/**",
    "**/.lefthook{,-local}/**",
];

/// The built-in list in one short line (for `check`).
pub const BUILT_IN_SHORT: &str = ".git (config, hooks, info, commondir, gitdir, alternates, \
     modules, worktrees), .golem-forge/, golem-forge.config.yaml, *.worker, .envrc, .vscode/, \
     .idea/, .devcontainer/, .zed/, rust-toolchain(.toml), .pre-commit-config.yaml, \
     lefthook.yml (and its variants), .lefthook/, .overcommit.yml, .husky/; and what git's own \
     configuration names (hooks directories, git directories, included files)";

/// Whether the path made of `components` (file names, outermost first, from the file system's
/// root or from any directory above the zone) is on the built-in list. Names are compared as a
/// case-insensitive file system compares them (Unicode case folded, see `fold`).
pub fn is_builtin<S: AsRef<str>>(components: &[S]) -> bool {
    let names: Vec<String> = components.iter().map(|c| name_key(c.as_ref())).collect();
    builtin(&names)
}

/// [`is_builtin`] of names already folded by [`name_key`].
fn builtin(names: &[String]) -> bool {
    let Some(last) = names.last() else {
        return false;
    };
    if matches!(
        last.as_str(),
        ".git"
            | ".envrc"
            | "golem-forge.config.yaml"
            | ".devcontainer.json"
            // rustup runs the toolchain these name (`path = "tc"` is a directory of programs)
            // for every `cargo`/`rustc` in the directory or below.
            | "rust-toolchain"
            | "rust-toolchain.toml"
            // Git hook managers: their hooks run what these say on every commit.
            | ".pre-commit-config.yaml"
            | ".overcommit.yml"
    ) || last.ends_with(".worker")
        || is_lefthook_config(last)
    {
        return true;
    }
    if names.iter().any(|name| {
        matches!(
            name.as_str(),
            ".golem-forge"
                | ".vscode"
                | ".idea"
                | ".devcontainer"
                | ".zed"
                | ".husky"
                // lefthook's `source_dir` and `source_dir_local`: the scripts its hooks run.
                | ".lefthook"
                | ".lefthook-local"
        )
    }) {
        return true;
    }
    names
        .iter()
        .enumerate()
        .filter(|(_, name)| *name == ".git")
        .any(|(at, _)| in_git_dir(&names[at + 1..]))
}

/// Whether `name` (folded) is one of lefthook's configuration files: `lefthook.yml`,
/// `.lefthook.yaml`, `lefthook-local.toml`, … (its hook runs the commands they list).
fn is_lefthook_config(name: &str) -> bool {
    let base = name.strip_prefix('.').unwrap_or(name);
    let Some(rest) = base.strip_prefix("lefthook") else {
        return false;
    };
    let rest = rest.strip_prefix("-local").unwrap_or(rest);
    matches!(rest, ".yml" | ".yaml" | ".toml" | ".json" | ".jsonc")
}

/// Whether `rest`, a path inside a git directory, is something git reads as configuration or
/// runs.
fn in_git_dir(rest: &[String]) -> bool {
    let Some((first, tail)) = rest.split_first() else {
        return true;
    };
    match first.as_str() {
        "config" | "config.worktree" | "commondir" | "gitdir" => tail.is_empty(),
        "hooks" | "info" => true,
        "objects" => tail.len() == 2 && tail[0] == "info" && tail[1] == "alternates",
        // A submodule's git directory is `modules/<name>` (the name may hold `/`): judged as a
        // git directory at every depth.
        "modules" => (1..tail.len()).any(|at| in_git_dir(&tail[at..])),
        "worktrees" => {
            tail.len() >= 2
                && tail.last().is_some_and(|name| {
                    name.starts_with("config") || name == "commondir" || name == "gitdir"
                })
        }
        _ => false,
    }
}

/// What the policy says about a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protection {
    /// Nothing protected is touched.
    Open,
    /// A protected path would be touched: refused for every writer.
    Protected {
        /// The virtual path.
        path: String,
    },
    /// Built-in entries that the zone's `unprotect` lets through: a person must approve the
    /// change, every time.
    Unprotected {
        /// Their virtual paths.
        paths: Vec<String>,
    },
}

impl Protection {
    /// Whether the change is refused.
    pub fn is_protected(&self) -> bool {
        matches!(self, Protection::Protected { .. })
    }

    /// Why the change is refused: `protected: /<zone>/<path> is read outside the sandbox`.
    pub fn reason(&self) -> Option<String> {
        match self {
            Protection::Protected { path } => Some(reason(path)),
            Protection::Open | Protection::Unprotected { .. } => None,
        }
    }

    /// The warning line for the approval prompt of an unprotected change.
    pub fn warning(&self) -> Option<String> {
        match self {
            Protection::Unprotected { paths } => Some(format!(
                "\u{26a0} unprotected: {} {} read outside the sandbox (asked every time, never \
                 remembered)",
                shown_paths(paths, 3),
                if paths.len() == 1 { "is" } else { "are" }
            )),
            Protection::Open | Protection::Protected { .. } => None,
        }
    }

    /// `BLOCKED` with the reason when the change is refused.
    pub fn check(&self) -> Result<(), ToolError> {
        match self.reason() {
            Some(reason) => Err(ToolError::new(ToolErrorCode::Blocked, reason)),
            None => Ok(()),
        }
    }

    /// The requirement of a change whose zone approval table says `zone`: blocked when
    /// protected, a person's approval when unprotected (unless the zone blocks it), else
    /// `zone`.
    pub fn requirement(&self, zone: ApprovalRequirement) -> ApprovalRequirement {
        match self {
            Protection::Open => zone,
            Protection::Protected { path } => ApprovalRequirement::blocked(reason(path)),
            Protection::Unprotected { .. } => zone.strictest(ApprovalRequirement::ask_user(
                self.warning().unwrap_or_default(),
            )),
        }
    }

    /// Both judgements together: the first refusal, else every unprotected path.
    pub fn and(self, other: Protection) -> Protection {
        match (self, other) {
            (protected @ Protection::Protected { .. }, _)
            | (Protection::Open, protected @ Protection::Protected { .. })
            | (Protection::Unprotected { .. }, protected @ Protection::Protected { .. }) => {
                protected
            }
            (Protection::Open, other) | (other, Protection::Open) => other,
            (Protection::Unprotected { mut paths }, Protection::Unprotected { paths: more }) => {
                for path in more {
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
                Protection::Unprotected { paths }
            }
        }
    }
}

/// The reason of a refusal.
fn reason(path: &str) -> String {
    format!("protected: {path} is read outside the sandbox")
}

/// The first `shown` of `paths`, comma-separated, then how many more (`a, b and 4 more`), for
/// messages that name protected paths.
pub fn shown_paths(paths: &[String], shown: usize) -> String {
    let mut text = paths
        .iter()
        .take(shown)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > shown {
        text.push_str(&format!(" and {} more", paths.len() - shown));
    }
    text
}

/// A `protected:` or `unprotect:` pattern [`check_pattern`] refuses; each names the pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Nothing but white space.
    #[error("must not be empty")]
    Empty,
    /// A backslash or a control character.
    #[error(
        "must use `/` between names and no control characters, found \"{}\"",
        pattern.escape_debug()
    )]
    NotSlashes {
        /// The pattern.
        pattern: String,
    },
    /// `//`.
    #[error("must not have empty segments (`//`), found \"{}\"", pattern.escape_debug())]
    EmptySegment {
        /// The pattern.
        pattern: String,
    },
    /// A `.` or `..` segment.
    #[error("must not contain `.` or `..` segments, found \"{}\"", pattern.escape_debug())]
    DotSegment {
        /// The pattern.
        pattern: String,
    },
    /// `**` inside a segment (`x**`).
    #[error(
        "must use `**` only as a whole segment (as in secrets/**), found \"{}\"",
        pattern.escape_debug()
    )]
    PartialDoubleStar {
        /// The pattern.
        pattern: String,
    },
    /// What the matcher itself refuses of the anchored pattern.
    #[error(transparent)]
    Glob(#[from] GlobError),
}

/// Checks a `protected:` or `unprotect:` pattern: a path relative to the zone (a leading `/`
/// anchors it at the zone's root, a pattern without `/` matches a name at any depth), `*`
/// within a name, `**` as a whole segment, no `.` or `..` segments, no backslash.
pub fn check_pattern(pattern: &str) -> Result<(), PatternError> {
    let owned = || pattern.to_owned();
    if pattern.trim().is_empty() {
        return Err(PatternError::Empty);
    }
    if pattern.contains('\\') || pattern.chars().any(char::is_control) {
        return Err(PatternError::NotSlashes { pattern: owned() });
    }
    let inner = pattern.trim_start_matches('/').trim_end_matches('/');
    for segment in inner.split('/') {
        if segment.is_empty() {
            return Err(PatternError::EmptySegment { pattern: owned() });
        }
        if segment == "." || segment == ".." {
            return Err(PatternError::DotSegment { pattern: owned() });
        }
        if segment.contains("**") && segment != "**" {
            return Err(PatternError::PartialDoubleStar { pattern: owned() });
        }
    }
    // What the matcher accepts (the checks above are stricter).
    Ok(check_glob(&anchored(pattern))?)
}

/// A `protected:` or `unprotect:` pattern, checked when it is read (so a bad one is reported at
/// its own line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern(pub String);

impl<'de> serde::Deserialize<'de> for PathPattern {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let pattern = String::deserialize(deserializer)?;
        check_pattern(&pattern).map_err(serde::de::Error::custom)?;
        Ok(PathPattern(pattern))
    }
}

/// A pattern as written → an anchored glob of folded names ([`name_key`]) for
/// [`glob_matches`].
fn anchored(pattern: &str) -> String {
    let lower = name_key(pattern);
    let trimmed = lower.trim_end_matches('/');
    if let Some(rooted) = trimmed.strip_prefix('/') {
        format!("/{rooted}")
    } else if trimmed.contains('/') {
        format!("/{trimmed}")
    } else {
        format!("/**/{trimmed}")
    }
}

/// What a caller adds to the built-in list: patterns (the program config's `protected:`) and
/// host paths (the worker's custom-toolset modules and the files they may import). Host paths
/// are resolved when the sandbox opens (or [`crate::Sandbox::protect`] is called): only those
/// inside a zone matter, as that zone's relative paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedPaths {
    patterns: Vec<String>,
    host: Vec<HostEntry>,
}

/// A host path to protect.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostEntry {
    /// One file or directory (and what is in it).
    Path(PathBuf),
    /// The files in `dir` (not below it) whose names match `pattern` (`*.py`), existing or not.
    Files { dir: PathBuf, pattern: String },
}

impl ProtectedPaths {
    /// Nothing beyond the built-in list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a pattern (see [`check_pattern`]); an invalid one is the error, with its message.
    pub fn with_pattern(mut self, pattern: &str) -> Result<Self, PatternError> {
        check_pattern(pattern)?;
        self.patterns.push(pattern.to_owned());
        Ok(self)
    }

    /// Adds an exact host path (a file, or a directory with everything in it).
    pub fn with_host_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.host.push(HostEntry::Path(path.into()));
        self
    }

    /// Adds the files of the host directory `dir` (not its subdirectories) whose names match
    /// `pattern`, a file name with `*` (`*.py`), whether they exist yet or not.
    pub fn with_host_files(mut self, dir: impl Into<PathBuf>, pattern: &str) -> Self {
        self.host.push(HostEntry::Files {
            dir: dir.into(),
            pattern: pattern.to_owned(),
        });
        self
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether nothing is added.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty() && self.host.is_empty()
    }
}

/// The protected-files policy of one zone, resolved when the sandbox opens.
#[derive(Debug, Clone, Default)]
pub(crate) struct ZoneGuard {
    /// The zone directory's real host path when it was opened (`None` when it could not be
    /// told), put in front of zone-relative paths for the built-in list.
    root: Option<PathBuf>,
    /// `root`'s folded names ([`name_key`]), once: every verdict puts them in front.
    root_names: Vec<String>,
    /// Anchored, lower-case patterns from `protected:` and the caller's host paths, as given.
    extra: Vec<String>,
    /// What `check` shows: the extra patterns as written and the host paths resolved.
    shown_extra: Vec<String>,
    /// The zone's `unprotect` patterns, one layer per sandbox that narrowed it; a path is
    /// unprotected only when every layer matches it.
    unprotect: Vec<Vec<String>>,
    /// The last layer as written, for `check`.
    shown_unprotect: Vec<String>,
    /// What git's own configuration protects in the zone (`git.rs`), shared by every clone.
    git: Option<Arc<GitRules>>,
}

/// How a zone-relative path is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Open,
    Protected,
    Unprotected,
}

impl ZoneGuard {
    /// The guard of a zone whose real directory is `root`, with its `unprotect` patterns.
    pub(crate) fn new(root: Option<PathBuf>, unprotect: &[String]) -> ZoneGuard {
        ZoneGuard {
            extra: Vec::new(),
            shown_extra: Vec::new(),
            unprotect: vec![unprotect.iter().map(|p| anchored(p)).collect()],
            shown_unprotect: unprotect.to_vec(),
            git: root
                .as_ref()
                .map(|root| Arc::new(GitRules::new(root.clone()))),
            root_names: root.as_deref().map(git::folded).unwrap_or_default(),
            root,
        }
    }

    /// This guard for a sub-worker's zone with its own `unprotect`: never less protected.
    pub(crate) fn narrowed(&self, unprotect: &[String]) -> ZoneGuard {
        let mut guard = self.clone();
        guard
            .unprotect
            .push(unprotect.iter().map(|p| anchored(p)).collect());
        guard.shown_unprotect = self
            .shown_unprotect
            .iter()
            .filter(|p| unprotect.contains(p))
            .cloned()
            .collect();
        guard
    }

    /// This guard with `paths` added (host paths outside the zone are ignored).
    pub(crate) fn with(&self, paths: &ProtectedPaths) -> ZoneGuard {
        let mut guard = self.clone();
        for pattern in &paths.patterns {
            if !guard.shown_extra.contains(pattern) {
                guard.extra.push(anchored(pattern));
                guard.shown_extra.push(pattern.clone());
            }
        }
        for entry in &paths.host {
            let (path, files) = match entry {
                HostEntry::Path(path) => (path, None),
                HostEntry::Files { dir, pattern } => (dir, Some(pattern)),
            };
            let Some(rel) = self.relative(path) else {
                continue;
            };
            let rel = name_key(&rel.to_string_lossy());
            let glob = match files {
                None if rel.is_empty() => "/**".to_owned(),
                None => format!("/{rel}"),
                Some(pattern) if rel.is_empty() => format!("/{}", name_key(pattern)),
                Some(pattern) => format!("/{rel}/{}", name_key(pattern)),
            };
            let shown = glob.trim_start_matches('/').to_owned();
            if !guard.shown_extra.contains(&shown) {
                guard.shown_extra.push(shown);
                guard.extra.push(glob);
            }
        }
        guard
    }

    /// `path` (a host path) relative to the zone's real directory, if it lies inside.
    fn relative(&self, path: &Path) -> Option<PathBuf> {
        let root = self.root.as_ref()?;
        let real = real_host_path(path);
        real.strip_prefix(root).ok().map(Path::to_path_buf)
    }

    /// The extra patterns and host paths (zone-relative), for `check`.
    pub(crate) fn shown_extra(&self) -> &[String] {
        &self.shown_extra
    }

    /// The zone's `unprotect` patterns, for `check`.
    pub(crate) fn shown_unprotect(&self) -> &[String] {
        &self.shown_unprotect
    }

    /// How the zone-relative path `rel` is judged.
    pub(crate) fn verdict(&self, rel: &Path) -> Verdict {
        let names = git::folded(rel);
        if names.is_empty() {
            return Verdict::Open;
        }
        if self.matches_extra(&names) {
            return Verdict::Protected;
        }
        let mut full = self.root_names.clone();
        full.extend(names.iter().cloned());
        if !builtin(&full) && !self.git_protects(rel) {
            return Verdict::Open;
        }
        // No layer at all (a guard made by default) lifts nothing.
        let unprotected = !self.unprotect.is_empty()
            && self.unprotect.iter().all(|layer| {
                layer
                    .iter()
                    .any(|pattern| matches_with_parents(pattern, &names))
            });
        if unprotected {
            Verdict::Unprotected
        } else {
            Verdict::Protected
        }
    }

    /// Whether git's own rules protect the zone-relative path `rel` (`git.rs`).
    fn git_protects(&self, rel: &Path) -> bool {
        match (&self.root, &self.git) {
            (Some(root), Some(git)) => git.protects(&root.join(rel)),
            (None, _) | (_, None) => false,
        }
    }

    /// What git's own rules protect in the zone now, zone-relative, for `check`.
    pub(crate) fn shown_git(&self) -> Vec<String> {
        self.git.as_ref().map(|git| git.shown()).unwrap_or_default()
    }

    fn matches_extra(&self, names: &[String]) -> bool {
        self.extra
            .iter()
            .any(|pattern| matches_with_parents(pattern, names))
    }
}

impl Sandbox {
    /// What the policy says about creating or changing the file at `p` (write, edit, create,
    /// or a directory created on the way): judged as given and as resolved beneath the zone
    /// (links in parent directories, and a final link's target, which a write goes through);
    /// missing parent directories that would be created are judged too.
    pub fn protection(&self, p: &ZonePath) -> Protection {
        let Some((zone, guard)) = self.guard_of(p) else {
            return Protection::Open;
        };
        let rel = p.relative();
        let mut found = Protection::Open;
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut judge = |candidate: PathBuf| {
            if !seen.contains(&candidate) {
                found = std::mem::replace(&mut found, Protection::Open)
                    .and(judged(guard, p, &candidate));
                seen.push(candidate);
            }
        };
        judge(rel.to_path_buf());
        if let Some(real) = resolve_parent(zone.dir(), rel) {
            if let Ok(meta) = zone.dir().symlink_metadata(&real)
                && meta.is_symlink()
                && let Ok(target) = zone.dir().canonicalize(&real)
            {
                judge(clean(&target));
            }
            judge(real);
        }
        // Parent directories the change would create.
        for ancestor in rel.ancestors().skip(1) {
            if ancestor.as_os_str().is_empty() {
                break;
            }
            if guard.verdict(ancestor) != Verdict::Open && !exists(zone.dir(), ancestor) {
                judge(ancestor.to_path_buf());
            }
        }
        found
    }

    /// What the policy says about removing `p` and everything in it (links are not followed):
    /// the entry itself, as given and with its parent directories resolved, and each entry
    /// under it.
    pub fn removal_protection(&self, p: &ZonePath) -> Protection {
        self.tree_protection(p, None)
    }

    /// What the policy says about moving `from` to `to`: removing `from` with everything in it
    /// ([`Sandbox::removal_protection`]) and creating each of those entries again under `to`.
    pub fn move_protection(&self, from: &ZonePath, to: &ZonePath) -> Protection {
        self.tree_protection(from, Some(to))
    }

    /// The extra protected patterns of zone `name` (the program config's and the caller's host
    /// paths, zone-relative) and its `unprotect` patterns, for `check`; `None` for an unknown
    /// zone.
    pub fn protected_patterns(&self, name: &str) -> Option<(Vec<String>, Vec<String>)> {
        let index = self.zones().iter().position(|zone| zone.name() == name)?;
        let guard = self.guards().get(index)?;
        Some((
            guard.shown_extra().to_vec(),
            guard.shown_unprotect().to_vec(),
        ))
    }

    /// What git's own configuration protects in zone `name` now (`git.rs`): each git
    /// directory, included file and hooks directory, zone-relative with why (`.githooks/**
    /// (core.hooksPath)`), for `check`; `None` for an unknown zone.
    pub fn git_protected(&self, name: &str) -> Option<Vec<String>> {
        let index = self.zones().iter().position(|zone| zone.name() == name)?;
        Some(self.guards().get(index)?.shown_git())
    }

    /// Refuses (`BLOCKED`) a change of the entry `name` in the directory `parent`, opened
    /// beneath the zone of `p`, when its real place is protected: the check inside the
    /// sandbox's own operations, on the directory actually written to. When the real place
    /// cannot be told, the checks by name (done before) stand.
    pub(crate) fn check_opened(
        &self,
        p: &ZonePath,
        parent: &Dir,
        name: &OsStr,
    ) -> Result<(), ToolError> {
        let Some((zone, guard)) = self.guard_of(p) else {
            return Ok(());
        };
        let Some(real_parent) = opened_relative(zone.dir(), parent) else {
            return Ok(());
        };
        judged(guard, p, &real_parent.join(name)).check()
    }

    /// The zone and guard of `p` (`None` for `/` or a path from another sandbox).
    fn guard_of(&self, p: &ZonePath) -> Option<(&Zone, &ZoneGuard)> {
        let (index, name) = p.zone_ref()?;
        let zone = self.zones().get(index).filter(|zone| zone.name() == name)?;
        Some((zone, self.guards().get(index)?))
    }

    fn tree_protection(&self, from: &ZonePath, to: Option<&ZonePath>) -> Protection {
        let Some((zone, guard)) = self.guard_of(from) else {
            return Protection::Open;
        };
        let rel = from.relative();
        let real = resolve_parent(zone.dir(), rel);
        let mut bases = vec![rel.to_path_buf()];
        if let Some(real) = &real
            && real != rel
        {
            bases.push(real.clone());
        }
        // Where the entries go: `to` as given and with its parents resolved (a final link is
        // replaced, not followed).
        let mut targets: Vec<(&ZonePath, &ZoneGuard, Vec<PathBuf>)> = Vec::new();
        if let Some(to) = to
            && let Some((to_zone, to_guard)) = self.guard_of(to)
        {
            let to_rel = to.relative().to_path_buf();
            let mut to_bases = vec![to_rel.clone()];
            if let Some(real) = resolve_parent(to_zone.dir(), &to_rel)
                && real != to_rel
            {
                to_bases.push(real);
            }
            targets.push((to, to_guard, to_bases));
        }
        let mut found = Protection::Open;
        let source = real.unwrap_or_else(|| rel.to_path_buf());
        for suffix in tree_entries(zone.dir(), &source) {
            for base in &bases {
                found = found.and(judged(guard, from, &join(base, &suffix)));
            }
            for (to, to_guard, to_bases) in &targets {
                for base in to_bases {
                    found = found.and(judged(to_guard, to, &join(base, &suffix)));
                }
            }
            if found.is_protected() {
                return found;
            }
        }
        found
    }
}

/// The judgement of the zone-relative path `rel` in the zone of `p`.
fn judged(guard: &ZoneGuard, p: &ZonePath, rel: &Path) -> Protection {
    match guard.verdict(rel) {
        Verdict::Open => Protection::Open,
        Verdict::Protected => Protection::Protected {
            path: p.with_relative(rel.to_path_buf()).virtual_path(),
        },
        Verdict::Unprotected => Protection::Unprotected {
            paths: vec![p.with_relative(rel.to_path_buf()).virtual_path()],
        },
    }
}

/// `base` joined with `suffix` (an empty suffix is `base` itself).
fn join(base: &Path, suffix: &Path) -> PathBuf {
    if suffix.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(suffix)
    }
}

/// A zone-relative path from cap-std without `.` components.
fn clean(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

/// Whether `rel` exists beneath `dir` (a link counts as itself).
fn exists(dir: &Dir, rel: &Path) -> bool {
    match dir.symlink_metadata(rel) {
        Ok(_) => true,
        // Anything but "not there" counts as there: nothing is created then.
        Err(err) => !matches!(err.kind(), io::ErrorKind::NotFound),
    }
}

/// `rel` with the links in its parent directories resolved beneath `dir` (the last component
/// kept as it is); the part that does not exist yet is appended as written. `None` when the
/// parent leads outside `dir` or cannot be told.
fn resolve_parent(dir: &Dir, rel: &Path) -> Option<PathBuf> {
    let name = rel.file_name()?;
    let mut existing = rel.parent()?.to_path_buf();
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        let probe = if existing.as_os_str().is_empty() {
            Path::new(".")
        } else {
            existing.as_path()
        };
        match dir.canonicalize(probe) {
            Ok(real) => {
                let mut out = clean(&real);
                for part in missing.iter().rev() {
                    out.push(part);
                }
                out.push(name);
                return Some(out);
            }
            Err(err)
                if err.kind() == io::ErrorKind::NotFound
                    || err.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) =>
            {
                missing.push(existing.file_name()?.to_owned());
                existing.pop();
            }
            Err(_) => return None,
        }
    }
}

/// The entry `rel` and, for a directory (not a link to one), every entry under it, as paths
/// relative to `rel` (the entry itself is the empty path), parents before their children.
/// What cannot be read is left out: removing it would fail as well.
fn tree_entries(dir: &Dir, rel: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::new()];
    let is_dir = dir.symlink_metadata(rel).is_ok_and(|meta| meta.is_dir());
    if !is_dir || rel.as_os_str().is_empty() {
        return out;
    }
    let Ok(top) = dir.open_dir_nofollow(rel) else {
        return out;
    };
    let mut stack: Vec<(Dir, PathBuf)> = vec![(top, PathBuf::new())];
    while let Some((here, prefix)) = stack.pop() {
        let Ok(entries) = here.entries() else {
            continue;
        };
        let mut names: Vec<(OsString, bool)> = entries
            .filter_map(Result::ok)
            .map(|entry| {
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                (entry.file_name(), is_dir)
            })
            .collect();
        names.sort();
        for (name, is_dir) in names {
            let path = prefix.join(&name);
            out.push(path.clone());
            if is_dir && let Ok(sub) = here.open_dir_nofollow(&name) {
                stack.push((sub, path));
            }
        }
    }
    out
}

/// Where the directory `dir` (opened beneath `root`) really is, relative to `root`: from the
/// kernel's record of both open directories (`/proc/self/fd`), so it names the directory
/// actually used, whatever links led there. `None` when it cannot be told.
fn opened_relative(root: &Dir, dir: &Dir) -> Option<PathBuf> {
    let root = fd_path(root)?;
    let here = fd_path(dir)?;
    here.strip_prefix(&root).ok().map(Path::to_path_buf)
}

fn fd_path(dir: &Dir) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", dir.as_fd().as_raw_fd())).ok()
}

/// Whether the path `names` (folded by [`name_key`]), or one of its parents, matches `pattern`.
fn matches_with_parents(pattern: &str, names: &[String]) -> bool {
    (1..=names.len()).any(|len| glob_matches(pattern, &format!("/{}", names[..len].join("/"))))
}

/// The real host path of `path`: canonical when it exists, else its nearest existing parent
/// made canonical with the rest appended, else `path` made absolute.
pub(crate) fn real_host_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest: Vec<&OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            (None, _) | (_, None) => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected(path: &str) -> bool {
        let names: Vec<&str> = path.split('/').filter(|n| !n.is_empty()).collect();
        is_builtin(&names)
    }

    #[test]
    fn the_built_in_list() {
        for path in [
            ".git",
            ".git/config",
            ".git/config.worktree",
            ".git/hooks",
            ".git/hooks/pre-commit",
            ".git/info/attributes",
            ".git/commondir",
            ".git/gitdir",
            ".git/objects/info/alternates",
            ".git/modules/lib/config",
            ".git/modules/a/b/hooks/post-checkout",
            ".git/modules/a/modules/b/config",
            ".git/worktrees/w/config.worktree",
            ".git/worktrees/w/commondir",
            ".git/worktrees/w/gitdir",
            "deep/sub/.git/config",
            "wt/.git",
            ".golem-forge",
            ".golem-forge/approvals.yaml",
            "x/.golem-forge/locks/a",
            "golem-forge.config.yaml",
            "sub/golem-forge.config.yaml",
            "a.worker",
            "x/y/B.WORKER",
            ".envrc",
            "x/.envrc",
            ".vscode/settings.json",
            ".idea",
            ".devcontainer/devcontainer.json",
            ".devcontainer.json",
            ".GIT/CONFIG",
            "home/u/.git/hooks/x",
            ".zed",
            ".zed/settings.json",
            "sub/.zed/tasks.json",
            "rust-toolchain",
            "rust-toolchain.toml",
            "crates/x/Rust-Toolchain.TOML",
            ".pre-commit-config.yaml",
            "sub/.pre-commit-config.yaml",
            "lefthook.yml",
            "lefthook.yaml",
            ".lefthook.yml",
            ".lefthook.yaml",
            "lefthook-local.yml",
            "lefthook-local.yaml",
            ".lefthook-local.yml",
            ".lefthook-local.yaml",
            "lefthook.toml",
            "lefthook.json",
            ".config/lefthook.yml",
            ".overcommit.yml",
            ".husky",
            ".husky/pre-commit",
            ".husky/_/h",
            "web/.husky/pre-push",
            ".lefthook/pre-commit/lint.sh",
            ".lefthook-local/pre-push/x",
            // Spellings a case-insensitive file system takes for protected names.
            ".git/hoo\u{212a}s/pre-commit",
            ".git/HOO\u{212a}S",
            ".v\u{17f}code/settings.json",
            ".git/con\u{fb01}g",
            ".g\u{200c}it/config",
            "GOLEM-FORGE.CONFIG.YAML",
            "a.wor\u{212a}er",
            "ru\u{17f}t-toolchain.toml",
            "lefthoo\u{212a}.yml",
            ".hu\u{17f}ky/pre-commit",
        ] {
            assert!(protected(path), "{path} must be protected");
        }
        for path in [
            "",
            ".git/objects/ab/cdef",
            ".git/objects/pack/p.pack",
            ".git/objects/info/packs",
            ".git/refs/heads/main",
            ".git/HEAD",
            ".git/index",
            ".git/logs/HEAD",
            ".git/packed-refs",
            ".git/worktrees/w/HEAD",
            ".git/modules",
            "config",
            "hooks/x",
            ".gitignore",
            ".gitmodules",
            "git/config",
            "x.worker.txt",
            "envrc",
            "vscode/x",
            "src/main.rs",
            "build.rs",
            "Makefile",
            "package.json",
            "zed/settings.json",
            "husky/pre-commit",
            "rust-toolchain.txt",
            "my-rust-toolchain.toml",
            ".pre-commit-hooks.yaml",
            "lefthook.yml.bak",
            "lefthook-remote.yml",
            ".overcommit.yaml",
            ".git/hooks.txt",
            // Names that merely hold non-ASCII letters.
            "caf\u{e9}/notes.md",
            ".git/h\u{f6}oks/pre-commit",
            ".v\u{15b}code/settings.json",
            "\u{430}.worker.txt",
            "\u{65e5}\u{672c}/.gitignore",
            // A compatibility look-alike is another name to every file system.
            "golem-forge.config.y\u{1d43}ml",
        ] {
            assert!(!protected(path), "{path} must not be protected");
        }
    }

    #[test]
    fn patterns_are_checked_and_anchored() {
        assert_eq!(anchored("secrets"), "/**/secrets");
        assert_eq!(anchored("Secrets/**"), "/secrets/**");
        assert_eq!(anchored("/Makefile"), "/makefile");
        assert_eq!(anchored("build/"), "/**/build");
        assert_eq!(anchored("Kit/\u{212a}eys"), "/kit/keys");
        assert_eq!(anchored("/S\u{e9}CRETS"), "/se\u{301}crets");
        check_pattern("*.pem").unwrap();
        check_pattern("/x/**/y").unwrap();
        assert!(check_pattern("").is_err());
        assert!(check_pattern("a/../b").is_err());
        assert!(check_pattern("a**").is_err());
        assert!(check_pattern("a\\b").is_err());
        assert_eq!(
            check_pattern("a//b").unwrap_err().to_string(),
            "must not have empty segments (`//`), found \"a//b\""
        );
        assert_eq!(
            check_pattern("a\tb").unwrap_err(),
            PatternError::NotSlashes {
                pattern: "a\tb".to_owned()
            }
        );
    }

    #[test]
    fn a_zone_judges_extra_patterns_built_ins_and_unprotect() {
        let guard = ZoneGuard::new(Some(PathBuf::from("/w")), &[".git/**".to_owned()])
            .with(&ProtectedPaths::new().with_pattern("secrets").unwrap());
        let verdict = |rel: &str| guard.verdict(Path::new(rel));
        assert_eq!(verdict("secrets"), Verdict::Protected);
        assert_eq!(verdict("a/Secrets/key"), Verdict::Protected);
        assert_eq!(verdict(".git/config"), Verdict::Unprotected);
        assert_eq!(verdict(".git"), Verdict::Unprotected);
        assert_eq!(verdict("sub/.git/config"), Verdict::Protected);
        assert_eq!(verdict(".envrc"), Verdict::Protected);
        assert_eq!(verdict("src/a.rs"), Verdict::Open);
        // Extra patterns and `unprotect` are matched after the same folding.
        assert_eq!(verdict("a/\u{17f}ecrets/key"), Verdict::Protected);
        assert_eq!(verdict(".GIT/CON\u{fb01}G"), Verdict::Unprotected);
        assert_eq!(verdict("sub/.git/hoo\u{212a}s/x"), Verdict::Protected);
        assert_eq!(verdict("s\u{e9}crets/key"), Verdict::Open);
        // A sub-worker's zone that does not unprotect keeps everything protected.
        let child = guard.narrowed(&[]);
        assert_eq!(child.verdict(Path::new(".git/config")), Verdict::Protected);
        // A guard with no `unprotect` layer at all lifts nothing.
        assert_eq!(
            ZoneGuard::default().verdict(Path::new(".git/config")),
            Verdict::Protected
        );
        // A zone inside a git directory is protected as a whole.
        let inside = ZoneGuard::new(Some(PathBuf::from("/w/.git/hooks")), &[]);
        assert_eq!(inside.verdict(Path::new("anything")), Verdict::Protected);
    }

    #[test]
    fn host_paths_become_zone_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/mod.py"), "").unwrap();
        let guard = ZoneGuard::new(Some(root.clone()), &[]).with(
            &ProtectedPaths::new()
                .with_host_path(root.join("tools/mod.py"))
                .with_host_files(root.join("tools"), "*.py")
                .with_host_path("/elsewhere/x.py"),
        );
        assert_eq!(guard.verdict(Path::new("tools/mod.py")), Verdict::Protected);
        assert_eq!(
            guard.verdict(Path::new("tools/json.py")),
            Verdict::Protected
        );
        assert_eq!(guard.verdict(Path::new("tools/sub/x.py")), Verdict::Open);
        assert_eq!(guard.verdict(Path::new("tools/notes.txt")), Verdict::Open);
        assert_eq!(guard.shown_extra(), ["tools/mod.py", "tools/*.py"]);
    }

    #[test]
    fn the_directory_actually_opened_is_judged() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("w/.git")).unwrap();
        std::os::unix::fs::symlink(".git", tmp.path().join("w/innocent")).unwrap();
        let sandbox = Sandbox::open(
            tmp.path(),
            &[crate::ZoneConfig::new("w", crate::ZoneMode::Rw)],
        )
        .unwrap();
        let zone = &sandbox.zones()[0];
        // A directory reached under a harmless name that is really `.git`.
        let opened = zone.dir().open_dir("innocent").unwrap();
        let p = sandbox.resolve("/w/innocent/config").unwrap();
        let err = sandbox
            .check_opened(&p, &opened, OsStr::new("config"))
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::Blocked);
        assert_eq!(
            err.message,
            "protected: /w/.git/config is read outside the sandbox"
        );
        sandbox
            .check_opened(&p, &opened, OsStr::new("HEAD"))
            .unwrap();
        let root = zone.dir().open_dir(".").unwrap();
        sandbox
            .check_opened(&p, &root, OsStr::new("innocent"))
            .unwrap();
    }

    #[test]
    fn judgements_combine() {
        let open = Protection::Open;
        let a = Protection::Unprotected {
            paths: vec!["/z/.git/config".into()],
        };
        let b = Protection::Protected {
            path: "/z/.envrc".into(),
        };
        assert_eq!(open.clone().and(a.clone()), a);
        assert_eq!(a.clone().and(b.clone()), b);
        assert_eq!(
            b.reason().unwrap(),
            "protected: /z/.envrc is read outside the sandbox"
        );
        assert!(
            a.warning()
                .unwrap()
                .starts_with("\u{26a0} unprotected: /z/.git/config is")
        );
        assert_eq!(
            a.requirement(ApprovalRequirement::PreApproved),
            ApprovalRequirement::ask_user(a.warning().unwrap())
        );
        assert_eq!(
            a.requirement(ApprovalRequirement::blocked("no")),
            ApprovalRequirement::blocked("no")
        );
        assert_eq!(
            open.requirement(ApprovalRequirement::Ask),
            ApprovalRequirement::Ask
        );
    }
}
