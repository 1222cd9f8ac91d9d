//! `--each GLOB`: one item per matching file. The glob is relative to the current directory
//! (`*` within one path segment, `**` as a whole segment for any depth); each match's id is its
//! path as matched, and its input is the prompt with `{path}` replaced by the file's virtual
//! path in the worker's zones (the path alone without a prompt). A matching file outside every
//! zone is an error before anything runs: the worker could not read it.

use std::path::{Component, Path, PathBuf};

use golem_policy::glob_matches;

use crate::input::BatchItem;

/// What stops `--each` from making items.
#[derive(Debug, thiserror::Error)]
pub enum EachError {
    /// The glob climbs out of the current directory or is empty.
    #[error("`{0}` is not a glob under the current directory (no `..`, not empty)")]
    BadGlob(String),
    /// Nothing matches.
    #[error("no file matches `{0}`")]
    NoMatch(String),
    /// Matching files the worker cannot see.
    #[error("{} matching file{} outside every zone of the worker: {}", .0.len(), if .0.len() == 1 { " is" } else { "s are" }, .0.join(", "))]
    OutsideZones(Vec<String>),
    /// A directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A zone of the worker: its name and host directory.
#[derive(Debug, Clone)]
pub struct ZoneDir {
    /// The zone's name (its virtual path is `/<name>`).
    pub name: String,
    /// Its host directory.
    pub dir: PathBuf,
}

/// The items of `glob` under `cwd` (sorted by path), for a worker with `zones`.
pub fn items_for_each(
    glob: &str,
    cwd: &Path,
    zones: &[ZoneDir],
    prompt: Option<&str>,
) -> Result<Vec<BatchItem>, EachError> {
    let pattern = glob.trim().trim_start_matches("./");
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() || segments.iter().any(|s| *s == ".." || *s == ".") {
        return Err(EachError::BadGlob(glob.to_owned()));
    }
    let literal: PathBuf = segments.iter().take_while(|s| !s.contains('*')).collect();
    let start = cwd.join(&literal);
    let mut files = Vec::new();
    if start.is_file() {
        files.push(literal.clone());
    } else if start.is_dir() {
        walk(cwd, &literal, &mut files)?;
    }
    let full = format!("/{}", segments.join("/"));
    let mut matched: Vec<String> = files
        .iter()
        .filter_map(|rel| rel.to_str().map(str::to_owned))
        .filter(|rel| glob_matches(&full, &format!("/{rel}")))
        .collect();
    matched.sort();
    if matched.is_empty() {
        return Err(EachError::NoMatch(glob.to_owned()));
    }
    let zones: Vec<(String, PathBuf)> = zones
        .iter()
        .filter_map(|z| Some((z.name.clone(), z.dir.canonicalize().ok()?)))
        .collect();
    let mut items = Vec::new();
    let mut outside = Vec::new();
    for (index, rel) in matched.iter().enumerate() {
        match virtual_path(&cwd.join(rel), &zones) {
            Some(path) => items.push(BatchItem {
                id: rel.clone(),
                input: match prompt {
                    Some(prompt) => prompt.replace("{path}", &path),
                    None => path,
                },
                instructions: None,
                line: index + 1,
            }),
            None => outside.push(rel.clone()),
        }
    }
    if outside.is_empty() {
        Ok(items)
    } else {
        Err(EachError::OutsideZones(outside))
    }
}

/// Every file under `cwd/dir`, as paths relative to `cwd`; symbolic links are not followed.
fn walk(cwd: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), EachError> {
    let path = cwd.join(dir);
    let entries = std::fs::read_dir(&path).map_err(|source| EachError::Io {
        path: path.clone(),
        source,
    })?;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = dir.join(entry.file_name());
        if kind.is_dir() {
            walk(cwd, &rel, files)?;
        } else if kind.is_file() {
            files.push(rel);
        }
    }
    Ok(())
}

/// `/<zone>/<rest>` for `file` in one of `zones` (canonical directories), if any.
fn virtual_path(file: &Path, zones: &[(String, PathBuf)]) -> Option<String> {
    let file = file.canonicalize().ok()?;
    zones.iter().find_map(|(name, dir)| {
        let rest = file.strip_prefix(dir).ok()?;
        let parts: Vec<String> = rest
            .components()
            .map(|c| match c {
                Component::Normal(part) => part.to_str().map(str::to_owned),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(format!("/{name}/{}", parts.join("/")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "docs/a.md",
            "docs/b.md",
            "docs/sub/c.md",
            "docs/notes.txt",
            "other/d.md",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn docs_zone(root: &Path) -> Vec<ZoneDir> {
        vec![ZoneDir {
            name: "docs".into(),
            dir: root.join("docs"),
        }]
    }

    #[test]
    fn each_matching_file_is_an_item_with_its_virtual_path() {
        let root = tree();
        let items = items_for_each(
            "docs/*.md",
            root.path(),
            &docs_zone(root.path()),
            Some("Review {path} for typos"),
        )
        .unwrap();
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["docs/a.md", "docs/b.md"]);
        assert_eq!(items[0].input, "Review /docs/a.md for typos");
        let deep =
            items_for_each("docs/**/*.md", root.path(), &docs_zone(root.path()), None).unwrap();
        let inputs: Vec<&str> = deep.iter().map(|i| i.input.as_str()).collect();
        assert_eq!(inputs, ["/docs/a.md", "/docs/b.md", "/docs/sub/c.md"]);
    }

    #[test]
    fn files_outside_the_zones_and_bad_globs_are_refused() {
        let root = tree();
        let err =
            items_for_each("**/*.md", root.path(), &docs_zone(root.path()), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 matching file is outside every zone of the worker: other/d.md"
        );
        assert!(matches!(
            items_for_each("../*.md", root.path(), &[], None),
            Err(EachError::BadGlob(_))
        ));
        assert!(matches!(
            items_for_each("docs/*.rs", root.path(), &docs_zone(root.path()), None),
            Err(EachError::NoMatch(_))
        ));
    }
}
