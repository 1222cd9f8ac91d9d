//! No forgotten test files: every `.rs` file under a crate's `tests/` is compiled into one of
//! its test programs, reached from a `[[test]]` target (or, where cargo discovers them, a file
//! directly in `tests/`) through `mod` declarations. A file nobody declares is a test that
//! silently never runs.

use std::collections::BTreeSet;
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

#[test]
fn every_test_file_is_declared_in_a_test_program() {
    let root = workspace_root();
    let mut forgotten: Vec<String> = Vec::new();
    let mut crates = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("tests").is_dir() {
            continue;
        }
        crates += 1;
        let mut reached: BTreeSet<PathBuf> = BTreeSet::new();
        let mut stack: Vec<(PathBuf, bool)> =
            test_roots(&dir).into_iter().map(|f| (f, true)).collect();
        while let Some((file, is_root)) = stack.pop() {
            let Ok(file) = file.canonicalize() else {
                continue;
            };
            if reached.insert(file.clone()) {
                stack.extend(declared(&file, is_root).into_iter().map(|f| (f, false)));
            }
        }
        let mut files = Vec::new();
        rust_files(&dir.join("tests"), &mut files);
        for file in files {
            if !reached.contains(&file.canonicalize().unwrap()) {
                forgotten.push(file.strip_prefix(&root).unwrap().display().to_string());
            }
        }
    }
    assert!(crates >= 5, "found the tests of only {crates} crates");
    assert!(
        forgotten.is_empty(),
        "test files no test program declares (add a `mod` line to the runner or a module that \
         is declared): {forgotten:#?}"
    );
}

#[test]
fn the_checker_finds_a_forgotten_file() {
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(tests.join("runner")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nautotests = false\n\n[[test]]\nname = \"runner\"\npath = \"tests/runner.rs\"\n",
    )
    .unwrap();
    std::fs::write(
        tests.join("runner.rs"),
        "//! r\nmod a;\n#[path = \"x/b.rs\"]\nmod b;\n",
    )
    .unwrap();
    std::fs::write(tests.join("a.rs"), "//! a\npub(crate) mod c;\n").unwrap();
    std::fs::create_dir_all(tests.join("a")).unwrap();
    std::fs::write(tests.join("a/c.rs"), "//! c\n").unwrap();
    std::fs::create_dir_all(tests.join("x")).unwrap();
    std::fs::write(tests.join("x/b.rs"), "//! b\n").unwrap();
    let roots = test_roots(dir.path());
    assert_eq!(roots, [dir.path().join("tests/runner.rs")]);
    let from_root = declared(&roots[0], true);
    assert_eq!(from_root, [tests.join("a.rs"), tests.join("x/b.rs")]);
    assert_eq!(declared(&tests.join("a.rs"), false), [tests.join("a/c.rs")]);
}
