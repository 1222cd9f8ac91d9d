//! The documentation: every path ARCHITECTURE.md and `docs/` name exists, the map stays a map
//! (at most 300 lines, none over 200 characters), and nothing points outside the repository.

use std::path::{Path, PathBuf};

use super::workspace_root;

/// The map and the contracts: ARCHITECTURE.md and every Markdown file under `docs/`.
fn documentation_files() -> Vec<PathBuf> {
    fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                markdown(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = workspace_root();
    let mut files = vec![root.join("ARCHITECTURE.md")];
    markdown(&root.join("docs"), &mut files);
    files.sort();
    files
}

/// Where a repository path may start: the top-level directories a document points into, and
/// `../`, which leads out of the repository and so is never a path that exists in it.
const PATH_ROOTS: &[&str] = &["crates/", "docs/", "scripts/", "examples/", ".ci/", "../"];

/// The repository paths `text` names: backticked tokens under one of [`PATH_ROOTS`] or naming a
/// top-level Markdown file (`README.md`), and the targets of relative Markdown links. Tokens
/// that stand for many paths (`crates/*/src`, `<name>`, `{a,b}`, `…`) and fenced code blocks
/// (examples, not references) are left out.
fn named_paths(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let mut paths = Vec::new();
    for (index, token) in prose.split('`').enumerate() {
        if index % 2 == 0 {
            continue;
        }
        let token = token.trim();
        let looks_like_path = PATH_ROOTS.iter().any(|root| token.starts_with(root))
            || (!token.contains('/') && token.ends_with(".md"));
        let pattern = token.contains(['*', '<', '>', '{', '}', ' ', '…', '|', '$']);
        if looks_like_path && !pattern {
            paths.push(token.to_owned());
        }
    }
    for piece in prose.split("](").skip(1) {
        let Some(target) = piece.split(')').next() else {
            continue;
        };
        let target = target.split('#').next().unwrap_or("").trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            paths.push(target.to_owned());
        }
    }
    paths
}

/// `base` joined with `path`, with `.` and `..` resolved lexically; `None` when the result
/// leaves `root`.
fn inside(root: &Path, base: &Path, path: &str) -> Option<PathBuf> {
    use std::path::Component;
    let mut joined = base.to_path_buf();
    for component in Path::new(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !joined.pop() {
                    return None;
                }
            }
            Component::Normal(part) => joined.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    joined.starts_with(root).then_some(joined)
}

#[test]
fn every_path_the_documentation_names_exists() {
    let root = workspace_root();
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in documentation_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        let dir = file.parent().unwrap();
        for path in named_paths(&text) {
            checked += 1;
            // Backticked paths are from the repository root; a link is from its own file.
            // Either way the path must stay inside the repository.
            let exists = |base: &Path| inside(&root, base, &path).is_some_and(|p| p.exists());
            if !exists(&root) && !exists(dir) {
                missing.push(format!("{shown}: {path}"));
            }
        }
    }
    assert!(
        checked > 50,
        "found only {checked} paths in the documentation"
    );
    assert!(
        missing.is_empty(),
        "paths named in the documentation that do not exist (paths are relative to the \
         repository root): {missing:#?}"
    );
}

#[test]
fn the_architecture_map_stays_a_map() {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() <= 300,
        "ARCHITECTURE.md has {} lines; it is a map of at most 300: move details into docs/ \
         or docs/decisions/",
        lines.len()
    );
    let long: Vec<String> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.chars().count() > 200)
        .map(|(at, line)| format!("line {}: {} characters", at + 1, line.chars().count()))
        .collect();
    assert!(
        long.is_empty(),
        "ARCHITECTURE.md lines over 200 characters: {long:#?}"
    );
}

/// Every text file below `dir`, skipping build output.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("target") && !path.ends_with("node_modules") {
                text_files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn nothing_points_outside_the_repository() {
    // Built from pieces, so that this file does not name what it looks for.
    let needles = [
        ["DESIGN", ".md"].concat(),
        ["..", "/shared"].concat(),
        ["seed", " 00"].concat(),
    ];
    let root = workspace_root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in ["crates", "docs", "scripts"] {
        text_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut offenders = Vec::new();
    for file in &files {
        // Binary files (images, fonts) are not read as text.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let lower = text.to_lowercase();
        for needle in &needles {
            if lower.contains(&needle.to_lowercase()) {
                let shown = file.strip_prefix(&root).unwrap().display().to_string();
                offenders.push(format!("{shown}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "files that point outside the repository (write the contract in docs/ and point \
         there): {offenders:#?}"
    );
}
