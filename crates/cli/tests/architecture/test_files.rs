//! No forgotten test files: every `.rs` file under a crate's `tests/` is compiled into one of
//! its test programs, reached from a `[[test]]` target (or, where cargo discovers them, a file
//! directly in `tests/`) through `mod` declarations. A file nobody declares is a test that
//! silently never runs. The binary's test programs (`crates/cli/tests/runner.rs` and each
//! `crates/cli/tests/<program>/main.rs`) also share no file: what they have in common is in
//! `golem_testkit::cli`, and none declares a module by `#[path]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{rust_files, workspace_root};

/// The test programs' root files of the crate at `dir`: its `[[test]]` paths, and the files
/// directly in `tests/` unless `autotests = false`.
fn test_roots(dir: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
            continue;
        }
        if in_test && let Some(path) = line.strip_prefix("path") {
            let path = path
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            roots.push(dir.join(path));
        }
    }
    let autotests = !manifest
        .lines()
        .any(|line| line.replace(' ', "") == "autotests=false");
    if autotests && let Ok(entries) = std::fs::read_dir(dir.join("tests")) {
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                roots.push(path);
            }
        }
    }
    roots
}

/// The module files `file` declares (`mod name;`, with or without `#[path = "…"]`), found as
/// rustc finds them; `is_root` for a test program's root file, whose modules sit beside it.
fn declared(file: &Path, is_root: bool) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).unwrap();
    let here = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let children = if is_root || stem == "mod" {
        here.to_path_buf()
    } else {
        here.join(stem.as_ref())
    };
    let mut out = Vec::new();
    let mut path_attr: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path") {
            path_attr = rest.split('"').nth(1).map(str::to_owned);
            continue;
        }
        let decl = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        let Some(name) = decl
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
            .map(str::trim)
        else {
            if !line.starts_with("#[") {
                path_attr = None;
            }
            continue;
        };
        match path_attr.take() {
            Some(path) => out.push(here.join(path)),
            None => {
                let flat = children.join(format!("{name}.rs"));
                out.push(if flat.exists() {
                    flat
                } else {
                    children.join(name).join("mod.rs")
                });
            }
        }
    }
    out
}

/// The files of the crate at `dir` that its test programs reach, each with the root files of
/// the programs that reach it.
fn reached(dir: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut reached: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for root in test_roots(dir) {
        let Ok(root) = root.canonicalize() else {
            continue;
        };
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        let mut stack = vec![(root.clone(), true)];
        while let Some((file, is_root)) = stack.pop() {
            let Ok(file) = file.canonicalize() else {
                continue;
            };
            if seen.insert(file.clone()) {
                stack.extend(declared(&file, is_root).into_iter().map(|f| (f, false)));
                reached.entry(file).or_default().insert(root.clone());
            }
        }
    }
    reached
}

/// The `.rs` files under the `tests/` of the crate at `dir` that no test program reaches.
fn forgotten(dir: &Path) -> Vec<PathBuf> {
    let reached = reached(dir);
    let mut files = Vec::new();
    rust_files(&dir.join("tests"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|file| !reached.contains_key(&file.canonicalize().unwrap()))
        .collect()
}

/// The files of the crate at `dir` that more than one test program compiles: shared code
/// belongs in `golem-testkit`, not in two programs at once.
fn shared(dir: &Path) -> Vec<PathBuf> {
    reached(dir)
        .into_iter()
        .filter(|(_, roots)| roots.len() > 1)
        .map(|(file, _)| file)
        .collect()
}

/// The crates of the workspace that have a `tests/` directory.
fn crates_with_tests() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("tests").is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn relative(files: &[PathBuf]) -> Vec<String> {
    let root = workspace_root();
    files
        .iter()
        .map(|file| {
            let file = file.canonicalize().unwrap_or_else(|_| file.clone());
            file.strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn every_test_file_is_declared_in_a_test_program() {
    let dirs = crates_with_tests();
    assert!(
        dirs.len() >= 5,
        "found the tests of only {} crates",
        dirs.len()
    );
    let forgotten: Vec<PathBuf> = dirs.iter().flat_map(|dir| forgotten(dir)).collect();
    assert!(
        forgotten.is_empty(),
        "test files no test program declares (add a `mod` line to the program's root, \
         `tests/<program>/main.rs` or the runner, or to a module that is declared): {:#?}",
        relative(&forgotten)
    );
}

/// The binary's test programs share their setup through `golem_testkit::cli`: each is a root
/// of its own (`tests/runner.rs`, `tests/<program>/main.rs`) whose modules are declared
/// plainly, none borrows a file of another by `#[path]`, and no file is compiled into two.
#[test]
fn the_binarys_test_programs_share_no_file() {
    let cli = workspace_root().join("crates/cli");
    let shared = shared(&cli);
    assert!(
        shared.is_empty(),
        "files compiled into more than one test program (move what they share into \
         golem_testkit::cli): {:#?}",
        relative(&shared)
    );
    let mut files = Vec::new();
    rust_files(&cli.join("tests"), &mut files);
    let with_path: Vec<PathBuf> = files
        .into_iter()
        .filter(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .any(|line| line.trim_start().starts_with("#[path"))
        })
        .collect();
    assert!(
        with_path.is_empty(),
        "test files that declare a module by `#[path]` (put the module where `mod` finds it): \
         {:#?}",
        relative(&with_path)
    );
}

/// Writes `text` to `relative` under `dir`, creating its parents.
fn put(dir: &Path, relative: &str, text: &str) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A crate laid out as this one: a runner at `tests/runner.rs` with modules beside it, and a
/// program at `tests/browser/main.rs` with its modules in `tests/browser/` (a harness in
/// `harness/mod.rs`); plus the files nobody declares, which the checker must name.
#[test]
fn the_checker_finds_a_forgotten_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "Cargo.toml",
        "[package]\nautotests = false\n\n[[test]]\nname = \"runner\"\npath = \"tests/runner.rs\"\n\n\
         [[test]]\nname = \"browser\"\npath = \"tests/browser/main.rs\"\n",
    );
    put(
        root,
        "tests/runner.rs",
        "//! r\nmod a;\npub(crate) mod d;\n",
    );
    put(root, "tests/a.rs", "//! a\npub(crate) mod c;\n");
    put(root, "tests/a/c.rs", "//! c\n");
    put(root, "tests/d/mod.rs", "//! d\nmod e;\n");
    put(root, "tests/d/e.rs", "//! e\n");
    put(
        root,
        "tests/browser/main.rs",
        "//! b\nmod harness;\nmod page_tests;\n",
    );
    put(root, "tests/browser/harness/mod.rs", "//! h\nmod ui;\n");
    put(root, "tests/browser/harness/ui.rs", "//! u\n");
    put(root, "tests/browser/page_tests.rs", "//! p\n");
    let tests = root.join("tests");
    assert_eq!(
        test_roots(root),
        [tests.join("runner.rs"), tests.join("browser/main.rs")]
    );
    assert_eq!(
        declared(&tests.join("runner.rs"), true),
        [tests.join("a.rs"), tests.join("d/mod.rs")]
    );
    assert_eq!(declared(&tests.join("a.rs"), false), [tests.join("a/c.rs")]);
    assert_eq!(
        declared(&tests.join("browser/main.rs"), true),
        [
            tests.join("browser/harness/mod.rs"),
            tests.join("browser/page_tests.rs")
        ]
    );
    assert!(forgotten(root).is_empty(), "{:?}", forgotten(root));
    assert!(shared(root).is_empty());

    // Files nobody declares: beside the runner, in a program's folder, in its harness.
    put(root, "tests/stray.rs", "//! s\n");
    put(root, "tests/browser/stray.rs", "//! s\n");
    put(root, "tests/browser/harness/stray.rs", "//! s\n");
    let stray: Vec<PathBuf> = [
        "tests/browser/harness/stray.rs",
        "tests/browser/stray.rs",
        "tests/stray.rs",
    ]
    .iter()
    .map(|file| root.join(file))
    .collect();
    assert_eq!(forgotten(root), stray);

    // A file two programs compile (the runner borrowing the browser's harness).
    put(
        root,
        "tests/runner.rs",
        "//! r\nmod a;\npub(crate) mod d;\n#[path = \"browser/harness/ui.rs\"]\nmod ui;\n",
    );
    assert_eq!(
        shared(root),
        [root
            .join("tests/browser/harness/ui.rs")
            .canonicalize()
            .unwrap()]
    );
}
