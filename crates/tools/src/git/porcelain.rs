//! Reading `git status --porcelain=v2 --branch -z`: the branch headers and one entry per
//! changed, renamed, conflicted or untracked path, into [`GitStatusData`], the `data` of a
//! `git.status` result. Pure: no process, no paths beyond the ones given.

use serde::{Deserialize, Serialize};

/// `data` of a `git.status` result (docs/tools.md, Result kinds), with each change named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitStatusData {
    /// The current branch; `None` when `HEAD` is detached.
    pub branch: Option<String>,
    /// The abbreviated commit `HEAD` points at; `None` before the first commit.
    pub commit: Option<String>,
    /// The branch's upstream (`origin/main`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Commits on the branch that its upstream lacks.
    pub ahead: u32,
    /// Commits on the upstream that the branch lacks.
    pub behind: u32,
    /// Changes in the index (what a commit would record).
    pub staged: Vec<FileChange>,
    /// Changes in the working tree not staged yet.
    pub modified: Vec<FileChange>,
    /// Files git does not track (virtual paths).
    pub untracked: Vec<String>,
    /// Paths with unresolved merge conflicts.
    pub conflicts: Vec<FileChange>,
}

impl GitStatusData {
    /// Whether there is nothing to commit and nothing untracked.
    pub fn is_clean(&self) -> bool {
        self.staged.is_empty()
            && self.modified.is_empty()
            && self.untracked.is_empty()
            && self.conflicts.is_empty()
    }

    /// `N staged, M modified`, then the untracked files and conflicts when there are some.
    pub fn summary(&self) -> String {
        let mut summary = format!(
            "{} staged, {} modified",
            self.staged.len(),
            self.modified.len()
        );
        if !self.untracked.is_empty() {
            summary.push_str(&format!(", {} untracked", self.untracked.len()));
        }
        if !self.conflicts.is_empty() {
            summary.push_str(&format!(", {} conflicted", self.conflicts.len()));
        }
        summary
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The virtual path (`/repo/src/a.rs`).
    pub path: String,
    /// What changed: `added`, `modified`, `deleted`, `renamed`, `copied`, `type changed`; for
    /// a conflict, how it arose (`both modified`, `deleted by them`, …).
    pub change: String,
    /// The path it was renamed or copied from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// The change a status letter stands for (`M` → `modified`); `None` for `.` (unchanged).
fn change(letter: char) -> Option<&'static str> {
    Some(match letter {
        'M' => "modified",
        'T' => "type changed",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'U' => "updated but unmerged",
        _ => return None,
    })
}

/// How a conflict arose, from the two letters of an unmerged entry.
fn conflict(xy: &str) -> &'static str {
    match xy {
        "DD" => "both deleted",
        "AU" => "added by us",
        "UD" => "deleted by them",
        "UA" => "added by them",
        "DU" => "deleted by us",
        "AA" => "both added",
        _ => "both modified",
    }
}

/// Parses the output of `git status --porcelain=v2 --branch -z`; `path` turns a path git
/// printed (relative to the repository) into the virtual path shown.
pub fn parse_status(output: &str, path: impl Fn(&str) -> String) -> GitStatusData {
    let mut data = GitStatusData::default();
    let mut fields = output.split('\0');
    while let Some(field) = fields.next() {
        if let Some(header) = field.strip_prefix("# ") {
            branch_header(&mut data, header);
            continue;
        }
        let mut words = field.splitn(2, ' ');
        let (Some(kind), Some(rest)) = (words.next(), words.next()) else {
            continue;
        };
        match kind {
            "1" => {
                // XY sub mH mI mW hH hI path
                let parts: Vec<&str> = rest.splitn(8, ' ').collect();
                if let [xy, .., file] = parts.as_slice()
                    && parts.len() == 8
                {
                    push_changes(&mut data, xy, path(file), None);
                }
            }
            "2" => {
                // XY sub mH mI mW hH hI Xscore path, then the original path as a field of its own
                let parts: Vec<&str> = rest.splitn(9, ' ').collect();
                let from = fields.next().map(&path);
                if let [xy, .., file] = parts.as_slice()
                    && parts.len() == 9
                {
                    push_changes(&mut data, xy, path(file), from);
                }
            }
            "u" => {
                // XY sub m1 m2 m3 mW h1 h2 h3 path
                let parts: Vec<&str> = rest.splitn(10, ' ').collect();
                if let [xy, .., file] = parts.as_slice()
                    && parts.len() == 10
                {
                    data.conflicts.push(FileChange {
                        path: path(file),
                        change: conflict(xy).to_owned(),
                        from: None,
                    });
                }
            }
            "?" => data.untracked.push(path(rest)),
            _ => {}
        }
    }
    data
}

fn branch_header(data: &mut GitStatusData, header: &str) {
    let Some((key, value)) = header.split_once(' ') else {
        return;
    };
    match key {
        "branch.oid" if value != "(initial)" => {
            data.commit = Some(value.chars().take(7).collect());
        }
        "branch.head" if value != "(detached)" => data.branch = Some(value.to_owned()),
        "branch.upstream" => data.upstream = Some(value.to_owned()),
        "branch.ab" => {
            for count in value.split(' ') {
                if let Some(n) = count.strip_prefix('+') {
                    data.ahead = n.parse().unwrap_or(0);
                } else if let Some(n) = count.strip_prefix('-') {
                    data.behind = n.parse().unwrap_or(0);
                }
            }
        }
        _ => {}
    }
}

/// The index half of `xy` is a staged change, the working-tree half a modification.
fn push_changes(data: &mut GitStatusData, xy: &str, file: String, from: Option<String>) {
    let mut letters = xy.chars();
    let (index, tree) = (letters.next().unwrap_or('.'), letters.next().unwrap_or('.'));
    if let Some(change) = change(index) {
        data.staged.push(FileChange {
            path: file.clone(),
            change: change.to_owned(),
            from,
        });
    }
    if let Some(change) = change(tree) {
        data.modified.push(FileChange {
            path: file,
            change: change.to_owned(),
            from: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn virtual_path(p: &str) -> String {
        format!("/repo/{p}")
    }

    fn changed(path: &str, change: &str) -> FileChange {
        FileChange {
            path: format!("/repo/{path}"),
            change: change.into(),
            from: None,
        }
    }

    #[test]
    fn every_kind_of_entry() {
        let output = [
            "# branch.oid 0123456789abcdef0123456789abcdef01234567",
            "# branch.head main",
            "# branch.upstream origin/main",
            "# branch.ab +2 -1",
            "1 M. N... 100644 100644 100644 aaa bbb src/staged file.rs",
            "1 .M N... 100644 100644 100644 aaa aaa README.md",
            "1 MD N... 100644 100644 000000 aaa bbb both.txt",
            "1 A. N... 000000 100644 100644 000 bbb new.txt",
            "2 R. N... 100644 100644 100644 aaa aaa R100 moved.txt",
            "old name.txt",
            "u UU N... 100644 100644 100644 100644 a b c conflict.txt",
            "u DU N... 100644 000000 100644 100644 a b c gone.txt",
            "? notes.txt",
            "! ignored.log",
            "",
        ]
        .join("\0");
        let data = parse_status(&output, virtual_path);
        assert_eq!(data.branch.as_deref(), Some("main"));
        assert_eq!(data.commit.as_deref(), Some("0123456"));
        assert_eq!(data.upstream.as_deref(), Some("origin/main"));
        assert_eq!((data.ahead, data.behind), (2, 1));
        assert_eq!(
            data.staged,
            vec![
                changed("src/staged file.rs", "modified"),
                changed("both.txt", "modified"),
                changed("new.txt", "added"),
                FileChange {
                    from: Some("/repo/old name.txt".into()),
                    ..changed("moved.txt", "renamed")
                },
            ]
        );
        assert_eq!(
            data.modified,
            vec![
                changed("README.md", "modified"),
                changed("both.txt", "deleted")
            ]
        );
        assert_eq!(
            data.conflicts,
            vec![
                changed("conflict.txt", "both modified"),
                changed("gone.txt", "deleted by us")
            ]
        );
        assert_eq!(data.untracked, vec!["/repo/notes.txt"]);
        assert_eq!(
            data.summary(),
            "4 staged, 2 modified, 1 untracked, 2 conflicted"
        );
        assert!(!data.is_clean());
    }

    #[test]
    fn a_new_repository_and_a_detached_head() {
        let data = parse_status("# branch.oid (initial)\0# branch.head main\0", virtual_path);
        assert_eq!(data.branch.as_deref(), Some("main"));
        assert_eq!(data.commit, None);
        assert!(data.is_clean());
        assert_eq!(data.summary(), "0 staged, 0 modified");
        let data = parse_status(
            "# branch.oid 0123456789\0# branch.head (detached)\0",
            virtual_path,
        );
        assert_eq!(
            (data.branch, data.commit.as_deref()),
            (None, Some("0123456"))
        );
    }
}
