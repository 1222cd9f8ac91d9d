//! The jail's two sides stay apart (`crates/sandbox/src/jail/mod.rs`): no file of `inside/`,
//! what confines a jailed program, names a path into `parent/` or imports any part of the jail
//! but the wire (`spec.rs`) and, of the rest of the crate, only what [`INSIDE_MAY_IMPORT`]
//! lists; no file of `parent/` imports `inside/`; and no import circle runs through `inside/`.
//! So a reviewer who reads `inside/` and `spec.rs` has read everything that confines a program.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::imports::{cycles_through, import_graph};
use super::{rust_files, workspace_root};

/// The sandbox crate's sources.
const SANDBOX_SRC: &str = "crates/sandbox/src";

/// What the files of `jail/inside/` may import besides one another, relative to the crate's
/// `src`: the wire both sides share, and the reaper, whose mode (`__jail --reap`) the helper's
/// entry point hands over to.
const INSIDE_MAY_IMPORT: &[&str] = &["jail/spec.rs", "reaper.rs"];

/// Paths into the parent side, written from inside the jail (`parent::x` from `jail/mod.rs`,
/// `super::super::parent::x` or `crate::jail::parent::x` from `inside/`).
const PARENT_PATHS: &[&str] = &["parent::", "super::super::parent", "crate::jail::parent"];

#[test]
fn no_file_inside_the_jail_names_a_path_into_its_parent_side() {
    let root = workspace_root();
    let inside = root.join(SANDBOX_SRC).join("jail/inside");
    let mut files = Vec::new();
    rust_files(&inside, &mut files);
    assert!(
        files.len() >= 8,
        "found only {} files in {}: {files:#?}",
        files.len(),
        inside.display()
    );
    let mut offenders = Vec::new();
    for file in &files {
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        offenders.extend(
            parent_paths(&text)
                .into_iter()
                .map(|(line, code)| format!("{shown}:{line}: {code}")),
        );
    }
    assert!(
        offenders.is_empty(),
        "inside/ runs in the jail's own processes and must not reach into parent/ (what both \
         sides need belongs in jail/spec.rs): {offenders:#?}"
    );
}

#[test]
fn the_jails_inside_imports_only_itself_and_the_wire_and_the_parent_never_the_inside() {
    let src = workspace_root().join(SANDBOX_SRC);
    let graph = import_graph(&src);
    let (inside, parent) = (src.join("jail/inside"), src.join("jail/parent"));
    assert!(
        graph
            .keys()
            .filter(|file| file.starts_with(&inside))
            .count()
            >= 8
            && graph.keys().any(|file| file.starts_with(&parent)),
        "found no jail sides in {}",
        src.display()
    );
    let offenders = side_violations(&src, &graph);
    assert!(
        offenders.is_empty(),
        "the jail's sides share only jail/spec.rs (inside/ may also import {INSIDE_MAY_IMPORT:?}): \
         {offenders:#?}"
    );
    let cycles: Vec<String> = cycles_through(&graph, &inside)
        .iter()
        .map(|cycle| {
            let names: Vec<String> = cycle
                .iter()
                .map(|file| file.strip_prefix(&src).unwrap().display().to_string())
                .collect();
            names.join(" → ")
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "files of the jail's inside that import each other, directly or through others (move \
         what both need into one of them, or into a third file): {cycles:#?}"
    );
}

#[test]
fn the_side_checks_catch_a_path_into_the_parent_and_a_circle_inside() {
    let code = "//! See `parent::run` (a comment, not an import).\n\
                use crate::jail::spec::GO;\n\
                use super::super::parent::standby;\n\
                fn f() { crate::jail::parent::run::zones(); } // parent::x\n\
                const S: &str = \"not // a comment\"; fn g() { parent::net::find_stack(); }\n";
    let lines: Vec<usize> = parent_paths(code).iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, [3, 4, 5]);

    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "//! Root.\nmod jail;\nmod reaper;\nmod other;\n");
    write("reaper.rs", "//! Reaper.\n");
    write("other.rs", "//! Other.\n");
    write(
        "jail/mod.rs",
        "//! Jail.\nmod inside;\nmod parent;\nmod spec;\npub use inside::a::A;\n",
    );
    write("jail/spec.rs", "//! Spec.\n");
    write("jail/parent/mod.rs", "//! Parent.\nmod p;\n");
    write("jail/parent/p.rs", "//! P.\nuse crate::jail::spec::X;\n");
    write("jail/inside/mod.rs", "//! Inside.\nmod a;\nmod b;\n");
    write(
        "jail/inside/a.rs",
        "//! A.\nuse crate::jail::spec::X;\nuse crate::reaper::R;\nuse super::b::B;\n",
    );
    write("jail/inside/b.rs", "//! B.\n");
    let graph = import_graph(src);
    assert!(side_violations(src, &graph).is_empty());
    assert!(cycles_through(&graph, &src.join("jail/inside")).is_empty());

    write(
        "jail/inside/b.rs",
        "//! B.\nuse super::a::A;\nuse crate::other::O;\nuse crate::jail::parent::p::P;\n\
         use super::super::Jail;\n",
    );
    write(
        "jail/parent/p.rs",
        "//! P.\nuse crate::jail::inside::a::A;\n",
    );
    let graph = import_graph(src);
    assert_eq!(
        side_violations(src, &graph),
        [
            "jail/inside/b.rs imports jail/mod.rs",
            "jail/inside/b.rs imports jail/parent/p.rs",
            "jail/inside/b.rs imports other.rs",
            "jail/parent/p.rs imports jail/inside/a.rs",
        ]
    );
    assert_eq!(cycles_through(&graph, &src.join("jail/inside")).len(), 1);
}

/// The lines of `text` (numbered from 1) whose code, outside comments and string literals,
/// holds one of [`PARENT_PATHS`] as a path.
fn parent_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line_code(line);
        let hit = PARENT_PATHS.iter().any(|path| {
            code.match_indices(path).any(|(at, _)| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        });
        if hit {
            found.push((index + 1, line.trim().to_owned()));
        }
    }
    found
}

/// `line` without its `//` comment and the contents of its string literals (a literal that
/// runs over several lines counts as code on the lines after its first: the import scan of
/// the other test is exact about those).
fn line_code(line: &str) -> String {
    let mut code = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => {
                in_string = false;
                code.push(c);
            }
            (true, _) => {}
            (false, '"') => {
                in_string = true;
                code.push(c);
            }
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, _) => code.push(c),
        }
    }
    code
}

/// Each import across the jail's sides in the import graph of the crate at `src`, as
/// "`from` imports `to`" (paths relative to `src`): a file of `jail/inside/` importing a file
/// that is neither inside nor in [`INSIDE_MAY_IMPORT`], or a file of `jail/parent/` importing
/// one of `jail/inside/`.
fn side_violations(src: &Path, graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    let (inside, parent) = (src.join("jail/inside"), src.join("jail/parent"));
    let allowed: Vec<PathBuf> = INSIDE_MAY_IMPORT
        .iter()
        .map(|path| src.join(path))
        .collect();
    let mut found = Vec::new();
    for (from, imports) in graph {
        for to in imports {
            let crosses = if from.starts_with(&inside) {
                !to.starts_with(&inside) && !allowed.contains(to)
            } else {
                from.starts_with(&parent) && to.starts_with(&inside)
            };
            if crosses {
                let shown = |file: &Path| file.strip_prefix(src).unwrap().display().to_string();
                found.push(format!("{} imports {}", shown(from), shown(to)));
            }
        }
    }
    found
}
