//! Finding workers: by name under the program's worker directories (`<dir>/<name>.worker`,
//! `<dir>/<name>/main.worker`, or any `.worker` file whose `name:` matches), with duplicate
//! names refused; and the command line's `<WORKER>` argument (a file, a directory with
//! `main.worker`, or a name). Nothing here runs a worker.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::config::{ConfigError, ProgramConfig};
use crate::worker::suggest::did_you_mean;
use crate::worker::{
    WORKER_EXTENSION, WorkerDefinition, WorkerFileError, is_valid_worker_name, load_worker,
};

/// The file a worker directory starts from.
pub const MAIN_WORKER: &str = "main.worker";

/// Directories never searched for workers.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

/// The workers of a program, by name.
#[derive(Debug)]
pub struct WorkerRegistry {
    roots: Vec<PathBuf>,
    workers: Vec<WorkerDefinition>,
    by_name: BTreeMap<String, usize>,
    broken: Vec<WorkerFileError>,
}

/// A worker that cannot be found, or a program whose workers are ambiguous.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum RegistryError {
    /// The program config is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The worker file is unreadable or invalid.
    #[error(transparent)]
    Worker(#[from] WorkerFileError),
    /// Two worker files declare the same name.
    #[error("two workers are named {name}: {} and {}", first.display(), second.display())]
    Duplicate {
        name: String,
        /// The file found first.
        first: PathBuf,
        /// The other file.
        second: PathBuf,
    },
    /// A directory to search cannot be read.
    #[error("cannot read directory {}: {source}", path.display())]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// No worker has this name.
    #[error(
        "no worker named `{name}`: looked for {name}.worker, {name}/main.worker and `name: {name}` \
         in {}{}",
        list_dirs(searched),
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directories searched.
        searched: Vec<PathBuf>,
        /// A near name that exists.
        suggestion: Option<String>,
    },
    /// A path given on the command line does not exist.
    #[error(
        "no worker file at {}{}",
        path.display(),
        suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default()
    )]
    NoSuchPath {
        path: PathBuf,
        /// A near `.worker` file in the same directory.
        suggestion: Option<String>,
    },
    /// A directory given on the command line has no `main.worker`.
    #[error("directory {} has no main.worker{}", dir.display(), list_workers(workers))]
    NoMainWorker {
        /// The directory.
        dir: PathBuf,
        /// The `.worker` files it does have.
        workers: Vec<String>,
    },
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs
        .iter()
        .map(|dir| {
            if dir.is_dir() {
                dir.display().to_string()
            } else {
                format!("{} (missing)", dir.display())
            }
        })
        .collect();
    shown.join(", ")
}

fn list_workers(workers: &[String]) -> String {
    if workers.is_empty() {
        String::new()
    } else {
        format!(" (it has {}; pass one of them)", workers.join(", "))
    }
}

impl WorkerRegistry {
    /// Finds the workers of a program: the `.worker` files of its worker directories
    /// ([`ProgramConfig::worker_dirs`]) and of their immediate subdirectories (hidden ones,
    /// `target` and `node_modules` skipped), and those directly in `start_dir` (the current
    /// directory, or a delegating worker's), which is also searched first by file name.
    /// Files that do not parse are kept aside ([`Self::broken`]); two files with the same
    /// `name` are an error.
    pub fn discover(config: &ProgramConfig, start_dir: &Path) -> Result<Self, RegistryError> {
        let start = tidy(start_dir);
        let mut worker_dirs: Vec<PathBuf> = Vec::new();
        for dir in config.worker_dirs() {
            let dir = tidy(&dir);
            if !worker_dirs.contains(&dir) {
                worker_dirs.push(dir);
            }
        }
        let mut candidates = if start.is_dir() {
            worker_files_in(&start).map_err(|source| RegistryError::ReadDir {
                path: start.clone(),
                source,
            })?
        } else {
            Vec::new()
        };
        for dir in &worker_dirs {
            candidates.extend(worker_files(dir)?);
        }
        let mut files: Vec<PathBuf> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for file in candidates {
            // The same file may be reached from overlapping directories.
            if seen.insert(file.canonicalize().unwrap_or_else(|_| file.clone())) {
                files.push(file);
            }
        }
        let mut roots = vec![start.clone()];
        roots.extend(worker_dirs.into_iter().filter(|dir| *dir != start));
        let mut registry = Self {
            roots,
            workers: Vec::new(),
            by_name: BTreeMap::new(),
            broken: Vec::new(),
        };
        for file in files {
            match load_worker(&file) {
                Ok(worker) => registry.add(worker)?,
                Err(err) => registry.broken.push(err),
            }
        }
        Ok(registry)
    }

    fn add(&mut self, worker: WorkerDefinition) -> Result<(), RegistryError> {
        if let Some(&index) = self.by_name.get(&worker.name) {
            let first = self
                .workers
                .get(index)
                .map(|w| w.path.clone())
                .unwrap_or_default();
            return Err(RegistryError::Duplicate {
                name: worker.name,
                first,
                second: worker.path,
            });
        }
        self.by_name.insert(worker.name.clone(), self.workers.len());
        self.workers.push(worker);
        Ok(())
    }

    /// The directories searched, in order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The workers found, by name.
    pub fn workers(&self) -> impl Iterator<Item = &WorkerDefinition> {
        self.by_name
            .values()
            .filter_map(|&index| self.workers.get(index))
    }

    /// The worker files found that do not parse.
    pub fn broken(&self) -> &[WorkerFileError] {
        &self.broken
    }

    /// The worker file for `name`: in each directory in turn `<dir>/<name>.worker`, then
    /// `<dir>/<name>/main.worker`; else the file whose `name:` is `name`.
    pub fn find(&self, name: &str) -> Result<PathBuf, RegistryError> {
        if is_valid_worker_name(name) {
            for root in &self.roots {
                let file = root.join(format!("{name}.{WORKER_EXTENSION}"));
                if file.is_file() {
                    return Ok(file);
                }
                let main = root.join(name).join(MAIN_WORKER);
                if main.is_file() {
                    return Ok(main);
                }
            }
        }
        if let Some(worker) = self.by_name.get(name).and_then(|&i| self.workers.get(i)) {
            return Ok(worker.path.clone());
        }
        let known = self.workers.iter().map(|w| w.name.as_str());
        Err(RegistryError::NotFound {
            name: name.to_owned(),
            searched: self.roots.clone(),
            suggestion: did_you_mean(name, known).map(str::to_owned),
        })
    }

    /// The worker parsed from the file `path` when discovery read it (the same file, by
    /// identity), so that the worker a session starts with is not read twice.
    pub fn parsed(&self, path: &Path) -> Option<&WorkerDefinition> {
        self.workers.iter().find(|w| same_file(&w.path, path))
    }

    /// The worker `name` (see [`Self::find`]), parsed.
    pub fn load(&self, name: &str) -> Result<WorkerDefinition, RegistryError> {
        let path = self.find(name)?;
        if let Some(worker) = self.parsed(&path) {
            return Ok(worker.clone());
        }
        Ok(load_worker(&path)?)
    }
}

/// Resolves the command line's `<WORKER>` against `cwd`: a worker file, a directory with a
/// `main.worker`, or a worker name looked up through the program config of `cwd`.
pub fn resolve_worker_arg(arg: &str, cwd: &Path) -> Result<PathBuf, RegistryError> {
    // `.` and `./x` name the same file as `x`, and are shown as it (not `…/./main.worker`).
    let path = tidy(&cwd.join(arg));
    if path.is_file() {
        return Ok(path);
    }
    let main = path.join(MAIN_WORKER);
    if main.is_file() {
        return Ok(main);
    }
    if is_valid_worker_name(arg) {
        let config = ProgramConfig::discover(cwd)?;
        match WorkerRegistry::discover(&config, cwd)?.find(arg) {
            // A directory of that name says what it lacks rather than that no worker has it.
            Err(RegistryError::NotFound { .. }) if path.is_dir() => {}
            found => return found,
        }
    }
    if path.is_dir() {
        let workers = worker_files_in(&path)
            .unwrap_or_default()
            .iter()
            .filter_map(|file| file.file_name()?.to_str().map(str::to_owned))
            .collect();
        return Err(RegistryError::NoMainWorker { dir: path, workers });
    }
    Err(RegistryError::NoSuchPath {
        suggestion: near_file(&path),
        path,
    })
}

/// `path` made absolute, without `.` parts or a trailing separator.
fn tidy(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    absolute.components().collect()
}

/// A `.worker` file next to `path` with a near name.
fn near_file(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    let wanted = path.file_name()?.to_str()?;
    let files = worker_files_in(dir).ok()?;
    let names: Vec<&str> = files
        .iter()
        .filter_map(|file| file.file_name()?.to_str())
        .collect();
    let near = did_you_mean(wanted, names.iter().copied())?;
    Some(dir.join(near).display().to_string())
}

/// The `.worker` files in `root` and in its immediate subdirectories, sorted; a missing root
/// has none.
fn worker_files(root: &Path) -> Result<Vec<PathBuf>, RegistryError> {
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let read_error = |source| RegistryError::ReadDir {
        path: root.to_owned(),
        source,
    };
    let mut files = worker_files_in(root).map_err(read_error)?;
    for dir in subdirectories(root).map_err(read_error)? {
        // An unreadable subdirectory holds no workers we could use.
        files.extend(worker_files_in(&dir).unwrap_or_default());
    }
    Ok(files)
}

/// The `.worker` files directly in `dir`, sorted.
fn worker_files_in(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_worker = path.extension().is_some_and(|ext| ext == WORKER_EXTENSION);
        if is_worker && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The directories directly in `dir` that may hold workers, sorted.
fn subdirectories(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.') || SKIPPED_DIRS.contains(&name) || !path.is_dir() {
            continue;
        }
        dirs.push(path);
    }
    dirs.sort();
    Ok(dirs)
}

/// Whether two paths name the same file (after resolving links), or are equal.
fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
