//! Finding test files: `NAME.test.yaml` beside `NAME.worker`, and `tests/*.yaml` in a folder
//! whose worker is `main.worker`. A path argument may be a worker, a test file or a directory
//! (searched below, hidden folders skipped); each test file is loaded with its worker's zones.

use std::path::{Path, PathBuf};

use golem_runtime::config::ProgramConfig;
use golem_runtime::worker::{WORKER_EXTENSION, load_worker};

use crate::error::TestError;
use crate::file::{TestFile, load_test_file};

/// The suffix of a worker's own test file (`NAME.test.yaml`).
pub const TEST_SUFFIX: &str = ".test.yaml";

/// The test file of a worker, loaded.
#[derive(Debug)]
pub struct Suite {
    /// The worker file.
    pub worker: PathBuf,
    /// The worker's name.
    pub worker_name: String,
    /// Its zones' names (the program's default zones when it declares none).
    pub zones: Vec<String>,
    /// The test file.
    pub file: PathBuf,
    /// Its cases.
    pub tests: TestFile,
}

/// The test files that `paths` name, each with its worker, in a stable order (by path).
pub fn find_test_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, TestError> {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    for path in paths {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        if path.is_dir() {
            let mut workers = Vec::new();
            walk_workers(&path, &mut workers);
            for worker in workers {
                found.extend(tests_of(&worker).into_iter().map(|t| (worker.clone(), t)));
            }
        } else if path.is_file() {
            let name = file_name(&path);
            if path.extension().is_some_and(|e| e == WORKER_EXTENSION) {
                found.extend(tests_of(&path).into_iter().map(|t| (path.clone(), t)));
            } else if name.ends_with(".yaml") {
                found.push((worker_of(&path)?, path.clone()));
            } else {
                return Err(TestError::BadPath {
                    path,
                    why: "not a .worker file, a test file (.yaml) or a directory".into(),
                });
            }
        } else {
            return Err(TestError::BadPath {
                path,
                why: "no such file or directory".into(),
            });
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// Loads each test file with its worker's zones.
pub fn load_suites(found: &[(PathBuf, PathBuf)]) -> Result<Vec<Suite>, TestError> {
    found
        .iter()
        .map(|(worker, file)| {
            let (worker_name, zones) = worker_zones(worker)?;
            let tests = load_test_file(file, &zones)?;
            Ok(Suite {
                worker: worker.clone(),
                worker_name,
                zones,
                file: file.clone(),
                tests,
            })
        })
        .collect()
}

/// The worker's name and its zones' names, as a session of it would have them.
pub fn worker_zones(worker: &Path) -> Result<(String, Vec<String>), TestError> {
    let mut definition = load_worker(worker).map_err(|e| TestError::Worker(e.to_string()))?;
    let dir = worker.parent().unwrap_or(Path::new("."));
    let config = ProgramConfig::discover(dir).map_err(|e| TestError::Worker(e.to_string()))?;
    config.apply_default_zones(&mut definition);
    let zones = definition.zones.iter().map(|z| z.name.clone()).collect();
    Ok((definition.name, zones))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The test files of the worker at `worker`.
fn tests_of(worker: &Path) -> Vec<PathBuf> {
    let mut tests = Vec::new();
    let dir = worker.parent().unwrap_or(Path::new("."));
    if let Some(stem) = worker.file_stem() {
        let own = dir.join(format!("{}{TEST_SUFFIX}", stem.to_string_lossy()));
        if own.is_file() {
            tests.push(own);
        }
    }
    if file_name(worker) == format!("main.{WORKER_EXTENSION}")
        && let Ok(entries) = std::fs::read_dir(dir.join("tests"))
    {
        let mut more: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        more.sort();
        tests.extend(more);
    }
    tests
}

/// The worker a test file tests.
fn worker_of(test: &Path) -> Result<PathBuf, TestError> {
    let name = file_name(test);
    let dir = test.parent().unwrap_or(Path::new("."));
    if let Some(stem) = name.strip_suffix(TEST_SUFFIX) {
        let worker = dir.join(format!("{stem}.{WORKER_EXTENSION}"));
        if worker.is_file() {
            return Ok(worker);
        }
    }
    if dir.file_name().is_some_and(|n| n == "tests")
        && let Some(folder) = dir.parent()
    {
        let main = folder.join(format!("main.{WORKER_EXTENSION}"));
        if main.is_file() {
            return Ok(main);
        }
    }
    Err(TestError::BadPath {
        path: test.to_owned(),
        why: format!(
            "no worker for this test file: expected NAME.worker beside NAME{TEST_SUFFIX}, or \
             main.worker in the folder above tests/"
        ),
    })
}

/// Every `.worker` file below `dir`, hidden folders skipped.
fn walk_workers(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if file_name(&path).starts_with('.') {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk_workers(&path, out);
        } else if meta.is_file() && path.extension().is_some_and(|e| e == WORKER_EXTENSION) {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_own_tests_and_a_main_workers_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.worker"), "x").unwrap();
        std::fs::write(root.join("a.test.yaml"), "x").unwrap();
        std::fs::write(root.join("b.worker"), "x").unwrap();
        std::fs::create_dir_all(root.join("m/tests")).unwrap();
        std::fs::write(root.join("m/main.worker"), "x").unwrap();
        std::fs::write(root.join("m/tests/one.yaml"), "x").unwrap();
        std::fs::write(root.join("m/tests/notes.txt"), "x").unwrap();
        std::fs::create_dir_all(root.join(".golem-forge")).unwrap();
        std::fs::write(root.join(".golem-forge/h.worker"), "x").unwrap();
        std::fs::write(root.join(".golem-forge/h.test.yaml"), "x").unwrap();
        let found = find_test_files(&[root.to_owned()]).unwrap();
        assert_eq!(
            found,
            vec![
                (root.join("a.worker"), root.join("a.test.yaml")),
                (root.join("m/main.worker"), root.join("m/tests/one.yaml")),
            ]
        );
        assert_eq!(
            find_test_files(&[root.join("m/tests/one.yaml")]).unwrap(),
            vec![(root.join("m/main.worker"), root.join("m/tests/one.yaml"))]
        );
        assert!(matches!(
            find_test_files(&[root.join("m/tests/notes.txt")]),
            Err(TestError::BadPath { .. })
        ));
        std::fs::write(root.join("lonely.test.yaml"), "x").unwrap();
        assert!(matches!(
            find_test_files(&[root.join("lonely.test.yaml")]),
            Err(TestError::BadPath { .. })
        ));
        assert!(
            find_test_files(&[root.join("b.worker")])
                .unwrap()
                .is_empty()
        );
    }
}
