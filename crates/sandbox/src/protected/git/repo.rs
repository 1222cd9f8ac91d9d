//! One repository as git sees it: where its git directories are, which files its
//! configuration comes from, and the places that makes protected ([`Area`]), read again when
//! one of those files changes.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::super::git_config::{ParsedConfig, interpolate_path, join_normalised, parse_config};
use super::{Stamp, folded, stamp};
use crate::protected::real_host_path;

/// How deep includes are followed: git's own limit (`MAX_INCLUDE_DEPTH`).
const MAX_INCLUDE_DEPTH: usize = 10;

/// How much of a configuration file is read: git has no limit, but no real one comes near.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Where git reads configuration outside the repository, from this process's environment
/// (the user's shell's, in practice): the system and global files, `GIT_CONFIG_COUNT`
/// settings, the home directory for `~`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scopes {
    files: Vec<PathBuf>,
    /// `(key, value)` of `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, key lower-cased.
    env: Vec<(String, String)>,
    home: Option<PathBuf>,
}

impl Scopes {
    /// The scopes git would read, run from here.
    pub(crate) fn from_env() -> Scopes {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let mut files = Vec::new();
        if var("GIT_CONFIG_NOSYSTEM").is_none() {
            match var("GIT_CONFIG_SYSTEM") {
                Some(path) => files.push(PathBuf::from(path)),
                // Debian's git and one built with the default prefix.
                None => {
                    files.extend(["/etc/gitconfig", "/usr/local/etc/gitconfig"].map(PathBuf::from))
                }
            }
        }
        match var("GIT_CONFIG_GLOBAL") {
            Some(path) => files.push(PathBuf::from(path)),
            None => {
                let xdg = var("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|home| home.join(".config")));
                files.extend(xdg.map(|xdg| xdg.join("git/config")));
                files.extend(home.as_ref().map(|home| home.join(".gitconfig")));
            }
        }
        let count = std::env::var("GIT_CONFIG_COUNT")
            .ok()
            .and_then(|count| count.trim().parse::<usize>().ok())
            .unwrap_or(0);
        let env = (0..count.min(1000))
            .filter_map(|at| {
                let key = std::env::var(format!("GIT_CONFIG_KEY_{at}")).ok()?;
                let value = std::env::var(format!("GIT_CONFIG_VALUE_{at}")).ok()?;
                Some((key.to_ascii_lowercase(), value))
            })
            .collect();
        Scopes { files, env, home }
    }

    /// Scopes given outright (tests set no process environment).
    #[cfg(test)]
    pub(crate) fn given(
        files: Vec<PathBuf>,
        env: Vec<(String, String)>,
        home: Option<PathBuf>,
    ) -> Scopes {
        Scopes { files, env, home }
    }
}

/// The system and global configuration files, protected wherever they are (a zone over the
/// home directory holds `~/.gitconfig`), with the rest of git's `~/.config/git/` (its
/// `attributes` name filter drivers).
pub(crate) fn scope_areas(scopes: &Scopes) -> Vec<Area> {
    let mut areas = Vec::new();
    for file in &scopes.files {
        areas.push(Area::new(file, AreaKind::File, "git configuration"));
        if let Some(dir) = file.parent()
            && file.file_name().is_some_and(|name| name == "config")
            && dir.file_name().is_some_and(|name| name == "git")
        {
            areas.push(Area::new(dir, AreaKind::Tree, "git configuration"));
        }
    }
    areas
}

/// How a protected place is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AreaKind {
    /// A git directory: what git reads or runs in it, as in a `.git` directory.
    GitDir,
    /// A directory and everything in it (a hooks directory).
    Tree,
    /// One file (an included configuration file).
    File,
}

/// A place git's rules protect.
#[derive(Debug, Clone)]
pub(crate) struct Area {
    /// Its real host path.
    path: PathBuf,
    /// `path`'s folded names.
    names: Vec<String>,
    kind: AreaKind,
    /// Why, for `check`: `core.hooksPath`, `include.path`, `git directory`.
    why: &'static str,
}

impl Area {
    fn new(path: &Path, kind: AreaKind, why: &'static str) -> Area {
        let path = real_host_path(path);
        Area {
            names: folded(&path),
            path,
            kind,
            why,
        }
    }

    /// Its real host path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it is a git directory named `.git` (which the built-in list names).
    pub(crate) fn is_dot_git(&self) -> bool {
        self.kind == AreaKind::GitDir && self.names.last().is_some_and(|name| name == ".git")
    }

    /// Its folded names and how it is judged.
    pub(crate) fn folded(&self) -> (&[String], AreaKind) {
        (&self.names, self.kind)
    }

    /// How `check` shows it, given its path relative to the zone.
    pub(crate) fn shown(&self, rel: &Path) -> String {
        let rel = rel.to_string_lossy();
        let rel = if rel.is_empty() { "." } else { &rel };
        match self.kind {
            AreaKind::GitDir => format!("{rel}/ ({})", self.why),
            AreaKind::Tree => format!("{rel}/** ({})", self.why),
            AreaKind::File => format!("{rel} ({})", self.why),
        }
    }
}

/// One repository.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// Its git directory's real path.
    git_dir: PathBuf,
    work_tree: Option<PathBuf>,
    /// Every file what follows was read from (or would be, if it existed), with its stamp.
    sources: Vec<(PathBuf, Stamp)>,
    areas: Vec<Area>,
}

impl Repo {
    /// The repository of the work tree `dir` (it holds a `.git` entry).
    pub(crate) fn of_work_tree(dir: &Path, scopes: &Scopes) -> Repo {
        let dot_git = dir.join(".git");
        let git_dir = match std::fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_file() => gitdir_file(&dot_git).unwrap_or_else(|| dot_git.clone()),
            Ok(_) | Err(_) => dot_git.clone(),
        };
        let mut repo = Repo {
            git_dir: real_host_path(&git_dir),
            work_tree: Some(dir.to_path_buf()),
            sources: Vec::new(),
            areas: Vec::new(),
        };
        repo.read(scopes);
        repo
    }

    /// The repository of the git directory `dir` (found by its contents): a bare one, or the
    /// `.git` directory of the work tree above it.
    pub(crate) fn of_git_dir(dir: &Path, scopes: &Scopes) -> Repo {
        let work_tree = (dir.file_name().is_some_and(|name| name == ".git"))
            .then(|| dir.parent().map(Path::to_path_buf))
            .flatten();
        let mut repo = Repo {
            git_dir: real_host_path(dir),
            work_tree,
            sources: Vec::new(),
            areas: Vec::new(),
        };
        repo.read(scopes);
        repo
    }

    /// What it protects.
    pub(crate) fn areas(&self) -> impl Iterator<Item = &Area> {
        self.areas.iter()
    }

    /// Reads everything again when a file it came from changed.
    pub(crate) fn refresh(&mut self, scopes: &Scopes) {
        if self.sources.iter().any(|(path, seen)| stamp(path) != *seen) {
            if let Some(work_tree) = &self.work_tree
                && std::fs::symlink_metadata(work_tree.join(".git")).is_ok_and(|m| m.is_file())
            {
                let dot_git = work_tree.join(".git");
                self.git_dir = real_host_path(&gitdir_file(&dot_git).unwrap_or(dot_git));
            }
            self.read(scopes);
        }
    }

    /// Reads the repository's directories and configuration into its areas.
    fn read(&mut self, scopes: &Scopes) {
        self.sources.clear();
        self.areas.clear();
        let git_dir = self.git_dir.clone();
        if let Some(work_tree) = &self.work_tree {
            let dot_git = work_tree.join(".git");
            self.sources.push((dot_git.clone(), stamp(&dot_git)));
        }
        self.areas
            .push(Area::new(&git_dir, AreaKind::GitDir, "git directory"));
        let commondir = git_dir.join("commondir");
        self.sources.push((commondir.clone(), stamp(&commondir)));
        let common = read_small(&commondir)
            .and_then(|text| text.lines().next().map(str::trim).map(str::to_owned))
            .filter(|line| !line.is_empty())
            .map(|line| join_normalised(&real_host_path(&git_dir.join(line)), Path::new("")));
        let common = match common {
            Some(common) if common != git_dir => {
                self.areas.push(Area::new(
                    &common,
                    AreaKind::GitDir,
                    "git directory (commondir)",
                ));
                common
            }
            Some(_) | None => git_dir.clone(),
        };
        let mut files: Vec<PathBuf> = scopes.files.clone();
        files.push(common.join("config"));
        files.push(git_dir.join("config.worktree"));
        if common != git_dir {
            files.push(common.join("config.worktree"));
        }
        let mut hooks: Vec<String> = Vec::new();
        let mut work_trees: Vec<String> = Vec::new();
        for file in files {
            self.read_file(&file, 0, scopes, &mut hooks, &mut work_trees);
        }
        hooks.extend(
            scopes
                .env
                .iter()
                .filter(|(key, _)| key == "core.hookspath")
                .map(|(_, value)| value.clone()),
        );
        // Where git may run hooks from: the work tree, a `core.worktree`, the git directory.
        let mut bases: Vec<PathBuf> = self.work_tree.iter().cloned().collect();
        // git takes `core.worktree` as written (no `~`), relative to the git directory.
        bases.extend(
            work_trees
                .iter()
                .filter(|value| !value.is_empty())
                .map(|value| join_normalised(&git_dir, Path::new(value))),
        );
        bases.push(git_dir.clone());
        for value in &hooks {
            // Newer git strips `:(optional)` from path values (a missing one is no error).
            let value = value.strip_prefix(":(optional)").unwrap_or(value);
            for base in &bases {
                let Some(dir) = interpolate_path(value, base, scopes.home.as_deref()) else {
                    continue;
                };
                let mut dirs = vec![dir];
                // `link/../h` is where the system takes it (through the link), not only
                // where the names say.
                if !Path::new(value).is_absolute() && value.contains("..") {
                    dirs.push(real_host_path(&base.join(value)));
                }
                for dir in dirs {
                    self.hooks_area(&dir);
                }
            }
        }
    }

    /// Protects the hooks directory `dir`, and with husky's `_/` (stubs that run the scripts
    /// in the directory above) that directory too.
    fn hooks_area(&mut self, dir: &Path) {
        self.areas
            .push(Area::new(dir, AreaKind::Tree, "core.hooksPath"));
        if dir.file_name().is_some_and(|name| name == "_")
            && let Some(parent) = dir.parent()
        {
            self.areas.push(Area::new(
                parent,
                AreaKind::Tree,
                "core.hooksPath (husky's scripts)",
            ));
        }
    }

    /// Reads one configuration file (and what it includes), collecting its `core.hooksPath`
    /// and `core.worktree` values.
    fn read_file(
        &mut self,
        file: &Path,
        depth: usize,
        scopes: &Scopes,
        hooks: &mut Vec<String>,
        work_trees: &mut Vec<String>,
    ) {
        self.sources.push((file.to_path_buf(), stamp(file)));
        let Some(config) = read_config(file) else {
            return;
        };
        hooks.extend(values(&config, "core", "hookspath"));
        work_trees.extend(values(&config, "core", "worktree"));
        let dir = file.parent().unwrap_or(Path::new("/"));
        let includes: Vec<PathBuf> = config
            .entries
            .iter()
            .filter(|entry| {
                entry.key == "path"
                    && match entry.section.as_str() {
                        "include" => entry.subsection.is_none(),
                        "includeif" => entry.subsection.is_some(),
                        _ => false,
                    }
            })
            .filter_map(|entry| entry.value.as_deref())
            .filter_map(|value| interpolate_path(value, dir, scopes.home.as_deref()))
            .collect();
        for include in includes {
            self.areas
                .push(Area::new(&include, AreaKind::File, "include.path"));
            if depth + 1 < MAX_INCLUDE_DEPTH
                && !self.sources.iter().any(|(seen, _)| *seen == include)
            {
                self.read_file(&include, depth + 1, scopes, hooks, work_trees);
            }
        }
    }
}

/// Every value of `section.key` in `config`, in file order.
fn values(config: &ParsedConfig, section: &str, key: &str) -> Vec<String> {
    config
        .values(section, key)
        .filter_map(|entry| entry.value.clone())
        .collect()
}

/// The configuration in `file`, if it can be read.
fn read_config(file: &Path) -> Option<ParsedConfig> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX_CONFIG_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(parse_config(&bytes))
}

/// The start of a small file (a `commondir` or `.git` file), if it can be read.
fn read_small(file: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(64 << 10)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The git directory a `.git` file names (`gitdir: <path>`, relative to the file's directory).
fn gitdir_file(dot_git: &Path) -> Option<PathBuf> {
    let text = read_small(dot_git)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    let base = dot_git.parent()?;
    Some(join_normalised(
        &real_host_path(&base.join(target)),
        Path::new(""),
    ))
}
